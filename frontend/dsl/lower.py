"""AST -> graph IR: one nested `module @M` per model, holding its variables, `@forward` and,
for a model with a `train` clause, `@train_step`.

Algorithm, per model:

1. The inputs become `@forward`'s arguments (declaration order) with `graph.name` and
   `graph.dims` arg attributes; each symbolic dim remembers the first input axis that binds
   it (a `broadcast_to` to `[N, 10]` reads its size there with `graph.dim`).
2. Statements run in order. A `param` becomes a `graph.variable` symbol (its initializer and
   arguments) and a `graph.read` at the declaration; `const` binds an untyped literal; `a =
   expr` lowers the expression (see `exprs.py`), binding the name once: a second binding
   is an error with a note at the first.
3. `fn` calls are inlined: the arguments are lowered in the caller, the body in a fresh scope
   that sees only its parameters and file-level consts. Ops made inside carry
   `callsite(body-expression at call)` locations; an error inside gets a note at the call.
4. `output` names become the results (`graph.name` res attrs) of one `func.return`.
5. Each `grad L wrt a, b` (checked: scalar float L, a and b inputs or params) becomes an
   `autodiff.grad %L wrt %a, %b` before the return, whose results are extra outputs `d_a`,
   `d_b`: the IR states the request, and the `autodiff` pass builds the backward graph.
6. `train L with OPT(...)` becomes a second function `@train_step`, taking the same inputs
   and returning the loss: a copy of the forward ops L depends on (and the reads of every
   param), `autodiff.grad` of L with respect to each floating-point param, and the update of
   `irkit.frontend.optimizers` (graph ops, state variables, `graph.assign` of each param).
"""

from __future__ import annotations

from irkit.attributes import (
    ArrayAttr, CallSiteLoc, DictionaryAttr, FileLineColLoc, IntegerAttr, StringAttr,
    SymbolRefAttr, TypeAttr,
)
from irkit.ad_rules import captured_values
from irkit.builder import Builder
from irkit.dialects.builtin import ModuleOp
from irkit.dialects.func import FuncOp, ReturnOp
from irkit.dialects.graph import INITIALIZERS, ReadOp, TensorSpec, VariableOp, is_float
from irkit.dialects.autodiff import GradOp
from irkit.frontend.optimizers import OPTIMIZERS, Slot, UpdateBuilder
from irkit.types import I64, FunctionType

from irkit.frontend.dsl import syntax as ast
from irkit.frontend.dsl.builtins import BUILTINS, DTYPES, INIT_POSITIONAL, REQUIRED
from irkit.frontend.dsl.exprs import ExprLowering
from irkit.frontend.dsl.placements import mark_stage, model_grid, sharding, stage_index
from irkit.frontend.dsl.values import Binding, Errors, Lit, Scope, Val, bind_args, static_number


class Lowering(ExprLowering):
    """Lowers one program; `program()` returns the top-level module."""

    def __init__(self, filename: str) -> None:
        self.errs = Errors(filename)
        self.filename = filename
        self.fns: dict[str, ast.FnDef] = {}
        self.globals = Scope()
        self.builder: Builder | None = None
        self.emitted: list = []             # every op made, in order (for `if` dependence)
        self.call_stack: list = []          # [(fn name, location of the call)]
        self.sym_sources: dict = {}         # dim symbol -> (input Val, axis)
        self.later: dict = {}               # model-level name -> first definition pos
        self.grid = None                    # the model's parallel.grid op, if declared

    # ----- locations and emission ----------------------------------------------------------

    def loc(self, pos):
        here = FileLineColLoc(self.filename, pos[0], pos[1])
        return CallSiteLoc(here, self.call_stack[-1][1]) if self.call_stack else here

    def emit(self, op):
        self.builder.insert(op)
        self.emitted.append(op)
        return op

    # ----- program -------------------------------------------------------------------------

    def program(self, prog: ast.Program) -> ModuleOp:
        top = ModuleOp.create_empty(location=FileLineColLoc(self.filename, 1, 1))
        models: dict[str, ast.Model] = {}
        for item in prog.items:
            if isinstance(item, ast.FnDef):
                if item.name in BUILTINS:
                    raise self.errs.error(item.pos, f"fn '{item.name}' has the name of a "
                                                    "builtin function")
                self._unique(self.fns, item, f"fn '{item.name}'")
                self.fns[item.name] = item
            elif isinstance(item, ast.Model):
                self._unique(models, item, f"model '{item.name}'")
                models[item.name] = item
            elif isinstance(item, ast.Const):
                self.bind(self.globals, item.name, self.const_value(item, self.globals),
                          item.pos, "const")
            else:
                raise self.errs.error(item.pos, f"'{_keyword(item)}' is only allowed inside "
                                                "a model or fn")
        for fn in self.fns.values():
            names = {}
            for p, ppos in fn.params:
                if p in names:
                    raise self.errs.error(ppos, f"fn '{fn.name}' has two parameters named "
                                                f"'{p}'")
                names[p] = ppos
        if not models:
            raise self.errs.error((1, 1), "the file defines no model")
        for m in models.values():
            top.block.append(self.model(m))
        return top

    def _unique(self, table: dict, item, what: str) -> None:
        if item.name in table:
            raise self.errs.error(item.pos, f"redefinition of {what}").note(
                f"'{item.name}' was first defined here", self.errs.loc(table[item.name].pos))

    # ----- models ----------------------------------------------------------------------

    def model(self, m: ast.Model) -> ModuleOp:
        mod = ModuleOp.create_empty(location=self.errs.loc(m.pos))
        mod.properties["sym_name"] = StringAttr(m.name)
        inputs = [s for s in m.body if isinstance(s, ast.Input)]
        specs = [self.input_spec(s) for s in inputs]
        func = FuncOp.create("forward", [s.to_type() for s in specs], [],
                             location=self.errs.loc(m.pos))
        mod.block.append(func)
        self.grid = model_grid(m.body, self.errs)
        if self.grid is not None:
            mod.block.insert_before(func, self.grid)
        placed: dict = {}                   # param name -> its #parallel.sharding
        stage = None
        self.builder = Builder.at_end(func.entry)
        self.sym_sources = {}
        self.later = {}
        for s in m.body:
            for name, pos in _defined_names(s):
                self.later.setdefault(name, pos)
        scope = Scope(self.globals)
        outputs, grads, train = [], [], None
        arg_attrs = []
        for s in m.body:
            if isinstance(s, ast.Input):
                i = len(arg_attrs)
                arg_attrs.append(self.input(s, Val(func.args[i], specs[i]), scope))
            elif isinstance(s, ast.Param):
                self.param(s, mod, func, scope)
                if s.placement is not None:
                    placed[s.name] = sharding(s.placement, self.grid, self.param_spec(s),
                                              f"param '{s.name}'", self.errs).to_attr()
            elif isinstance(s, ast.GridDecl):
                continue
            elif isinstance(s, ast.Stage):
                stage = stage_index(s, stage, self.errs)
                self.stage(s, stage, scope)
            elif isinstance(s, ast.Output):
                for name, pos in s.names:
                    if any(name == o for o, _ in outputs):
                        raise self.errs.error(pos, f"'{name}' is already an output")
                    outputs.append((name, pos))
            elif isinstance(s, ast.Grad):
                grads.append(s)
            elif isinstance(s, ast.Train):
                if train is not None:
                    raise self.errs.error(s.pos, "a model has at most one 'train' statement") \
                        .note("the first one is here", self.errs.loc(train.pos))
                train = s
            else:
                self.statement(s, scope, "model")
        if not outputs:
            raise self.errs.error(m.pos, f"model '{m.name}' has no output; add `output NAME`")
        values = [self.as_val(self.lookup_final(scope, name, pos))
                  for name, pos in outputs]
        first = next(s for s in m.body if isinstance(s, ast.Output))
        for g in grads:
            for name, pos, v in self.grad(g, scope):
                prev = next((p for o, p in outputs if o == name), None)
                if prev is not None:
                    raise self.errs.error(pos, f"the gradient with respect to '{name[2:]}' is "
                                               f"output '{name}', but '{name}' is already an "
                                               "output").note("the output is named here",
                                                              self.errs.loc(prev))
                outputs.append((name, pos))
                values.append(v)
        self.emit(ReturnOp.build([v.value for v in values], result_types=[],
                                 location=self.errs.loc(first.pos)))
        func.properties["function_type"] = TypeAttr(FunctionType(
            [s.to_type() for s in specs], [v.value.type for v in values]))
        if arg_attrs:
            func.properties["arg_attrs"] = ArrayAttr(arg_attrs)
        if placed:
            mod.attributes["parallel.variables"] = DictionaryAttr(placed)
        func.properties["res_attrs"] = ArrayAttr([DictionaryAttr({"graph.name": StringAttr(n)})
                                                  for n, _ in outputs])
        if train is not None:
            self.train(train, scope, mod, func)
        return mod

    def input(self, s: ast.Input, arg: Val, scope: Scope) -> DictionaryAttr:
        """Bind an input to its argument; return the argument's attributes."""
        arg.value.location = self.errs.loc(s.pos)
        self.bind(scope, s.name, arg, s.pos, "input")
        for axis, d in enumerate(arg.spec.shape):
            if isinstance(d, str):
                self.sym_sources.setdefault(d, (arg, axis))
        dims = [StringAttr(d) if isinstance(d, str) else IntegerAttr(d, I64)
                for d in arg.spec.shape]
        attrs = {"graph.name": StringAttr(s.name), "graph.dims": ArrayAttr(dims)}
        if s.placement is not None:
            attrs["parallel.sharding"] = sharding(s.placement, self.grid, arg.spec,
                                                  f"input '{s.name}'", self.errs).to_attr()
        return DictionaryAttr(attrs)

    def stage(self, s: ast.Stage, index: int, scope: Scope) -> None:
        """The statements of `stage N { ... }`, their ops marked with the stage."""
        first = len(self.emitted)
        for inner in s.body:
            if not isinstance(inner, (ast.Assign, ast.Const)):
                raise self.errs.error(inner.pos, f"'{_keyword(inner)}' is not allowed in a "
                                                 "stage; a stage holds assignments")
            self.statement(inner, scope, "model")
        mark_stage(self.emitted[first:], index)

    def input_spec(self, s: ast.Input) -> TensorSpec:
        dtype = self.dtype(s.type)
        dims = []
        for d, pos in s.type.dims:
            if isinstance(d, float):
                raise self.errs.error(pos, f"a dimension must be an integer or a symbol, got {d}")
            if isinstance(d, int) and d >= 1 << 62:
                raise self.errs.error(pos, f"dimension {d} is too large")
            dims.append(d)
        return TensorSpec(tuple(dims), dtype)

    def dtype(self, t: ast.TypeExpr):
        if t.dtype not in DTYPES:
            raise self.errs.unknown(t.pos, "element type", t.dtype, list(DTYPES), listing=True)
        return DTYPES[t.dtype]

    def param_spec(self, s: ast.Param) -> TensorSpec:
        """The declared type of a param (checked by `param`)."""
        return TensorSpec(tuple(d for d, _ in s.type.dims), self.dtype(s.type))

    def param(self, s: ast.Param, mod, func, scope: Scope) -> None:
        dtype = self.dtype(s.type)
        dims = []
        for d, pos in s.type.dims:
            if isinstance(d, str):
                raise self.errs.error(pos, f"param '{s.name}' must have a static shape: '{d}' "
                                           "is a symbolic dimension (only inputs may have them)")
            if isinstance(d, float):
                raise self.errs.error(pos, f"a dimension must be an integer, got {d}")
            if d >= 1 << 31:
                raise self.errs.error(pos, f"dimension {d} is too large for a param")
            dims.append(d)
        spec = TensorSpec(tuple(dims), dtype)
        init = s.init
        if init.func not in INITIALIZERS:
            raise self.errs.unknown(init.pos, "initializer", init.func, list(INITIALIZERS),
                                    listing=True)
        known = INITIALIZERS[init.func]
        order = INIT_POSITIONAL.get(init.func, tuple(known))
        params = [(k, REQUIRED if known[k] is None else None) for k in order]
        bound = bind_args(init, params, self.errs, f"initializer '{init.func}'")
        args = {}
        for k, node in bound.items():
            if node is None:
                continue
            v = static_number(node, self.errs, f"argument '{k}' of '{init.func}'")
            if isinstance(known[k], int) and type(v) is not int:
                raise self.errs.error(node.pos, f"argument '{k}' of '{init.func}' must be an "
                                                "integer")
            args[k] = v if isinstance(known[k], int) else float(v)
        if not is_float(dtype) and init.func in ("normal", "uniform", "glorot", "he"):
            raise self.errs.error(init.pos, f"initializer '{init.func}' needs a floating-point "
                                            f"param, got {spec}")
        self.bind(scope, s.name, None, s.pos, "param")        # redefinition check first
        var = VariableOp.create(s.name, spec.to_type(), init.func, args,
                                location=self.errs.loc(s.pos))
        mod.block.insert_before(func, var)
        read = ReadOp.build(variable=SymbolRefAttr(s.name), result_types=[spec.to_type()],
                            location=self.errs.loc(s.pos))
        self.emit(read)
        scope.names[s.name] = Binding(Val(read.results[0], spec), s.pos, "param")

    # ----- statements --------------------------------------------------------------------

    def statement(self, s, scope: Scope, where: str) -> None:
        """The statements shared by models, fn bodies and `if` blocks."""
        if isinstance(s, ast.Assign):
            if len(s.names) == 1:
                name, pos = s.names[0]
                self.bind(scope, name, self.expr(s.value, scope), pos, "value")
                return
            values = self.multi(s.value, scope)
            if len(values) != len(s.names):
                raise self.errs.error(s.value.pos, f"the right side gives {_n(len(values))}, "
                                                   f"but {len(s.names)} names are assigned")
            for (name, pos), v in zip(s.names, values):
                self.bind(scope, name, v, pos, "value")
        elif isinstance(s, ast.Const):
            self.bind(scope, s.name, self.const_value(s, scope), s.pos, "const")
        else:
            allowed = {"model": "a fn", "fn": "a model", "block": "a model"}[where]
            if isinstance(s, ast.Return):
                allowed = "a fn (as its last statement)"
            raise self.errs.error(s.pos, f"'{_keyword(s)}' is only allowed in {allowed}")

    def bind(self, scope: Scope, name: str, value, pos, kind: str) -> None:
        prev = scope.find(name)
        if prev is not None:
            raise self.errs.error(pos, f"redefinition of '{name}'").note(
                f"'{name}' was first defined here", self.errs.loc(prev.pos))
        if name in ("true", "false", "True", "False"):
            raise self.errs.error(pos, f"cannot assign to '{name}'")
        scope.names[name] = Binding(value, pos, kind)

    def const_value(self, s: ast.Const, scope: Scope) -> Lit:
        """A const is a literal: numbers, lists, signs and other consts' names (nothing
        that would make an op)."""
        v = self.expr(s.value, scope) if _literal_syntax(s.value) else None
        if not isinstance(v, Lit):
            raise self.errs.error(s.value.pos, "a const must be a number or a (nested) list of "
                                               "numbers")
        return v

    def lookup_final(self, scope: Scope, name: str, pos):
        """The value bound to `name` at the end of a model (outputs, grad, train)."""
        b = scope.find(name)
        if b is None:
            raise self.errs.unknown(pos, "name", name, scope.visible())
        return b.value

    # ----- grad and train --------------------------------------------------------------

    def _scalar_loss(self, scope: Scope, name: str, pos, what: str) -> Val:
        v = self.lookup_final(scope, name, pos)
        spec = v.spec if isinstance(v, Val) else None
        if spec is None or spec.rank != 0 or not is_float(spec.dtype):
            got = spec if spec is not None else "a literal"
            raise self.errs.error(pos, f"{what} needs a scalar float value, but '{name}' is "
                                       f"{got}")
        return v

    def grad(self, g: ast.Grad, scope: Scope) -> list[tuple[str, tuple, Val]]:
        """Emit `autodiff.grad` for `grad L wrt a, b`; return the outputs it adds, as
        (name `d_a`, position of `a`, gradient)."""
        loss = self._scalar_loss(scope, g.of[0], g.of[1], "grad")
        xs = []
        for name, pos in g.wrt:
            b = scope.find(name)
            if b is None:
                raise self.errs.unknown(pos, "name", name, scope.visible())
            if b.kind not in ("input", "param"):
                what = "a const" if b.kind == "const" else "a computed value"
                raise self.errs.error(pos, f"grad is taken with respect to inputs and params; "
                                           f"'{name}' is {what}")
            if not is_float(b.value.spec.dtype):
                raise self.errs.error(pos, f"cannot differentiate with respect to '{name}' of "
                                           f"type {b.value.spec}: not floating-point")
            xs.append(b.value)
        op = self.emit(GradOp.build([loss.value], [], [x.value for x in xs],
                                    result_types=[x.value.type for x in xs],
                                    location=self.errs.loc(g.pos)))
        return [(f"d_{name}", pos, Val(r, x.spec))
                for (name, pos), x, r in zip(g.wrt, xs, op.results)]

    def train(self, t: ast.Train, scope: Scope, mod: ModuleOp, forward: FuncOp) -> None:
        """Build `@train_step` (step 6 of the algorithm) after `forward` is complete."""
        loss = self._scalar_loss(scope, t.loss[0], t.loss[1], "train")
        params = [(n, b.value) for n, b in scope.names.items() if b.kind == "param"]
        if not params:
            raise self.errs.error(t.pos, "train needs at least one param to update")
        params = [(n, v) for n, v in params if is_float(v.spec.dtype)]
        if not params:
            raise self.errs.error(t.pos, "train needs at least one floating-point param to "
                                         "update")
        optimizer = self.optimizer(t.optimizer)
        ftype = forward.properties["function_type"].value
        step = FuncOp.create("train_step", list(ftype.inputs), [loss.value.type],
                             location=self.errs.loc(t.pos))
        mod.block.append(step)
        for a, b in zip(forward.args, step.args):
            b.location = a.location
        if "arg_attrs" in forward.properties:
            step.properties["arg_attrs"] = forward.properties["arg_attrs"]
        step.properties["res_attrs"] = ArrayAttr([DictionaryAttr({"graph.name":
                                                                  StringAttr("loss")})])
        step.attributes["graph.optimizer"] = optimizer.attribute()
        # the forward ops the loss needs, and every param's read, copied in program order
        keep = _backward_slice(forward.entry, loss.value)
        keep.update(v.value.owner_op for _, v in params)
        mapping = dict(zip(forward.args, step.args))
        b = Builder.at_end(step.entry)
        for op in forward.entry.ops:
            if op in keep:
                b.insert(op.clone(mapping))
        reads = [mapping[v.value] for _, v in params]
        l_value = mapping[loss.value]
        b.location = self.errs.loc(t.pos)
        grad = b.insert(GradOp.build([l_value], [], reads, result_types=[r.type for r in reads],
                                     location=b.location))
        b.location = self.errs.loc(t.optimizer.pos)
        optimizer.apply(UpdateBuilder(b, mod, forward),
                        [Slot(n, r, g) for (n, _), r, g in zip(params, reads, grad.results)])
        b.insert(ReturnOp.build([l_value], result_types=[], location=self.errs.loc(t.pos)))

    def optimizer(self, opt: ast.Call):
        """The optimizer object of `sgd(0.1)`, its hyperparameters read from literals."""
        if opt.func not in OPTIMIZERS:
            raise self.errs.unknown(opt.pos, "optimizer", opt.func, list(OPTIMIZERS),
                                    listing=True)
        cls = OPTIMIZERS[opt.func]
        params = [(k, REQUIRED if d is None else d) for k, d in cls.hyperparameters.items()]
        bound = bind_args(opt, params, self.errs, f"optimizer '{opt.func}'")
        values, where = {}, {}
        for k, node in bound.items():
            if isinstance(node, ast.Node):
                values[k] = float(static_number(node, self.errs,
                                                f"argument '{k}' of '{opt.func}'"))
                where[k] = node.pos
            else:
                values[k] = float(node)
        optimizer = cls(**values)
        for k, why in optimizer.invalid().items():
            raise self.errs.error(where.get(k, opt.pos), f"argument '{k}' of '{opt.func}' "
                                                         f"{why}, got {values[k]:g}")
        return optimizer

    # ----- fn inlining -----------------------------------------------------------------

    def inline(self, fn: ast.FnDef, call: ast.Call, scope: Scope) -> list:
        """Lower a call of `fn`: its body, with the parameters bound to the arguments."""
        if any(name == fn.name for name, _ in self.call_stack):
            raise self.errs.error(call.pos, f"recursive call of '{fn.name}': fn bodies are "
                                            "inlined, so a fn cannot call itself").note(
                f"'{fn.name}' is defined here", self.errs.loc(fn.pos))
        params = [(p, REQUIRED) for p, _ in fn.params]
        bound = bind_args(call, params, self.errs, f"fn '{fn.name}'")
        args = {p: self.expr(bound[p], scope) for p, _ in fn.params}
        fscope = Scope(self.globals)
        for p, ppos in fn.params:
            fscope.names[p] = Binding(args[p], ppos, "value")
        self.call_stack.append((fn.name, self.loc(call.pos)))
        try:
            return self.fn_body(fn, fscope)
        except ast.DSLError as e:
            e.note(f"in this call of '{fn.name}'", self.errs.loc(call.pos))
            raise
        finally:
            self.call_stack.pop()

    def fn_body(self, fn: ast.FnDef, scope: Scope) -> list:
        saved_later, self.later = self.later, {}
        try:
            for i, s in enumerate(fn.body):
                if isinstance(s, ast.Return):
                    if i != len(fn.body) - 1:
                        raise self.errs.error(s.pos, f"'return' must be the last statement of "
                                                     f"fn '{fn.name}'")
                    if len(s.values) == 1:      # `return f(x)` passes on all f's values
                        return self.multi(s.values[0], scope)
                    return [self.expr(e, scope) for e in s.values]
                self.statement(s, scope, "fn")
        finally:
            self.later = saved_later
        raise self.errs.error(fn.pos, f"fn '{fn.name}' does not return a value; end it with "
                                      "`return expr`")


def _backward_slice(block, value) -> set:
    """The ops of `block` that `value` depends on, through operands and through the values
    the ops' regions capture from above."""
    needed = {value}
    out = set()
    for op in reversed(list(block.ops)):
        if any(r in needed for r in op.results):
            out.add(op)
            needed.update(op.operands)
            if op.regions:
                needed.update(captured_values(op))
    return out


def _literal_syntax(node) -> bool:
    if isinstance(node, (ast.Num, ast.Name)):
        return True
    if isinstance(node, ast.UnOp):
        return node.op in "+-" and _literal_syntax(node.operand)
    if isinstance(node, ast.ListLit):
        return all(_literal_syntax(x) for x in node.items)
    return False


def _defined_names(s) -> list:
    if isinstance(s, (ast.Input, ast.Param, ast.Const)):
        return [(s.name, s.pos)]
    if isinstance(s, ast.Assign):
        return list(s.names)
    if isinstance(s, ast.Stage):
        return [n for inner in s.body for n in _defined_names(inner)]
    return []


def _keyword(s) -> str:
    return {ast.Input: "input", ast.Param: "param", ast.Output: "output", ast.Grad: "grad",
            ast.Train: "train", ast.Return: "return", ast.Assign: "assignment",
            ast.Const: "const", ast.GridDecl: "grid", ast.Stage: "stage"}.get(type(s),
                                                                            "statement")


def _n(k: int) -> str:
    return "1 value" if k == 1 else f"{k} values"
