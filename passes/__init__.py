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
    "graph-algebraic-simplify": "graph_algebraic_simplify",
    "graph-merge-matmuls": "graph_merge_matmuls",
    "graph-fold-batchnorm": "graph_fold_batchnorm",
    "autodiff": "autodiff",
    "parallel-propagate": "parallel_propagate",
    "parallel-partition": "parallel_partition",
    "parallel-simplify": "parallel_simplify",
    "parallel-data": "parallel_data",
    "parallel-pipeline": "parallel_pipeline",
    "parallel-drop-grids": "parallel_drop_grids",
    "lower-graph-to-loop": "lower_graph_to_loop",
    "plan-memory": "plan_memory",
    "promote-buffers-to-stack": "promote_buffers_to_stack",
    "linalg-generalize-named-ops": "linalg_generalize_named_ops",
    "lower-graph-to-linalg": "lower_graph_to_linalg",
    "bufferize": "bufferize",
    "commit-in-place": "commit_in_place",
    "lower-linalg-to-loop": "lower_linalg_to_loop",
    "math-polynomial-approximation": "math_polynomial_approximation",
    "linalg-fuse-elementwise-ops": "linalg_fuse_elementwise",
    "linalg-fuse": "linalg_fuse",
    "loop-vectorize": "loop_vectorize",
    "vector-streaming-stores": "vector_streaming_stores",
    "memory-forward-stores": "memory_forward_stores",
    "loop-merge-parallel-regions": "loop_merge_parallel_regions",
    "linalg-matmul-blis": "linalg_matmul_blis",
    "loop-tile": "loop_tile",
    "loop-interchange": "loop_interchange",
    "loop-unroll": "loop_unroll",
    "loop-unroll-and-jam": "loop_unroll_and_jam",
    "loop-reduction-interchange": "loop_reduction_interchange",
    "gpu-map-parallel-loops": "gpu_map_parallel_loops",
    "gpu-kernel-outlining": "gpu_kernel_outlining",
    "gpu-matmul-tiles": "gpu_matmul_tiles",
    "gpu-block-reduce": "gpu_block_reduce",
}


def register_all() -> None:
    import importlib.util
    from irkit.pass_manager import register_lazy_pass
    for name, module in _ALL.items():
        full = f"irkit.passes.{module}"
        if importlib.util.find_spec(full) is not None:
            register_lazy_pass(name, full)
