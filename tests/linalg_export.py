"""irkit's `--emit=linalg` output made runnable by MLIR alone, for the oracle tests.

At the linalg stage a model's functions are MLIR's `linalg` / `tensor` / `arith` / `math` /
`func` ops except for what is irkit's by design (the `KEPT` ops of `lower-graph-to-linalg`):
the parameters (`graph.variable`, read with `graph.read`, written with `graph.assign`),
run-time checks (`graph.check`) and the structured conditional (`graph.if` / `graph.yield`).
MLIR cannot run those, so `export_function` rewrites one function, on irkit's IR and with
irkit's API (never on text), into a module MLIR's own pipeline can run:

- state becomes arguments and results: every variable the function reads or assigns is a
  trailing argument (its value on entry), in the order the model declares the variables;
  every variable it assigns is also a trailing result (its value on exit). A `graph.read`
  becomes the variable's value at that point of the function: the argument, or the value
  of the last `graph.assign` before it (an assign must sit in the function's own block,
  not inside a `graph.if` branch: that would need the branch to yield it);
- `graph.check` ops are dropped: they only fail a run, never change a value, and the
  callers pass valid inputs (irkit's interpreter, run on the same inputs, would raise
  where a check fails, so an invalid input still fails the comparison);
- a `fusion.group` (how irkit compiles its ops: one kernel) is replaced by its body;
- `graph.if %p` becomes MLIR's `scf.if` on `tensor.extract %p[]` (the i1 inside the 0-d
  predicate tensor), its regions moved over as they are and each `graph.yield` an
  `scf.yield` of the same values: the same structured conditional in MLIR's spelling.

What is left must be upstream MLIR (`MLIR_DIALECTS`); anything else (`graph.scatter_add`,
which has no rule at this level) is an `ExportError` naming the op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irkit.attributes import ArrayAttr, DictionaryAttr, StringAttr, TypeAttr
from irkit.builder import Builder
from irkit.dialects.func import ReturnOp
from irkit.dialects.graph import VariableOp
from irkit.dialects.tensor import ExtractOp
from irkit.ir import Operation, Value
from irkit.parser import parse_module
from irkit.printer import print_op
from irkit.runtime.engines import arg_specs, result_names
from irkit.symbols import lookup_symbol_in
from irkit.types import FunctionType

__all__ = ["MLIR_DIALECTS", "ExportError", "ExportedFunction", "export_function",
           "non_mlir_ops", "initial_state"]

#: op-name prefixes of the upstream MLIR dialects an exported function may use
MLIR_DIALECTS = ("builtin.", "func.", "linalg.", "tensor.", "arith.", "math.", "scf.")


class ExportError(Exception):
    """A function that cannot be handed to MLIR (what is left, and why)."""


@dataclass
class ExportedFunction:
    """One function of a linalg-stage model, rewritten to run on MLIR alone.

    `module` is a fresh `builtin.module` holding only the function, named `name`. Its
    arguments are the function's own (`inputs`, their `graph.name`s), then `variables` (one
    per variable it touches, its value on entry); its results are the function's own
    (`outputs`), then `assigned` (the values those variables hold on exit).
    `dropped_checks` and `raised_ifs` count the `graph.check`s removed and the `graph.if`s
    turned into `scf.if`."""

    module: Operation
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    variables: tuple[str, ...]
    assigned: tuple[str, ...]
    dropped_checks: int
    raised_ifs: int

    def text(self) -> str:
        """The module in generic form, what `mlir_oracle.run_mlir` is given."""
        return print_op(self.module, generic=True)


def non_mlir_ops(op: Operation) -> list[str]:
    """The names of the ops in `op` that upstream MLIR does not define, sorted, once each."""
    return sorted({o.name for o in op.walk() if not o.name.startswith(MLIR_DIALECTS)})


def _variables_by_name(model: Operation) -> dict[str, VariableOp]:
    """The model's `graph.variable`s in declaration order."""
    return {v.var_name: v for v in model.regions[0].blocks[0].ops if isinstance(v, VariableOp)}


def _variable_of(op: Operation) -> str:
    return op.properties["variable"].root


def _with_names(attrs: ArrayAttr | None, count: int, names: tuple[str, ...]) -> ArrayAttr:
    """`attrs` (per-argument or per-result dictionaries, `count` of them) extended by one
    `{graph.name = NAME}` per name."""
    old = list(attrs.value) if attrs is not None else [DictionaryAttr({})] * count
    return ArrayAttr(old + [DictionaryAttr({"graph.name": StringAttr(n)}) for n in names])


def _state_to_arguments(fn: Operation, variables: dict[str, VariableOp]) \
        -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Replace `fn`'s reads and assigns of variables by block arguments and extra results
    (see the module docstring); returns (variables passed in, variables passed out)."""
    accesses = [op for op in fn.walk(post_order=False) if op.name in ("graph.read",
                                                                      "graph.assign")]
    touched = {_variable_of(op) for op in accesses}
    passed = tuple(n for n in variables if n in touched)
    unknown = touched - set(passed)
    if unknown:
        raise ExportError(f"@{fn.sym_name.value} uses undeclared variables {sorted(unknown)}")
    entry = fn.regions[0].blocks[0]
    current: dict[str, Value] = {n: entry.add_argument(variables[n].tensor_type)
                                 for n in passed}
    assigned: list[str] = []
    for op in accesses:                     # in program order (a pre-order walk)
        name = _variable_of(op)
        if op.name == "graph.read":
            op.results[0].replace_all_uses_with(current[name])
        else:
            if op.parent_op is not fn:
                raise ExportError(f"{op.location}: a graph.assign inside a region (of "
                                  f"'{op.parent_op.name}') cannot become a result")
            current[name] = op.value
            if name not in assigned:
                assigned.append(name)
        op.erase()
    out = tuple(n for n in passed if n in assigned)       # declaration order, as the inputs
    ret = entry.terminator
    if not isinstance(ret, ReturnOp):
        raise ExportError(f"@{fn.sym_name.value} does not end in func.return")
    ret.set_operands([*ret.operands, *(current[n] for n in out)])
    old = fn.type
    fn.properties["function_type"] = TypeAttr(FunctionType(
        [*old.inputs, *(variables[n].tensor_type for n in passed)],
        [*old.results, *(variables[n].tensor_type for n in out)]))
    if passed:
        fn.properties["arg_attrs"] = _with_names(fn.properties.get("arg_attrs"),
                                                 len(old.inputs), passed)
    if out:
        fn.properties["res_attrs"] = _with_names(fn.properties.get("res_attrs"),
                                                 len(old.results), out)
    return passed, out


def _drop_checks(fn: Operation) -> int:
    checks = [op for op in fn.walk() if op.name == "graph.check"]
    for op in checks:
        op.erase()
    return len(checks)


def _raise_ifs(fn: Operation) -> int:
    """Each `graph.if` (innermost first) as an `scf.if` on the predicate's element."""
    ifs = [op for op in fn.walk() if op.name == "graph.if"]     # post-order: inner first
    for op in ifs:
        b = Builder.before(op)
        b.location = op.location
        flag = b.create(ExtractOp, op.pred, []).result
        scf_if = b.create_generic("scf.if", [flag], [r.type for r in op.results], regions=2)
        for src, dst in zip(op.regions, scf_if.regions):
            dst.take_body(src)
            for block in dst.blocks:
                term = block.terminator
                Builder.before(term).create_generic("scf.yield", term.operands)
                term.erase()
        op.replace_all_uses_with(scf_if.results)
        op.erase()
    return len(ifs)


def export_function(model: Operation, name: str) -> ExportedFunction:
    """`@name` of `model` (one model's module at the linalg stage, left unchanged) as a
    module MLIR alone can run (see the module docstring)."""
    fn = lookup_symbol_in(model, name)
    if fn is None or fn.name != "func.func":
        raise ExportError(f"no function @{name} in the model")
    fn = fn.clone()
    fn.properties.pop("sym_visibility", None)     # public: MLIR gives it a C entry point
    inputs = tuple(s.name for s in arg_specs(fn))
    outputs = tuple(result_names(fn))
    variables = _variables_by_name(model)
    _inline_groups(fn)
    passed, assigned = _state_to_arguments(fn, variables)
    checks = _drop_checks(fn)
    ifs = _raise_ifs(fn)
    module = parse_module("")
    module.regions[0].blocks[0].append(fn)
    left = non_mlir_ops(module)
    if left:
        raise ExportError(f"@{name} still holds ops MLIR does not define: {', '.join(left)}")
    return ExportedFunction(module, name, inputs, outputs, passed, assigned, checks, ifs)


def _inline_groups(fn: Operation) -> None:
    """Each `fusion.group` replaced by its body: its ops moved before it, the values its
    `fusion.yield` hands out in place of its results. A group only says how irkit compiles
    its ops (one kernel); what it computes is its body's, which MLIR runs unfused."""
    for group in [o for o in fn.walk() if o.name == "fusion.group"]:
        group.inline_captures()
        body = group.regions[0].blocks[0]
        term = body.last
        for op in list(body.ops)[:-1]:
            op.detach()
            group.parent.insert_before(group, op)
        for r, v in zip(group.results, term.operands):
            r.replace_all_uses_with(v)
        group.erase()


def initial_state(model: Operation) -> dict[str, np.ndarray]:
    """Every variable of `model` (declaration order) with its initial value, from its
    `graph.variable`'s initializer (`VariableOp.initial_value`, what every engine starts a
    model from)."""
    return {n: v.initial_value() for n, v in _variables_by_name(model).items()}
