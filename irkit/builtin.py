"""The `builtin` dialect: the module container and the unrealized conversion cast.

It is part of the core, as MLIR's builtin dialect is part of its IR library: the parser wraps
top-level ops in a `builtin.module`, and every module is one. `irkit.dialects.builtin` is its
path among the dialects.
"""

from __future__ import annotations

from irkit.attributes import StringAttr, format_symbol
from irkit.opdef import (
    AnyType, Dialect, GraphRegion, IsolatedFromAbove, NoTerminator, Op, OptProp, RegionDef,
    SingleBlock, StrAttr, SymbolTable, VarOperand, VarResult,
)

builtin = Dialect("builtin", "The container op and conversion glue every module uses.")


@builtin.op
class ModuleOp(Op):
    """A top-level container of symbols (functions, variables): a graph region, no terminator.

        module @m {
          func.func private @f(f32) -> f32
        }
    """

    name = "builtin.module"
    sym_name = OptProp(StrAttr)
    sym_visibility = OptProp(StrAttr)
    body = RegionDef(single_block=True)
    traits = (IsolatedFromAbove(), NoTerminator(), SymbolTable(), GraphRegion(), SingleBlock())
    #: as MLIR's: `unrealized_conversion_cast` and a nested `module` need no prefix inside
    default_dialect = "builtin"

    @classmethod
    def create_empty(cls, location=None) -> "ModuleOp":
        op = cls.build(result_types=[], location=location)
        op.regions[0].add_block()
        return op

    @property
    def block(self):
        if not self.body.blocks:
            self.body.add_block()
        return self.body.blocks[0]

    def verify_(self):
        if len(self.body.blocks) != 1:
            raise self.error("expects a body with exactly one block")
        if self.results:
            raise self.error("expects no results")

    @classmethod
    def parse(cls, p, num_results):
        props = {}
        if p.tok.startswith("@"):
            props["sym_name"] = StringAttr(p.parse_symbol_name())
        attrs = {}
        if p.accept("attributes"):
            attrs = p.parse_attr_dict_body()
        for k in ("sym_visibility",):
            if k in attrs:
                props[k] = attrs.pop(k)
        region = p.parse_region(isolated=True)
        if not region.blocks:
            region.add_block()
        op = cls.build(result_types=[], attributes=attrs, regions=[region])
        op.properties.update(props)
        return op

    def print(self, p):
        if self.sym_name is not None:
            p.write(" " + format_symbol(self.sym_name.value))
        p.attr_dict(self, elided=("sym_name",), keyword=True)
        p.write(" ")
        p.region(self.body, print_entry_args=False)


@builtin.op
class UnrealizedConversionCastOp(Op):
    """Glue between type systems during partial lowering; must be gone after conversion.

        %1 = builtin.unrealized_conversion_cast %0 : f32 to i32
    """

    name = "builtin.unrealized_conversion_cast"
    inputs = VarOperand(AnyType)
    outputs = VarResult(AnyType)

    @classmethod
    def parse(cls, p, num_results):
        refs = [] if p.tok == "to" else p.parse_operand_refs()
        in_types = []
        if refs:
            p.expect(":")
            in_types = p.parse_type_list()
        p.expect("to")
        out_types = p.parse_type_list()
        attrs = p.parse_optional_attr_dict()
        if len(in_types) != len(refs):
            raise p.error("mismatch between operand and type counts")
        return cls.build([p.resolve(r, t) for r, t in zip(refs, in_types)],
                         result_types=out_types, attributes=attrs)

    def print(self, p):
        if self.inputs:
            p.write(" ")
            p.operands(self.inputs)
            p.write(" : ")
            p.types([v.type for v in self.inputs])
        p.write(" to ")
        p.types(self.result_types)
        p.attr_dict(self)


_ = (AnyType,)
