"""irkit.passes: one module per pass, named after its flag (`cse` -> `cse.py`).

`register_all()` makes every pass known by name; a pass's module is imported the first time
a pipeline names it, so `irkit-opt -p cse` never imports the inliner.
"""

_ALL = {
    "canonicalize": "canonicalize",
    "cse": "cse",
    "dce": "dce",
    "symbol-dce": "symbol_dce",
    "inline": "inline",
    "loop-invariant-code-motion": "loop_invariant_code_motion",
    "strip-debuginfo": "strip_debuginfo",
    "graph-raise-control-flow": "graph_raise_control_flow",
    "autodiff": "autodiff",
    "lower-graph-to-loop": "lower_graph_to_loop",
    "plan-memory": "plan_memory",
    "linalg-generalize-named-ops": "linalg_generalize_named_ops",
    "lower-graph-to-linalg": "lower_graph_to_linalg",
    "bufferize": "bufferize",
    "lower-linalg-to-loop": "lower_linalg_to_loop",
}


def register_all() -> None:
    import importlib.util
    from irkit.pass_manager import register_lazy_pass
    for name, module in _ALL.items():
        full = f"irkit.passes.{module}"
        if importlib.util.find_spec(full) is not None:
            register_lazy_pass(name, full)
