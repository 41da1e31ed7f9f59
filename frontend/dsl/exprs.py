"""Expressions -> graph ops: operators, builtin calls, indexing, and `if` as switch/merge.

Every op is made by `make`: it looks the op class up by name (the op families are separate
modules), runs the class's shape function on the operands' symbolic specs, so a mismatch is
reported at the DSL expression in the user's terms (`cannot broadcast f32[N, 784] with
f32[10]`), then builds the op with `create` and inserts it.

`if c { a } else { b }` lowers to TensorFlow 1's dataflow control flow:

1. c must be a scalar i1. Each value from outside that a branch reads is switched once on
   c (`graph.switch v, c` -> (false, true)); the then-branch reads the true output, the
   else-branch the false one, so the untaken branch only ever sees dead values.
2. A branch result that depends on no switched value (a literal, a param read...) would
   be live on both sides, so it is switched itself.
3. The result is `graph.merge else, then`: whichever input is live.
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import numpy_dtype
from irkit.diagnostics import IRError
from irkit.dialects.graph import ConstantOp, ShapeError, TensorSpec, unify_dim
from irkit.ir import OpResult
from irkit.opdef import lookup_op
from irkit.types import F32, I1, I32

from irkit.frontend.dsl import syntax as ast
from irkit.frontend.dsl.builtins import BINARY_OPS, BOOLS, BUILTINS
from irkit.frontend.dsl.values import (
    Binding, Lit, Scope, Val, bind_args, check_literal_fits, default_dtype, literal_shape,
    static_int, static_value,
)

#: `stop` of a slice that runs to the end of the axis
TO_END = 9223372036854775807


class Gate:
    """The switches of one `if`: outside value -> (false output, true output)."""

    def __init__(self, cond: Val, pos) -> None:
        self.cond = cond
        self.pos = pos
        self.cache: dict[int, tuple] = {}
        self.outputs: set[int] = set()      # ids of every switch output

    def switch(self, lw, v: Val, side: int) -> Val:
        pair = self.cache.get(id(v.value))
        if pair is None:
            pair = tuple(lw.make("graph.switch", [v, self.cond], {}, self.pos))
            self.cache[id(v.value)] = pair
            self.outputs.update(id(p.value) for p in pair)
        return pair[side]


def _defaults(cls) -> dict:
    """The op's properties with defaults, as Python values (shape functions expect them)."""
    out = {}
    for pd in cls.spec.props:
        to_py = getattr(pd, "to_py", None)
        d = getattr(pd, "default", None)
        if to_py is not None and d is not None and hasattr(d, "_key"):
            out[pd.name] = to_py(d)
    return out


class ExprLowering:
    """Mixed into `lower.Lowering`, which provides errs, loc, emit, scopes and inlining."""

    # ----- making ops ------------------------------------------------------------------

    def op_class(self, name: str, pos):
        cls = lookup_op(name)
        if cls is None:
            raise self.errs.error(pos, f"'{name}' is not available: no such op is registered")
        return cls

    def make(self, name: str, operands: list, props: dict, pos, infer_props: dict | None = None,
             infer_args: list | None = None) -> list[Val]:
        """Build op `name` from operands (Vals, or lists of Vals for a variadic operand)."""
        cls = self.op_class(name, pos)
        flat = [v for o in operands for v in (o if isinstance(o, list) else [o])]
        specs = infer_args if infer_args is not None else [v.spec for v in flat]
        full = _defaults(cls)
        full.update(infer_props if infer_props is not None else props)
        try:
            out = cls.infer(specs, full)
        except ShapeError as e:
            raise self.errs.error(pos, str(e)) from None
        except Exception as e:          # a shape function that did not expect this input
            raise self.errs.error(pos, f"{name} rejected its operands: {e}") from None
        args = [[v.value for v in o] if isinstance(o, list) else o.value for o in operands]
        try:
            op = cls.create(*args, location=self.loc(pos), **props)
        except IRError as e:
            raise self.errs.error(pos, e.diagnostic.message) from None
        except Exception as e:          # an op that rejects these properties some other way
            raise self.errs.error(pos, f"cannot build {name}: {e}") from None
        self.emit(op)
        return [Val(r, s) for r, s in zip(op.results, out)]

    def materialize(self, lit: Lit, dtype=None) -> Val:
        dtype = dtype or default_dtype(lit)
        check_literal_fits(lit, dtype, self.errs)
        shape = literal_shape(lit.value, lit.pos, self.errs)
        arr = np.asarray(lit.value, dtype=numpy_dtype(dtype)).reshape(shape)
        op = self.emit(ConstantOp.create(arr, dtype, location=self.loc(lit.pos)))
        return Val(op.results[0], TensorSpec(arr.shape, dtype))

    def as_val(self, v) -> Val:
        return self.materialize(v) if isinstance(v, Lit) else v

    def coerce(self, values: list) -> list[Val]:
        """Literals take the element type of the first tensor among `values`."""
        dtype = next((v.spec.dtype for v in values if isinstance(v, Val)), None)
        if dtype is None and values:
            kinds = {default_dtype(v) for v in values}
            dtype = F32 if F32 in kinds else I32 if I32 in kinds else I1
        return [self.materialize(v, dtype) if isinstance(v, Lit) else v for v in values]

    # ----- expressions -------------------------------------------------------------------

    def expr(self, node, scope):
        """Lower one expression to a `Val`, or a `Lit` if it is a literal."""
        if isinstance(node, ast.Num):
            return Lit(node.value, node.pos)
        if isinstance(node, ast.Name):
            return self.name(node, scope)
        if isinstance(node, ast.BinOp):
            op, props = BINARY_OPS[node.op]
            a, b = self.coerce([self.expr(node.lhs, scope), self.expr(node.rhs, scope)])
            return self.make(op, [a, b], props, node.pos)[0]
        if isinstance(node, ast.UnOp):
            return self.unary(node, scope)
        if isinstance(node, ast.Call):
            values = self.call(node, scope)
            if len(values) != 1:
                raise self.errs.error(node.pos, f"'{node.func}' gives {len(values)} values; "
                                                "assign them with `a, b = ...`")
            return values[0]
        if isinstance(node, ast.ListLit):
            return self.list_value(node, scope)
        if isinstance(node, ast.Index):
            return self.index(node, scope)
        if isinstance(node, ast.IfExpr):
            return self.if_expr(node, scope)
        raise self.errs.error(node.pos, "a slice is only allowed inside [ ]")

    def multi(self, node, scope) -> list:
        """The values of the right side of `a, b = ...` (a call giving several values)."""
        if isinstance(node, ast.Call):
            return self.call(node, scope)
        return [self.expr(node, scope)]

    def name(self, node: ast.Name, scope):
        if node.id in BOOLS:
            return Lit(BOOLS[node.id], node.pos)
        b = self.resolve(scope, node.id)
        if b is not None:
            return b.value
        if node.id in BUILTINS or node.id in self.fns:
            raise self.errs.error(node.pos, f"'{node.id}' is a function; call it as "
                                            f"{node.id}(...)")
        err = self.errs.unknown(node.pos, "name", node.id, scope.visible())
        later = self.later.get(node.id)
        if later is not None and later > node.pos:
            err.note(f"'{node.id}' is defined later, here", self.errs.loc(later))
        raise err

    def resolve(self, scope, name: str):
        """The binding of `name`, switched through the gate of every `if` branch between
        the use and the definition (innermost last)."""
        if name in scope.names:
            return scope.names[name]
        if scope.parent is None:
            return None
        b = self.resolve(scope.parent, name)
        if b is not None and scope.gate is not None and isinstance(b.value, Val):
            b = Binding(scope.gate.switch(self, b.value, scope.side), b.pos, b.kind)
        return b

    def unary(self, node: ast.UnOp, scope):
        v = self.expr(node.operand, scope)
        if node.op == "+":
            return v
        if node.op == "-":
            if isinstance(v, Lit) and not _has_bool(v.value):
                return Lit(_negate(v.value), node.pos)
            return self.make("graph.neg", [self.as_val(v)], {}, node.pos)[0]
        if isinstance(v, Lit):
            v = self.materialize(v, I1)
        return self.make("graph.not", [v], {}, node.pos)[0]

    def list_value(self, node: ast.ListLit, scope):
        items = [self.expr(x, scope) for x in node.items]
        if all(isinstance(x, Lit) for x in items):
            lit = Lit([x.value for x in items], node.pos)
            literal_shape(lit.value, node.pos, self.errs)
            return lit
        # A list of tensors stacks them along a new first axis.
        vals = self.coerce(items)
        spec = vals[0].spec
        for v, x in zip(vals, node.items):
            if v.spec != spec:
                raise self.errs.error(x.pos, f"list elements must have one type: {v.spec} "
                                             f"and {spec}")
        shape = [d if type(d) is int else -1 for d in spec.shape]
        if shape.count(-1) > 1:
            raise self.errs.error(node.pos, f"cannot stack {spec}: more than one dynamic "
                                            "dimension")
        rows = [self.make("graph.reshape", [v], {"shape": [1] + shape}, x.pos)[0]
                for v, x in zip(vals, node.items)]
        rows = [Val(r.value, TensorSpec((1,) + spec.shape, spec.dtype)) for r in rows]
        out = self.make("graph.concat", [rows], {"axis": 0}, node.pos)[0]
        return Val(out.value, TensorSpec((len(rows),) + spec.shape, spec.dtype))

    # ----- calls -------------------------------------------------------------------------

    def call(self, node: ast.Call, scope) -> list:
        fn = self.fns.get(node.func)
        if fn is not None:
            return self.inline(fn, node, scope)
        b = BUILTINS.get(node.func)
        if b is None:
            raise self.errs.unknown(node.pos, "function", node.func,
                                    list(BUILTINS) + list(self.fns))
        bound = bind_args(node, [(a.name, a.default) for a in b.args], self.errs)
        tensors, nums, statics = {}, [], {}
        for a in b.args:
            v = bound[a.name]
            what = f"argument '{a.name}' of '{b.name}'"
            if a.kind in ("tensor", "num"):
                tensors[a.name] = self.expr(v, scope)
                if a.kind == "num":
                    nums.append(a.name)
            elif a.kind == "tensors":
                if not isinstance(v, ast.ListLit) or not v.items:
                    raise self.errs.error(v.pos, f"{what} must be a list of tensors such as "
                                                 "[a, b]")
                statics[a.name] = self.coerce([self.expr(x, scope) for x in v.items])
            elif isinstance(v, ast.Node):
                statics[a.name] = static_value(v, a.kind, self.errs, what)
            else:
                statics[a.name] = (v, v) if a.kind == "pair" and isinstance(v, int) else v
        for k, v in zip(nums, self.coerce([tensors[k] for k in nums])):
            tensors[k] = v
        tensors = {k: self.as_val(v) for k, v in tensors.items()}
        recipe = getattr(self, f"_recipe_{b.recipe}")
        return recipe(b, tensors, statics, bound, node)

    def _recipe_op(self, b, tensors, statics, bound, node) -> list:
        props = {}
        for a in b.args:
            if a.name in statics and statics[a.name] is not None:
                props[a.prop or a.name] = statics[a.name]
        return self.make(b.op, list(tensors.values()), props, node.pos)

    def _recipe_cast(self, b, tensors, statics, bound, node) -> list:
        x, dtype = tensors["x"], statics["dtype"]
        cls = self.op_class(b.op, node.pos)
        spec = cls.infer([x.spec], {"dtype": dtype})[0]
        return [Val(self.emit(cls.create(x.value, dtype, location=self.loc(node.pos)))
                    .results[0], spec)]

    def _recipe_concat(self, b, tensors, statics, bound, node) -> list:
        return self.make(b.op, [statics["xs"]], {"axis": statics["axis"]}, node.pos)

    def _recipe_reshape(self, b, tensors, statics, bound, node) -> list:
        shape = []
        for d, pos in statics["shape"]:
            if isinstance(d, str):
                raise self.errs.error(pos, f"reshape sizes must be integers: write -1 for the "
                                           f"dynamic dimension '{d}'")
            shape.append(d)
        return self.make(b.op, [tensors["x"]], {"shape": shape}, node.pos)

    def _recipe_broadcast_to(self, b, tensors, statics, bound, node) -> list:
        shape, symbolic, sizes = [], [], []
        for d, pos in statics["shape"]:
            if isinstance(d, str):
                src = self.sym_sources.get(d)
                if src is None:
                    raise self.errs.unknown(pos, "dimension symbol", d, self.sym_sources)
                arg, axis = src
                sizes.append(self.make("graph.dim", [arg], {"axis": axis}, pos)[0])
                shape.append(-1)
            elif d < 0:
                raise self.errs.error(pos, f"broadcast_to sizes must be non-negative; name a "
                                           f"dynamic size by its symbol, got {d}")
            else:
                shape.append(d)
            symbolic.append(d)
        x = tensors["x"]
        return self.make(b.op, [x, sizes], {"shape": shape}, node.pos,
                         infer_props={"shape": tuple(symbolic)},
                         infer_args=[x.spec] + [s.spec for s in sizes])

    def _recipe_slice(self, b, tensors, statics, bound, node) -> list:
        x = tensors["x"]
        r = x.spec.rank
        parts = {}
        for key, fill in (("start", 0), ("stop", TO_END), ("step", 1)):
            v = statics[key] or ()
            if len(v) > r:
                raise self.errs.error(bound[key].pos, f"'{key}' has {len(v)} entries, but "
                                                      f"{x.spec} has {r} axes")
            parts[key + "s"] = tuple(v) + (fill,) * (r - len(v))
        return self.make(b.op, [x], parts, node.pos)

    # ----- indexing ------------------------------------------------------------------------

    def index(self, node: ast.Index, scope) -> Val:
        """`x[1:3, 0]`: one graph.slice, then the int-indexed axes dropped."""
        x = self.expr(node.value, scope)
        if isinstance(x, Lit):
            return self._index_literal(x, node)
        r = x.spec.rank
        if len(node.subs) > r:
            raise self.errs.error(node.pos, f"too many indices for {x.spec}: {len(node.subs)}")
        starts, stops, steps, drop = [], [], [], []
        for axis, s in enumerate(node.subs):
            if isinstance(s, ast.Slice):
                step = 1 if s.step is None else static_int(s.step, self.errs, "a slice step")
                if step == 0:
                    raise self.errs.error(s.step.pos, "a slice step cannot be zero")
                start = static_int(s.start, self.errs, "a slice start") if s.start else \
                    (0 if step > 0 else -1)
                stop = static_int(s.stop, self.errs, "a slice stop") if s.stop else \
                    (TO_END if step > 0 else -TO_END)
                starts.append(start)
                stops.append(stop)
                steps.append(step)
                continue
            i = static_int(s, self.errs, "an index")
            d = x.spec.shape[axis]
            if type(d) is int and not -d <= i < d:
                raise self.errs.error(s.pos, f"index {i} is out of range for axis {axis} of "
                                             f"size {d}")
            starts.append(i)
            stops.append(min(i + 1, TO_END) if i != -1 else TO_END)
            steps.append(1)
            drop.append(axis)
        n = r - len(node.subs)
        v = self.make("graph.slice", [x], {"starts": starts + [0] * n,
                                           "stops": stops + [TO_END] * n,
                                           "steps": steps + [1] * n}, node.pos)[0]
        if not drop:
            return v
        kept = tuple(d for i, d in enumerate(v.spec.shape) if i not in drop)
        if sum(1 for d in kept if type(d) is not int) <= 1:
            out = self.make("graph.reshape", [v], {"shape": [d if type(d) is int else -1
                                                             for d in kept]}, node.pos)[0]
            return Val(out.value, TensorSpec(kept, v.spec.dtype))
        return self.make("graph.reduce_sum", [v], {"axes": drop}, node.pos)[0]

    def _index_literal(self, lit: Lit, node: ast.Index) -> Lit:
        """Indexing a literal (a const table) stays a literal, so it still takes the type
        of what it meets."""
        arr = np.empty(literal_shape(lit.value, lit.pos, self.errs), dtype=object)
        arr[...] = lit.value if arr.ndim else None
        if not arr.ndim:
            raise self.errs.error(node.pos, "cannot index a scalar")
        if len(node.subs) > arr.ndim:
            raise self.errs.error(node.pos, f"too many indices for a literal of rank {arr.ndim}")
        key = []
        for axis, s in enumerate(node.subs):
            if isinstance(s, ast.Slice):
                parts = [static_int(p, self.errs, "a slice bound") if p is not None else None
                         for p in (s.start, s.stop, s.step)]
                if parts[2] == 0:
                    raise self.errs.error(s.pos, "a slice step cannot be zero")
                key.append(slice(*parts))
            else:
                i = static_int(s, self.errs, "an index")
                if not -arr.shape[axis] <= i < arr.shape[axis]:
                    raise self.errs.error(s.pos, f"index {i} is out of range for axis {axis} of "
                                                 f"size {arr.shape[axis]}")
                key.append(i)
        out = arr[tuple(key)]
        return Lit(out.tolist() if isinstance(out, np.ndarray) else out, node.pos)

    # ----- if ------------------------------------------------------------------------------

    def if_expr(self, node: ast.IfExpr, scope) -> Val:
        c = self.expr(node.cond, scope)
        c = self.materialize(c, I1) if isinstance(c, Lit) else c
        if c.spec.rank != 0 or c.spec.dtype is not I1:
            raise self.errs.error(node.cond.pos, f"the condition of 'if' must be a scalar i1 "
                                                 f"(a comparison such as sum(x) < sum(y)), got "
                                                 f"{c.spec}")
        gate = Gate(c, node.pos)
        orelse = node.orelse if isinstance(node.orelse, ast.Block) else \
            ast.Block(node.orelse.pos, [], node.orelse)
        t0 = len(self.emitted)
        then_v = self.branch(node.then, scope, gate, 1)
        t1 = len(self.emitted)
        else_v = self.branch(orelse, scope, gate, 0)
        then_ops = {id(op) for op in self.emitted[t0:t1]}
        else_ops = {id(op) for op in self.emitted[t1:]}
        then_v, else_v = self.coerce([then_v, else_v])
        t, e = then_v.spec, else_v.spec
        shape = None
        if t.dtype is e.dtype and t.rank == e.rank:
            try:
                shape = tuple(unify_dim(a, b) for a, b in zip(t.shape, e.shape))
            except ValueError:
                shape = None
        if shape is None:
            raise self.errs.error(node.pos, f"the branches of 'if' give different types: {t} "
                                            f"(then) and {e} (else)")
        then_v = self._gated(then_v, gate, then_ops, 1)
        else_v = self._gated(else_v, gate, else_ops, 0)
        merged = self.make("graph.merge", [[else_v, then_v]], {}, node.pos)[0]
        return Val(merged.value, TensorSpec(shape, t.dtype))

    def branch(self, block: ast.Block, scope, gate: Gate, side: int):
        inner = Scope(scope, gate, side)
        for s in block.stmts:
            self.statement(s, inner, "block")
        return self.expr(block.value, inner)

    def _gated(self, v: Val, gate: Gate, ops: set, side: int) -> Val:
        """`v`, switched if nothing it depends on among the branch's `ops` is a switch
        output (a walk up the operands, stopping at ops made outside the branch)."""
        stack, seen = [v.value], set()
        while stack:
            value = stack.pop()
            if id(value) in gate.outputs:
                return v
            owner = value.owner if isinstance(value, OpResult) else None
            if owner is None or id(owner) not in ops or id(owner) in seen:
                continue
            seen.add(id(owner))
            stack.extend(owner.operands)
        return gate.switch(self, v, side)


def _negate(v):
    return [_negate(x) for x in v] if isinstance(v, list) else -v


def _has_bool(v) -> bool:
    return any(_has_bool(x) for x in v) if isinstance(v, list) else isinstance(v, bool)
