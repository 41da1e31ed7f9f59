"""The `func` dialect: functions, calls and returns, with MLIR's names and syntax."""

from __future__ import annotations

from irkit.attributes import (
    ArrayAttr, DictionaryAttr, StringAttr, SymbolRefAttr, TypeAttr, format_symbol,
)
from irkit.opdef import (
    AnyType, ArrayAttrC, AutomaticAllocationScope, CallableOp, ConstantLike, Dialect,
    FlatSymbolRef, FunctionTypeAttr, HasParent, IsolatedFromAbove, Op, Operand, OptProp, Prop,
    Pure, RegionDef, Result, ReturnLike, StrAttr, Symbol, Terminator, UnitAttrC, VarOperand,
    VarResult,
)
from irkit.rewrite import RewritePattern
from irkit.types import FunctionType

func = Dialect("func", "Functions, calls and returns.")


def _signature_mismatch(kind: str, index: int, got, want) -> str:
    return (f"type of {kind} #{index} ('{got}') must match the type of the corresponding "
            f"argument in function signature ('{want}')")


@func.op
class FuncOp(Op):
    """A function: a symbol with a signature and (unless it is a declaration) a body.

        func.func @add(%arg0: f32, %arg1: f32) -> f32 {
          %0 = arith.addf %arg0, %arg1 : f32
          return %0 : f32
        }
    """

    name = "func.func"
    sym_name = Prop(StrAttr)
    function_type = Prop(FunctionTypeAttr)
    sym_visibility = OptProp(StrAttr)
    arg_attrs = OptProp(ArrayAttrC)
    res_attrs = OptProp(ArrayAttrC)
    no_inline = OptProp(UnitAttrC)
    body = RegionDef()
    traits = (IsolatedFromAbove(), Symbol(), CallableOp(), AutomaticAllocationScope())
    default_dialect = "func"

    @property
    def type(self) -> FunctionType:
        return self.function_type.value

    @property
    def is_declaration(self) -> bool:
        return not self.body.blocks

    @property
    def entry(self):
        return self.body.blocks[0]

    @property
    def args(self):
        return self.body.blocks[0].args

    @classmethod
    def create(cls, name: str, inputs, results, location=None, visibility: str | None = None):
        """A function with an entry block whose arguments match `inputs`."""
        from irkit.ir import Block
        ftype = FunctionType(inputs, results)
        op = cls.build(result_types=[], sym_name=StringAttr(name),
                       function_type=TypeAttr(ftype), location=location,
                       sym_visibility=StringAttr(visibility) if visibility else None)
        op.body.add_block(Block(ftype.inputs))
        return op

    def verify_(self):
        ftype = self.type
        if self.body.blocks:
            args = self.body.blocks[0].args
            if len(args) != len(ftype.inputs):
                raise self.error(f"entry block must have {len(ftype.inputs)} arguments to "
                                 "match function signature")
            for i, (a, t) in enumerate(zip(args, ftype.inputs)):
                if a.type is not t:
                    raise self.error(_signature_mismatch("entry block argument", i, a.type, t))
        elif self.sym_visibility is None or self.sym_visibility.value == "public":
            raise self.error("symbol declaration cannot have public visibility")
        self._verify_arg_attrs("arg_attrs", "argument", len(ftype.inputs))
        self._verify_arg_attrs("res_attrs", "result", len(ftype.results))

    def _verify_arg_attrs(self, key: str, kind: str, n: int) -> None:
        """One dictionary per argument (result) whose names are all dialect attributes
        (`{graph.name = ...}`): an undotted name has no dialect to give it a meaning."""
        attrs = self.properties.get(key)
        if attrs is None:
            return
        if len(attrs) != n:
            raise self.error(f"expects {kind} attribute array to have the same number of "
                             f"elements as the number of function {kind}s, got {len(attrs)}, "
                             f"but expected {n}")
        for d in attrs:
            if not isinstance(d, DictionaryAttr):
                raise self.error(f"expects {kind} attribute dictionary to be a DictionaryAttr, "
                                 f"but got `{d}`")
            if any("." not in name for name in d.value):
                raise self.error(f"{kind}s may only have dialect attributes")

    # ----- custom assembly ----------------------------------------------------------------

    @classmethod
    def parse(cls, p, num_results):
        props = {}
        if p.tok in ("private", "public", "nested"):
            props["sym_visibility"] = StringAttr(p.next())
        props["sym_name"] = StringAttr(p.parse_symbol_name())
        p.expect("(", "in function signature")
        args, inputs, arg_attrs = [], [], []
        named = p.tok.startswith("%")
        if p.tok != ")":
            while True:
                tk = p.i
                name = None
                if named:
                    name = p.parse_operand_ref().name
                    p.expect(":")
                t = p.parse_type()
                attrs = p.parse_attr_dict_body() if p.tok == "{" else {}
                loc = p.parse_trailing_location() if p.tok == "loc" else None
                inputs.append(t)
                arg_attrs.append(attrs)
                if named:
                    args.append((name, t, loc, tk))
                if not p.accept(","):
                    break
        p.expect(")", "in function signature")
        results, res_attrs = [], []
        if p.accept("->"):
            if p.tok == "(" and not _is_function_type_result(p):
                p.next()
                if p.tok != ")":
                    while True:
                        results.append(p.parse_type())
                        res_attrs.append(p.parse_attr_dict_body() if p.tok == "{" else {})
                        if not p.accept(","):
                            break
                p.expect(")")
            else:
                results.append(p.parse_type())
                res_attrs.append({})
        attrs = {}
        attrs_tok = p.i
        if p.accept("attributes"):
            attrs = p.parse_attr_dict_body()
        for key in ("sym_visibility", "sym_name", "function_type"):
            if key in attrs:        # the signature already says these
                raise p.error(f"custom op 'func.func' '{key}' is an inferred attribute and "
                              "should not be specified in the explicit attribute dictionary",
                              attrs_tok)
        for key in [k for k in attrs if k in cls.spec.prop_names]:
            props[key] = attrs.pop(key)
        props["function_type"] = TypeAttr(FunctionType(inputs, results))
        if any(arg_attrs):
            props["arg_attrs"] = ArrayAttr(DictionaryAttr(a) for a in arg_attrs)
        if any(res_attrs):
            props["res_attrs"] = ArrayAttr(DictionaryAttr(a) for a in res_attrs)
        regions = []
        if p.tok == "{":
            # Named arguments are the entry block's, which then has no label. Without them
            # (no arguments, or only their types) the body is an ordinary region: its entry
            # block may be labelled and declare the arguments (`^bb0(%a: f32):`), and the
            # verifier checks them against the signature, as MLIR does.
            body_tok = p.i
            region = p.parse_region(args if args else None, isolated=True)
            if not region.blocks:
                raise p.error("custom op 'func.func' expected non-empty function body",
                              body_tok)
            regions = [region]
        from irkit.ir import Region
        op = cls.build(result_types=[], attributes=attrs, regions=regions or [Region()])
        op.properties.update(props)
        return op

    def print(self, p):
        vis = self.sym_visibility
        if vis is not None:
            p.write(f" {vis.value}")
        p.write(f" {format_symbol(self.sym_name.value)}(")
        ftype = self.type
        arg_attrs = self.arg_attrs
        parts = []
        for i, t in enumerate(ftype.inputs):
            text = f"{p.value(self.args[i])}: {t}" if self.body.blocks else str(t)
            if arg_attrs is not None and arg_attrs[i].value:
                text += f" {arg_attrs[i]}"
            if p.debuginfo and self.body.blocks and self.args[i].location is not None:
                text += f" {self.args[i].location.format()}"
            parts.append(text)
        p.write(", ".join(parts) + ")")
        res_attrs = self.res_attrs
        if ftype.results:
            res = []
            for i, t in enumerate(ftype.results):
                text = str(t)
                if res_attrs is not None and res_attrs[i].value:
                    text += f" {res_attrs[i]}"
                res.append(text)
            single = (len(res) == 1 and not isinstance(ftype.results[0], FunctionType)
                      and (res_attrs is None or not res_attrs[0].value))
            p.write(f" -> {res[0]}" if single else f" -> ({', '.join(res)})")
        p.attr_dict(self, elided=("sym_name", "function_type", "sym_visibility", "arg_attrs",
                                  "res_attrs"), keyword=True)
        if self.body.blocks:
            p.write(" ")
            p.region(self.body, print_entry_args=False)

    # ----- semantics ----------------------------------------------------------------------

    def interpret(self, interp, values):
        return []


def _is_function_type_result(p) -> bool:
    """After `->`, does `(` start a single function-typed result `(a) -> b`?"""
    depth = 0
    j = p.i
    toks = p.toks
    while toks[j]:
        t = toks[j]
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
            if depth == 0:
                return toks[j + 1] == "->"
        j += 1
    return False


@func.op
class ReturnOp(Op):
    """Returns values from a function; must match the function's result types.

        func.func @id(%arg0: f32) -> f32 {
          return %arg0 : f32
        }
    """

    name = "func.return"
    operands_ = VarOperand(AnyType)
    traits = (Pure(), Terminator(), ReturnLike(), HasParent("func.func"))

    def verify_(self):
        fn = self.parent_op
        results = fn.type.results
        vals = self.operands
        if len(vals) != len(results):
            raise self.error(f"has {len(vals)} operands, but enclosing function "
                             f"(@{fn.sym_name.value}) returns {len(results)}")
        for i, (v, t) in enumerate(zip(vals, results)):
            if v.type is not t:
                raise self.error(f"type of return operand {i} ('{v.type}') doesn't match "
                                 f"function result type ('{t}') in function "
                                 f"@{fn.sym_name.value}")

    @classmethod
    def parse(cls, p, num_results):
        values = _parse_values_colon_types(p)
        return cls.build(values, result_types=[])

    def print(self, p):
        p.operands_with_types(self.operands)

    def interpret(self, interp, values):
        from irkit.interpreter import Return
        return Return(values)


def _parse_values_colon_types(p):
    if not p.tok.startswith("%"):
        return []
    refs = p.parse_operand_refs()
    p.expect(":")
    types = p.parse_type_list()
    if len(types) != len(refs):
        raise p.error(f"expected {len(refs)} types, found {len(types)}")
    return [p.resolve(r, t) for r, t in zip(refs, types)]


def _check_call_types(op, ftype: FunctionType, args, what: str):
    if len(args) != len(ftype.inputs):
        raise op.error(f"incorrect number of operands for {what}")
    for i, (v, t) in enumerate(zip(args, ftype.inputs)):
        if v.type is not t:
            raise op.error(f"operand type mismatch: expected operand type '{t}', but provided "
                           f"'{v.type}' for operand number {i}")
    if len(op.results) != len(ftype.results):
        raise op.error(f"incorrect number of results for {what}")
    for i, (r, t) in enumerate(zip(op.results, ftype.results)):
        if r.type is not t:
            raise op.error(f"result type mismatch at index {i}: expected '{t}', got '{r.type}'")


@func.op
class CallOp(Op):
    """Calls a function by symbol.

        %0 = func.call @f(%arg0) : (f32) -> f32
    """

    name = "func.call"
    callee = Prop(FlatSymbolRef)
    arg_attrs = OptProp(ArrayAttrC)
    res_attrs = OptProp(ArrayAttrC)
    no_inline = OptProp(UnitAttrC)
    args = VarOperand(AnyType)
    outs = VarResult(AnyType)

    def verify_(self):
        from irkit.symbols import lookup_symbol
        fn = lookup_symbol(self, self.callee)
        if not isinstance(fn, FuncOp):
            raise self.error(f"'{self.callee.root}' does not reference a valid function")
        _check_call_types(self, fn.type, self.args, "callee")

    @classmethod
    def parse(cls, p, num_results):
        callee = SymbolRefAttr(p.parse_symbol_name())
        p.expect("(")
        refs = [] if p.tok == ")" else p.parse_operand_refs()
        p.expect(")")
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        tk = p.i
        ftype = p.parse_type()
        if not isinstance(ftype, FunctionType) or len(ftype.inputs) != len(refs):
            raise p.error("expected function type matching the call operands", tk)
        args = [p.resolve(r, t) for r, t in zip(refs, ftype.inputs)]
        props = {k: attrs.pop(k) for k in list(attrs) if k in cls.spec.prop_names}
        op = cls.build(args, result_types=ftype.results, attributes=attrs, callee=callee)
        op.properties.update(props)
        return op

    def print(self, p):
        p.write(f" {self.callee}(")
        p.operands(self.args)
        p.write(")")
        p.attr_dict(self, elided=("callee",))
        p.write(f" : {FunctionType(self.operand_types, self.result_types)}")

    def interpret(self, interp, values):
        from irkit.symbols import lookup_symbol
        return interp.call(lookup_symbol(self, self.callee), values)


@func.op
class CallIndirectOp(Op):
    """Calls a function value.

        %1 = func.call_indirect %f(%arg0) : (f32) -> f32
    """

    name = "func.call_indirect"
    callee = Operand(AnyType)
    args = VarOperand(AnyType)
    outs = VarResult(AnyType)

    def verify_(self):
        t = self.callee.type
        if not isinstance(t, FunctionType):
            raise self.error(f"callee must be a function, but got '{t}'")
        _check_call_types(self, t, self.args, "callee")

    @classmethod
    def parse(cls, p, num_results):
        fref = p.parse_operand_ref()
        p.expect("(")
        refs = [] if p.tok == ")" else p.parse_operand_refs()
        p.expect(")")
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        ftype = p.parse_type()
        if not isinstance(ftype, FunctionType) or len(ftype.inputs) != len(refs):
            raise p.error("expected function type matching the call operands")
        args = [p.resolve(r, t) for r, t in zip(refs, ftype.inputs)]
        return cls.build(p.resolve(fref, ftype), args, result_types=ftype.results,
                         attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.callee)}(")
        p.operands(self.args)
        p.write(")")
        p.attr_dict(self)
        p.write(f" : {self.callee.type}")

    def interpret(self, interp, values):
        fn = values[0]
        return interp.call(fn, values[1:])


@func.op
class ConstantOp(Op):
    """A function symbol as an SSA value.

        %f = func.constant @f : (f32) -> f32
    """

    name = "func.constant"
    value = Prop(FlatSymbolRef)
    result = Result(AnyType)
    traits = (Pure(), ConstantLike())

    def verify_(self):
        from irkit.symbols import lookup_symbol
        fn = lookup_symbol(self, self.value)
        if not isinstance(fn, FuncOp):
            raise self.error(f"reference to undefined function '{self.value.root}'")
        if fn.type is not self.result.type:
            raise self.error("reference to function with mismatched type")

    @classmethod
    def parse(cls, p, num_results):
        ref = SymbolRefAttr(p.parse_symbol_name())
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        return cls.build(result_types=[p.parse_type()], attributes=attrs, value=ref)

    def print(self, p):
        p.write(f" {self.value}")
        p.attr_dict(self, elided=("value",))
        p.write(f" : {self.result.type}")

    def fold(self, operands):
        return [self.value]

    def interpret(self, interp, values):
        from irkit.symbols import lookup_symbol
        return [lookup_symbol(self, self.value)]


class _DirectCall(RewritePattern):
    """call_indirect (func.constant @f)(args) -> call @f(args): the callee is known, and a
    direct call is what the inliner and symbol-dce understand."""

    root = "func.call_indirect"

    def match_and_rewrite(self, op, rewriter) -> bool:
        callee = op.callee.owner_op if hasattr(op.callee, "owner") else None
        if not isinstance(callee, ConstantOp):
            return False
        rewriter.replace_op_with_new(op, CallOp, list(op.args), callee=callee.value,
                                     result_types=op.result_types)
        return True


def _materialize_constant(attr, type, location=None):
    """A folded function reference becomes a `func.constant` (other values are not ours)."""
    if not isinstance(attr, SymbolRefAttr) or not isinstance(type, FunctionType):
        return None
    return ConstantOp.build(result_types=[type], value=attr, location=location)


func.constant_materializer = _materialize_constant
CallIndirectOp.canonicalization_patterns = (_DirectCall(),)

_ = (ConstantLike, Result, Operand, VarResult)
