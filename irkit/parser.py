"""Recursive-descent parser for MLIR's textual IR (generic form plus registered custom forms).

Grammar (MLIR LangRef, abridged):

    toplevel    ::= (operation | type-alias-def | attr-alias-def | resources)*
    operation   ::= op-result-list? (generic-operation | custom-operation) trailing-location?
    generic-op  ::= string-literal `(` value-use-list? `)` successor-list? properties?
                    region-list? dictionary-attribute? `:` function-type
    region      ::= `{` entry-block? block* `}`
    block       ::= `^id` block-arg-list? `:` operation*

Why hand-written: see `irkit.lexer`. The parser walks a list of token strings by index and
dispatches on first characters; types whose spelling is a single token (`f32`, `index`) come
from a dict, which is most of the types in real IR.

Name resolution follows MLIR: values are scoped per region (visible in nested regions unless
the op is isolated from above), may be used before their definition (a placeholder is made
and replaced when the definition arrives), and every use must agree on the type. Errors are
`ParseError`s located at the offending token.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from irkit.attributes import (
    UNIT, UNKNOWN_LOC, AffineMapAttr, ArrayAttr, Attribute, CallSiteLoc, DenseArrayAttr,
    DenseElementsAttr, DenseResourceAttr, DictionaryAttr, FileLineColLoc, FloatAttr, FusedLoc,
    IntegerAttr, IntegerSetAttr, Location, NameLoc, OpaqueAttr, OpaqueLoc, ResourceHandle,
    SourceLoc, SparseElementsAttr, StridedLayoutAttr, StringAttr, SymbolRefAttr, TypeAttr,
    float_attr_from_literal, float_literal_value,
)
from irkit.builtin import ModuleOp
from irkit.diagnostics import SOURCES, ParseError
from irkit.ir import gc_paused, Block, Operation, Region, UnregisteredOp, Value
from irkit.lexer import SourceBuffer, is_digits, starts_digit, starts_identifier, tokenize
from irkit.opdef import lookup_dialect, lookup_op
from irkit.types import (
    F64, FLOAT_WIDTHS, I1, I64, INDEX, NONE, ComplexType, IndexType, FloatType, FunctionType,
    IntegerType, MemRefType, RankedTensorType, TupleType, Type, UnrankedMemRefType,
    UnrankedTensorType, VectorType,
)

if TYPE_CHECKING:       # the affine methods import it on first use
    from irkit import affine as aff

# `i0` is a type too (MLIR's zero-width integer).
_INT_TYPE_RE = re.compile(r"(si|ui|i)(0|[1-9][0-9]*)\Z")
# A dimension list written with blanks (`4 x ? x [8] x`); see `Parser._parse_dims`.
_SPACED_DIMS_RE = re.compile(r"(?:\s*(?:\d+|\?|\*|\[\s*\d+\s*\])\s*x)+")
_SIMPLE_TYPES: dict[str, Type] = {"index": INDEX, "none": NONE}
for _name in FLOAT_WIDTHS:
    _SIMPLE_TYPES[_name] = FloatType(_name)

_STR_ESC = re.compile(r'\\(["\\nt]|[0-9a-fA-F]{2})')


def unescape(tok: str) -> str:
    """The value of a string-literal token (MLIR escapes: \\" \\\\ \\n \\t \\XX)."""
    body = tok[1:-1]
    if "\\" not in body:
        return body
    out = bytearray()
    pos = 0
    for m in _STR_ESC.finditer(body):
        out += body[pos:m.start()].encode("utf-8", "surrogateescape")
        e = m.group(1)
        if e == "n":
            out += b"\n"
        elif e == "t":
            out += b"\t"
        elif e in ('"', "\\"):
            out += e.encode()
        else:
            out.append(int(e, 16))
        pos = m.end()
    out += body[pos:].encode("utf-8", "surrogateescape")
    return out.decode("utf-8", "surrogateescape")


class _Placeholder(Value):
    """A value used before its definition; replaced when the definition is parsed."""

    __slots__ = ("name", "token")

    def __init__(self, type: Type, name: str, token: int) -> None:
        super().__init__(type)
        self.name = name
        self.token = token


class _DeferredLoc(Location):
    """`loc(#loc3)` where `#loc3` is defined later (mlir-opt prints them at the end)."""

    __slots__ = ("name", "table", "token")

    def __init__(self, name: str, table: dict, token: int) -> None:
        self.name = name
        self.table = table
        self.token = token

    def target(self) -> Location:
        loc = self.table.get(self.name)
        while isinstance(loc, _DeferredLoc):
            loc = loc.table.get(loc.name)
        return loc if loc is not None else UNKNOWN_LOC

    def _key(self):
        return self.target()._key()

    def file_line_col(self):
        return self.target().file_line_col()

    def body(self):
        return self.target().body()


class OperandRef:
    """An SSA use seen in the text, resolved once its type is known."""

    __slots__ = ("name", "number", "token")

    def __init__(self, name: str, number: int, token: int) -> None:
        self.name = name
        self.number = number
        self.token = token


class Parser:
    """Parses one source buffer. Dialect custom parsers use its public methods."""

    def __init__(self, text: str, filename: str = "<stdin>", *,
                 allow_unregistered: bool = False, register_source: bool = True) -> None:
        self.source = SourceBuffer(filename, text, register_source)
        self.toks = tokenize(text)
        self.i = 0
        self.allow_unregistered = allow_unregistered
        self.type_aliases: dict[str, Type] = {}
        self.attr_aliases: dict[str, Attribute] = {}
        self.resources: dict[str, ResourceHandle] = {}
        # Value scopes: a stack of dicts name -> list of values, one per region being parsed.
        self.scopes: list[dict] = [{}]
        # Index into `scopes` of the innermost isolated-from-above scope.
        self.isolated: list[int] = [0]
        self.forward: list[dict] = [{}]
        self.block_scopes: list[dict] = []
        self.default_dialects: list[str | None] = [None]
        self.deferred_locs: list = []
        # Memo of composite types and attribute dictionaries by their token span (see
        # `_span_end`): real IR repeats a handful of signatures thousands of times.
        self._type_memo: dict[tuple, Type] = {}
        self._dict_memo: dict[tuple, dict] = {}

    # ----- tokens -----------------------------------------------------------------------

    @property
    def tok(self) -> str:
        return self.toks[self.i]

    def peek(self, n: int = 1) -> str:
        j = self.i + n
        return self.toks[j] if j < len(self.toks) else ""

    def next(self) -> str:
        t = self.toks[self.i]
        if t:
            self.i += 1
        return t

    def accept(self, s: str) -> bool:
        if self.toks[self.i] == s:
            self.i += 1
            return True
        return False

    def expect(self, s: str, context: str = "") -> None:
        if self.toks[self.i] != s:
            raise self.error(f"expected '{s}'{' ' + context if context else ''}")
        self.i += 1

    def parse_i64_list(self) -> DenseArrayAttr:
        """`[1, 0]`: an i64 list in an op's custom form (linalg's `permutation`, a
        `vector.shuffle` mask)."""
        self.expect("[")
        values = []
        if self.tok != "]":
            while True:
                values.append(self.parse_signed_int())
                if not self.accept(","):
                    break
        self.expect("]")
        return DenseArrayAttr(I64, values)

    def parse_signed_int(self, expected: str = "an integer") -> int:
        """A decimal integer with an optional `-`, or the error "expected `expected`" at
        it (the static entries of ops' custom forms: offsets, sizes, axes, masks)."""
        tk = self.i
        negative = self.accept("-")
        if not is_digits(self.tok):
            raise self.error(f"expected {expected}", tk)
        return -int(self.next()) if negative else int(self.next())

    def location_at(self, token: int) -> SourceLoc:
        return SourceLoc(self.source, token)

    def error(self, message: str, token: int | None = None) -> ParseError:
        """A located parse error: at `token`, or, when none is given, where the current
        (unexpected) token is wanted: see `_wrong_token_location`."""
        if token is None:
            return ParseError(message, self._wrong_token_location())
        return ParseError(message, self.location_at(token))

    def _wrong_token_location(self) -> Location:
        """Where an error about the current token belongs (MLIR's `emitWrongTokenError`).

        A missing `:` or `>` is noticed at the next token, which often starts the next line
        (or is the end of the input); the error then belongs at the end of the line where the
        token is missing. So when only blanks, line breaks and `//` comments separate the
        current token from the previous text, the location backs up to just after that text.
        """
        text = self.source.text
        i = self.i
        offset = len(text) - 1 if not self.toks[i] else self.source.token_offset(i)
        offset = max(offset, 0)
        before = text[:offset]
        while True:
            before = before.rstrip(" \t")
            if not before:
                return self.location_at(i)
            if before[-1] not in "\n\r":
                break
            before = before[:-1]
            line_start = max(before.rfind("\n"), before.rfind("\r")) + 1
            comment = before.find("//", line_start)
            if comment >= 0:
                before = before[:comment]
        return self._offset_location(len(before))

    def _offset_location(self, offset: int) -> FileLineColLoc:
        name, text = self.source.name, self.source.text
        if SOURCES.text(name) is text:
            line, col = SOURCES.line_col(name, offset)
        else:
            line, col = text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)
        return FileLineColLoc(name, line, col)

    def _describe(self) -> str:
        t = self.tok
        return "end of input" if not t else f"'{t}'"

    # ----- top level --------------------------------------------------------------------

    def parse_module(self) -> Operation:
        """Parse the whole buffer; ops outside a single `builtin.module` are wrapped in one."""
        top = Block()
        toks = self.toks
        while toks[self.i]:
            t = toks[self.i]
            c = t[0]
            if c in "!#" and toks[self.i + 1] == "=" and t != "#-}":
                self._parse_alias_def()
            elif t == "{-#":
                self._parse_resources()
            else:
                top.append(self.parse_operation())
        self._finish_scope()
        self._resolve_deferred_locs()
        ops = list(top.ops)
        if len(ops) == 1 and ops[0].name == "builtin.module":
            module = ops[0].detach()
        else:
            module = ModuleOp.build(result_types=[], regions=1, location=self.location_at(0))
            body = module.regions[0].add_block()
            for op in ops:
                body.append(op.detach())
        return module

    def _parse_alias_def(self) -> None:
        start = self.i
        name = self.next()
        if "." in name:         # `#foo.bar` is an attribute of dialect `foo`, not an alias
            kind = "type" if name[0] == "!" else "attribute"
            raise self.error(f"{kind} names with a '.' are reserved for dialect-defined names",
                             start)
        self.expect("=")
        if name[0] == "!":
            if name in self.type_aliases:
                raise self.error(f"redefinition of type alias '{name}'", start)
            self.type_aliases[name] = self.parse_type()
        else:
            if name in self.attr_aliases:
                raise self.error(f"redefinition of attribute alias '{name}'", start)
            self.attr_aliases[name] = self.parse_attribute()

    def _parse_resources(self) -> None:
        self.expect("{-#")
        while not self.accept("#-}"):
            section = self.next()
            if section not in ("dialect_resources", "external_resources"):
                raise self.error(f"unknown resource section '{section}'", self.i - 1)
            self.expect(":")
            self.expect("{")
            while not self.accept("}"):
                dialect = self.next()
                self.expect(":")
                self.expect("{")
                while not self.accept("}"):
                    key = self.next()
                    self.expect(":")
                    tok = self.next()
                    if section == "dialect_resources":
                        handle = self.resources.setdefault(key, ResourceHandle(key, dialect))
                        if tok[:1] != '"':
                            raise self.error("expected hex string blob", self.i - 1)
                        handle.blob = unescape(tok)
                    self.accept(",")
                self.accept(",")
            self.accept(",")

    # ----- operations -------------------------------------------------------------------

    def parse_operation(self) -> Operation:
        toks = self.toks
        start = self.i
        result_groups = None
        t = toks[start]
        if t[0] == "%":
            result_groups = []
            while True:
                tk = self.i
                name = self.next()
                if name[0] != "%" or "#" in name:
                    raise self.error("expected SSA result name", tk)
                count = 1
                if toks[self.i] == ":":
                    self.i += 1
                    ct = self.next()
                    if not is_digits(ct) or int(ct) == 0:
                        raise self.error("expected a positive number of results", self.i - 1)
                    count = int(ct)
                result_groups.append((name, count, tk))
                if not self.accept(","):
                    break
            self.expect("=", "after SSA result names")
        # An op is located at its name, not at its results, as in MLIR (`%0 = arith.addi`
        # reports at `arith.addi`).
        name_tok = self.i
        t = toks[name_tok]
        if t and t[0] == '"':
            op = self._parse_generic_op(name_tok)
        elif starts_identifier(t):
            n = sum(c for _, c, _ in result_groups) if result_groups else 0
            op = self._parse_custom_op(name_tok, n)
        else:
            raise self.error(f"expected operation name in quotes, found {self._describe()}")
        if toks[self.i] == "loc":
            op.location = self.parse_trailing_location()
        if result_groups is not None:
            n = sum(c for _, c, _ in result_groups)
            if n != len(op.results):
                raise self.error(f"operation defines {len(op.results)} results but was "
                                 f"provided {n} to bind", start)
            k = 0
            for name, count, tk in result_groups:
                self._define(name, op.results[k:k + count], tk)
                k += count
        return op

    def _parse_generic_op(self, start: int) -> Operation:
        toks = self.toks
        name_tok = self.i
        name = unescape(self.next())
        cls = lookup_op(name)
        if cls is None:
            self._check_unregistered(name, name_tok)
        self.expect("(", "to start operand list")
        refs = []
        if toks[self.i] != ")":
            refs = self.parse_operand_refs()
        self.expect(")", "to end operand list")
        successors = []
        if toks[self.i] == "[":
            self.i += 1
            while True:
                successors.append(self.parse_successor())
                if not self.accept(","):
                    break
            self.expect("]")
        props = None
        if toks[self.i] == "<" and toks[self.i + 1] == "{":
            self.i += 1
            props = self._memo_attr_dict()
            self.expect(">", "to end properties")
        regions = []
        if toks[self.i] == "(":
            self.i += 1
            self.default_dialects.append(getattr(cls, "default_dialect", None))
            isolated = cls is not None and _is_isolated(cls)
            while True:
                regions.append(self.parse_region(isolated=isolated))
                if not self.accept(","):
                    break
            self.default_dialects.pop()
            self.expect(")", "to end region list")
        attrs = None
        if toks[self.i] == "{":
            attrs = self._memo_attr_dict()
        self.expect(":", "followed by operation type")
        type_tok = self.i
        ftype = self.parse_type()
        if not isinstance(ftype, FunctionType):
            raise self.error("expected function type", type_tok)
        if len(ftype.inputs) != len(refs):
            raise self.error(f"expected {len(refs)} operand type"
                             f"{'s' if len(refs) != 1 else ''} but had {len(ftype.inputs)}",
                             type_tok)
        operands = [self.resolve(r, t) for r, t in zip(refs, ftype.inputs)]
        if cls is not None and attrs:
            # MLIR's legacy form: inherent attributes written in the discardable dict.
            inherent = cls.spec.prop_names
            for key in [k for k in attrs if k in inherent]:
                if props is None:
                    props = {}
                props[key] = attrs.pop(key)
        if cls is None:
            op = object.__new__(UnregisteredOp)
            op.name = name
        else:
            op = object.__new__(cls)
        op._init(operands, ftype.results, props, attrs, regions, successors,
                 SourceLoc(self.source, start))
        return op

    def _check_unregistered(self, name: str, tok: int) -> None:
        """May `name`, which no class is registered for, stand as an opaque op? Only under
        --allow-unregistered-dialect, and, as in MLIR, never in a dialect that does not allow
        unknown ops (`func.foo_bar_op` is a misspelling, not an op irkit does not know)."""
        prefix = name.split(".", 1)[0]
        dialect = lookup_dialect(prefix) if "." in name else None
        if dialect is not None and not dialect.allows_unknown_ops:
            raise self.error(f"unregistered operation '{name}' found in dialect ('{prefix}') "
                             "that does not allow unknown operations", tok)
        if self.allow_unregistered:
            return
        if dialect is not None:
            raise self.error(f"operation '{name}' is not one of the ops irkit knows of dialect "
                             f"'{prefix}'; use --allow-unregistered-dialect to accept it", tok)
        raise self.error(f"operation '{name}' is from an unregistered dialect; use "
                         "--allow-unregistered-dialect to accept it", tok)

    def _parse_custom_op(self, start: int, num_results: int) -> Operation:
        name_tok = self.i
        name = self.next()
        cls = lookup_op(name)
        if cls is None:
            for d in reversed(self.default_dialects):
                if d is not None:
                    cls = lookup_op(f"{d}.{name}")
                    break
            if cls is None:
                cls = lookup_op(f"builtin.{name}")
        if cls is None or not hasattr(cls, "parse"):
            tried = ""
            d = next((d for d in reversed(self.default_dialects) if d), None)
            if d is not None and "." not in name:
                tried = f" (tried '{d}.{name}' as well)"
            raise self.error(f"custom op '{name}' is unknown{tried}", name_tok)
        self.default_dialects.append(cls.default_dialect)
        try:
            op = cls.parse(self, num_results)
        finally:
            self.default_dialects.pop()
        if op.location is UNKNOWN_LOC:
            op.location = SourceLoc(self.source, start)
        return op

    def parse_trailing_location(self) -> Location:
        self.expect("loc")
        self.expect("(")
        loc = self._parse_location_body()
        self.expect(")")
        return loc

    # ----- SSA values -------------------------------------------------------------------

    def parse_operand_ref(self) -> OperandRef:
        tk = self.i
        t = self.toks[tk]
        if not t or t[0] != "%":
            raise self.error(f"expected SSA operand, found {self._describe()}")
        self.i += 1
        name, _, num = t.partition("#")
        return OperandRef(name, int(num) if num else 0, tk)

    def parse_operand_refs(self) -> list[OperandRef]:
        refs = [self.parse_operand_ref()]
        while self.toks[self.i] == ",":
            self.i += 1
            refs.append(self.parse_operand_ref())
        return refs

    def resolve(self, ref: OperandRef, type: Type) -> Value:
        """The value `ref` names, checked to have `type` (a placeholder if not yet defined)."""
        name = ref.name
        scopes = self.scopes
        for k in range(len(scopes) - 1, self.isolated[-1] - 1, -1):
            vals = scopes[k].get(name)
            if vals is not None:
                if ref.number >= len(vals):
                    raise self.error(f"result number {ref.number} of '{name}' is out of range "
                                     f"(it has {len(vals)} results)", ref.token)
                v = vals[ref.number]
                if v.type is not type:
                    raise self.error(f"use of value '{name}' expects different type than prior "
                                     f"uses: '{type}' vs '{v.type}'", ref.token)
                return v
        key = (name, ref.number)
        fwd = self.forward[-1]
        ph = fwd.get(key)
        if ph is None:
            ph = fwd[key] = _Placeholder(type, name, ref.token)
        elif ph.type is not type:
            raise self.error(f"use of value '{name}' expects different type than prior uses: "
                             f"'{type}' vs '{ph.type}'", ref.token)
        return ph

    def _define(self, name: str, values, token: int) -> None:
        scope = self.scopes[-1]
        if name in scope:
            raise self.error(f"redefinition of SSA value '{name}'", token)
        scope[name] = values
        fwd = self.forward[-1]
        if fwd:
            for i, v in enumerate(values):
                ph = fwd.pop((name, i), None)
                if ph is not None:
                    if ph.type is not v.type:
                        raise self.error(f"definition of SSA value '{name}#{i}' has type "
                                         f"'{v.type}'", token).note(
                            f"previously used here with type '{ph.type}'",
                            self.location_at(ph.token))
                    ph.replace_all_uses_with(v)

    def define_value(self, name: str, value: Value, token: int) -> None:
        """For custom parsers that define block arguments or results themselves."""
        self._define(name, [value], token)

    def _finish_scope(self) -> None:
        """At the end of an isolated scope every forward reference must have been defined."""
        fwd = self.forward[-1]
        if fwd:
            ph = min(fwd.values(), key=lambda p: p.token)
            raise self.error(f"use of undeclared SSA value name '{ph.name}'", ph.token)

    # ----- regions and blocks -----------------------------------------------------------

    def parse_region_arguments(self) -> list:
        """`(%a : T, ...)` before a custom form's region (linalg.map's body, gpu.func's
        signature and attributions): (name, type, loc, token) entries for `parse_region`."""
        self.expect("(")
        args = []
        if self.tok != ")":
            while True:
                tk = self.i
                name = self.parse_operand_ref().name
                self.expect(":")
                args.append((name, self.parse_type(), None, tk))
                if not self.accept(","):
                    break
        self.expect(")")
        return args

    def parse_region(self, arguments=None, *, isolated: bool = False) -> Region:
        """Parse `{ ... }`. `arguments` (name, type, loc, token) define the entry block's
        arguments for custom forms such as `func.func @f(%x: f32)`."""
        self.expect("{", "to begin a region")
        region = Region()
        self.scopes.append({})
        if isolated:
            self.isolated.append(len(self.scopes) - 1)
            self.forward.append({})
        self.block_scopes.append({})
        try:
            toks = self.toks
            if arguments is not None:
                entry = region.add_block(Block())
                for name, type, loc, tk in arguments:
                    self._define(name, [entry.add_argument(type, loc)], tk)
                if toks[self.i] and toks[self.i][0] == "^":
                    raise self.error("invalid block name in region with named arguments",
                                     self.i)
                self._parse_block_body(entry)
            elif toks[self.i] != "}" and toks[self.i][:1] != "^":
                entry = region.add_block(Block())
                self._parse_block_body(entry)
            while toks[self.i][:1] == "^":
                self._parse_block(region)
            self.expect("}", "to end region")
            blocks = self.block_scopes[-1]
            for name, (block, tk, defined) in blocks.items():
                if not defined:
                    raise self.error(f"reference to an undefined block '{name}'", tk)
            if isolated:
                self._finish_scope()
        finally:
            self.block_scopes.pop()
            if isolated:
                self.isolated.pop()
                self.forward.pop()
            self.scopes.pop()
        return region

    def _block_for(self, name: str, token: int) -> list:
        blocks = self.block_scopes[-1]
        entry = blocks.get(name)
        if entry is None:
            entry = blocks[name] = [Block(), token, False]
        return entry

    def _parse_block(self, region: Region) -> None:
        tk = self.i
        name = self.next()
        entry = self._block_for(name, tk)
        if entry[2]:
            raise self.error(f"redefinition of block '{name}'", tk)
        entry[2] = True
        block = entry[0]
        region.add_block(block)
        if self.accept("("):
            if self.tok != ")":
                while True:
                    atk = self.i
                    ref = self.parse_operand_ref()
                    self.expect(":")
                    t = self.parse_type()
                    loc = self.parse_trailing_location() if self.tok == "loc" else None
                    self._define(ref.name, [block.add_argument(t, loc)], atk)
                    if not self.accept(","):
                        break
            self.expect(")")
        self.expect(":", "after block name")
        self._parse_block_body(block)

    def _parse_block_body(self, block: Block) -> None:
        toks = self.toks
        append = block.append
        while True:
            t = toks[self.i]
            if not t or t == "}" or t[0] == "^":
                return
            append(self.parse_operation())

    def parse_successor(self) -> Block:
        tk = self.i
        t = self.toks[tk]
        if not t.startswith("^"):
            raise self.error("expected block name")
        self.i += 1
        if not self.block_scopes:
            raise self.error("successor outside of a region", tk)
        return self._block_for(t, tk)[0]

    def parse_successor_with_args(self) -> tuple[Block, list[Value]]:
        """`^bb1(%a, %b : f32, i32)` as custom forms of branch ops write it."""
        block = self.parse_successor()
        values = []
        if self.accept("("):
            refs = self.parse_operand_refs()
            self.expect(":")
            types = self.parse_type_list()
            if len(types) != len(refs):
                raise self.error("mismatch between operand and type counts")
            values = [self.resolve(r, t) for r, t in zip(refs, types)]
            self.expect(")")
        return block, values

    # ----- attributes -------------------------------------------------------------------

    def parse_attr_dict_body(self) -> dict:
        """`{k = v, flag}` starting at `{`; returns a plain dict (order preserved)."""
        self.expect("{")
        out: dict = {}
        toks = self.toks
        if toks[self.i] == "}":
            self.i += 1
            return out
        while True:
            tk = self.i
            key = toks[tk]
            if key[:1] == '"':
                key = unescape(key)
            elif not starts_identifier(key):
                raise self.error("expected attribute name")
            self.i += 1
            if key in out:
                raise self.error(f"duplicate key '{key}' in dictionary attribute", tk)
            if toks[self.i] == "=":
                self.i += 1
                out[key] = self.parse_attribute()
            else:
                out[key] = UNIT
            if toks[self.i] == ",":
                self.i += 1
                continue
            if toks[self.i] == "}":
                self.i += 1
                return out
            raise self.error("expected ',' or '}' in attribute dictionary")

    def _memo_attr_dict(self) -> dict:
        """`parse_attr_dict_body`, memoized by token span for short dictionaries."""
        start = self.i
        end = self._balanced_end(start, "{", "}", 24)
        if end < 0:
            return self.parse_attr_dict_body()
        key = tuple(self.toks[start:end])
        d = self._dict_memo.get(key)
        if d is not None:
            self.i = end
            return dict(d)
        d = self.parse_attr_dict_body()
        if self.i == end and not any(isinstance(a, _DeferredLoc) for a in d.values()):
            self._dict_memo[key] = dict(d)
        return d

    def parse_optional_attr_dict(self) -> dict:
        return self.parse_attr_dict_body() if self.tok == "{" else {}

    def parse_attribute(self, type: Type | None = None) -> Attribute:
        tk = self.i
        t = self.toks[tk]
        if not t:
            raise self.error("expected attribute value, found end of input")
        c = t[0]
        if c == '"':
            self.i += 1
            value = unescape(t)
            if self.toks[self.i] == ":" and self._starts_type(self.peek()):
                self.i += 1
                return StringAttr(value, self.parse_type())
            return StringAttr(value)
        if starts_digit(c) or c == "-":
            return self._parse_number_attr(type)
        if c == "[":
            self.i += 1
            items = []
            if self.tok != "]":
                while True:
                    items.append(self.parse_attribute())
                    if not self.accept(","):
                        break
            self.expect("]", "to end array attribute")
            return ArrayAttr(items)
        if c == "{" and t == "{":
            return DictionaryAttr(self.parse_attr_dict_body())
        if c == "@":
            return self._parse_symbol_ref()
        if c == "#":
            self.i += 1
            alias = self.attr_aliases.get(t)
            if alias is not None:
                return alias
            if "." not in t and "<" not in t:  # `#foo<...>`: opaque dialect attribute
                raise self.error(f"undefined symbol alias id '{t[1:]}'", tk)
            if self.toks[self.i] == ":" and self._starts_type(self.peek()):
                self.i += 1                 # MLIR's optional type of a dialect attribute
                return OpaqueAttr(t[1:], self.parse_type())
            return OpaqueAttr(t[1:])
        if t == "true" or t == "false":
            self.i += 1
            return IntegerAttr(1 if t == "true" else 0, I1)
        if t == "unit":
            self.i += 1
            return UNIT
        if t == "loc" and self.peek() == "(":
            return self.parse_trailing_location()
        handler = _KEYWORD_ATTRS.get(t)
        if handler is not None and self.peek() == "<":
            self.i += 2
            attr = handler(self)
            return attr
        if self._starts_type(t):
            return TypeAttr(self.parse_type())
        raise self.error(f"expected attribute value, found {self._describe()}")

    def _parse_number_attr(self, type: Type | None) -> Attribute:
        tk = self.i
        neg = self.accept("-")
        t = self.next()
        if not starts_digit(t) or t.endswith("x"):  # `0x`, `4x` lex as shape tokens
            raise self.error("expected a number", tk)
        if self.tok == ":":
            self.i += 1
            type = self.parse_type()
        is_float_lit = "." in t
        if type is None:
            type = F64 if is_float_lit else I64
        if isinstance(type, FloatType):
            if t.startswith("0x"):
                if neg:
                    raise self.error("hexadecimal float literal should not have a leading "
                                     "minus", tk)
                bits = int(t, 16)
                if bits >> type.width:              # as MLIR: more bits than the type has
                    raise self.error("hexadecimal float constant out of range for type", tk)
                return FloatAttr.from_bits(bits, type)
            try:
                return float_attr_from_literal(t, neg, type)
            except ValueError as e:
                raise self.error(str(e), tk) from None
        if is_float_lit:
            raise self.error(f"floating point value not valid for specified type '{type}'", tk)
        if not isinstance(type, (IntegerType, IndexType)):
            raise self.error(f"integer literal not valid for specified type '{type}'", tk)
        v = int(t, 16) if t.startswith("0x") else int(t)
        if neg:
            v = -v
        if isinstance(type, IntegerType):
            w = type.width
            if type.signedness == "unsigned":
                if v < 0 or v >= 1 << w:
                    raise self.error(f"integer constant out of range for attribute", tk)
            elif w == 0:                     # i0 has one value
                if v != 0:
                    raise self.error("integer constant out of range for attribute", tk)
            elif w == 1:
                if v not in (0, 1, -1):
                    raise self.error("integer constant out of range for attribute", tk)
                v = 1 if v else 0
            elif not -(1 << w) <= v < (1 << w):
                raise self.error("integer constant out of range for attribute", tk)
            elif type.signedness == "signless" and v >= 1 << (w - 1):
                v -= 1 << w  # signless values are stored two's-complement, printed signed
        return IntegerAttr(v, type)

    def _parse_symbol_ref(self) -> SymbolRefAttr:
        path = [self._symbol_name(self.next())]
        while self.tok == "::":
            self.i += 1
            if not self.tok.startswith("@"):
                raise self.error("expected nested symbol reference identifier")
            path.append(self._symbol_name(self.next()))
        return SymbolRefAttr(path[0], path[1:])

    @staticmethod
    def _symbol_name(tok: str) -> str:
        return unescape(tok[1:]) if tok[1:2] == '"' else tok[1:]

    def parse_symbol_name(self) -> str:
        t = self.tok
        if not t.startswith("@"):
            raise self.error("expected valid '@'-identifier for symbol name")
        self.i += 1
        return self._symbol_name(t)

    # ----- locations --------------------------------------------------------------------

    def _parse_location_body(self) -> Location:
        tk = self.i
        t = self.next()
        if t == "unknown":
            return UNKNOWN_LOC
        if t.startswith("#"):
            loc = self.attr_aliases.get(t)
            if loc is None:
                d = _DeferredLoc(t, self.attr_aliases, tk)
                self.deferred_locs.append(d)
                return d
            if not isinstance(loc, Location):
                raise self.error(f"expected location, but '{t}' is not a location", tk)
            return loc
        if t.startswith('"'):
            s = unescape(t)
            if self.accept(":"):
                line = self._int_tok()
                self.expect(":")
                col = self._int_tok()
                end = None
                if self.tok == "to":
                    self.i += 1
                    if self.accept(":"):
                        end = (line, self._int_tok())
                    else:
                        end_line = self._int_tok()
                        self.expect(":")
                        end = (end_line, self._int_tok())
                return FileLineColLoc(s, line, col, end)
            child = None
            if self.accept("("):
                child = self._parse_location_body()
                self.expect(")")
            return NameLoc(s, child)
        if t == "callsite":
            self.expect("(")
            callee = self._parse_location_body()
            self.expect("at")
            caller = self._parse_location_body()
            self.expect(")")
            return CallSiteLoc(callee, caller)
        if t == "fused":
            meta = None
            if self.accept("<"):
                meta = self.parse_attribute()
                self.expect(">")
            self.expect("[")
            locs = []
            if self.tok != "]":
                while True:
                    locs.append(self._parse_location_body())
                    if not self.accept(","):
                        break
            self.expect("]")
            return FusedLoc(locs, meta)
        raise self.error("expected location instance", tk)

    def _int_tok(self) -> int:
        t = self.tok
        if not is_digits(t):
            raise self.error("expected integer")
        self.i += 1
        return int(t)

    def _resolve_deferred_locs(self) -> None:
        for d in self.deferred_locs:
            if d.name not in self.attr_aliases:
                raise self.error(f"undefined symbol alias id '{d.name[1:]}'", d.token)

    # ----- types ------------------------------------------------------------------------

    @staticmethod
    def _starts_type(t: str) -> bool:
        if not t:
            return False
        return (t in _SIMPLE_TYPES or t[0] in "!(" or t in _KEYWORD_TYPES
                or _INT_TYPE_RE.match(t) is not None)

    def parse_type(self) -> Type:
        tk = self.i
        t = self.toks[tk]
        simple = _SIMPLE_TYPES.get(t)
        if simple is not None:
            self.i += 1
            return simple
        if not t:
            raise self.error("expected type, found end of input")
        c = t[0]
        if c == "(" or t in _KEYWORD_TYPES:
            # Composite types are memoized by their token span; parsing one costs ~20 tokens
            # of Python work, finding its extent a tight loop over the same tokens.
            end = self._type_end(tk)
            if end > 0:
                key = tuple(self.toks[tk:end])
                ty = self._type_memo.get(key)
                if ty is not None:
                    self.i = end
                    return ty
                ty = self._parse_function_type() if c == "(" else self._parse_keyword_type(t)
                if self.i == end:
                    self._type_memo[key] = ty
                return ty
        if c == "(":
            return self._parse_function_type()
        if c == "!":
            self.i += 1
            alias = self.type_aliases.get(t)
            if alias is not None:
                return alias
            if "." not in t and "<" not in t:  # `#foo<...>`: opaque dialect attribute
                raise self.error(f"undefined symbol alias id '{t[1:]}'", tk)
            from irkit.types import OpaqueType
            return OpaqueType(t[1:])
        m = _INT_TYPE_RE.match(t)
        if m is not None:
            if int(m.group(2)) > 16777215:  # MLIR's limit; also keeps `1 << width` cheap
                raise self.error("integer bitwidth is limited to 16777215 bits", tk)
            self.i += 1
            ty = IntegerType(int(m.group(2)), {"i": "signless", "si": "signed",
                                               "ui": "unsigned"}[m.group(1)])
            _SIMPLE_TYPES[t] = ty
            return ty
        if t in _KEYWORD_TYPES:
            return self._parse_keyword_type(t)
        raise self.error(f"expected non-function type, found {self._describe()}")

    def _parse_keyword_type(self, t: str) -> Type:
        self.i += 1
        self.expect("<", f"in {t} type")
        return _KEYWORD_TYPES[t](self)

    def _type_end(self, j: int) -> int:
        """Index just past the type starting at token `j`, or -1 when unsure."""
        toks = self.toks
        t = toks[j]
        if t in _KEYWORD_TYPES:
            return self._balanced_end(j + 1, "<", ">", 64) if toks[j + 1] == "<" else -1
        if t == "(":
            k = self._balanced_end(j, "(", ")", 64)
            if k < 0 or toks[k] != "->":
                return -1
            k += 1
            if toks[k] == "(":
                k = self._balanced_end(k, "(", ")", 64)
                return -1 if k < 0 or toks[k] == "->" else k
            return self._type_end(k)
        if t in _SIMPLE_TYPES or (t[:1] == "!" and "." in t):
            return j + 1
        return -1

    def _balanced_end(self, j: int, open_: str, close: str, limit: int) -> int:
        """Index past the `close` matching the `open_` at `j` (-1 past `limit` tokens)."""
        toks = self.toks
        depth = 0
        k = j
        stop = j + limit
        while k < stop:
            t = toks[k]
            if t == open_:
                depth += 1
            elif t == close:
                depth -= 1
                if depth == 0:
                    return k + 1
            elif not t:
                return -1
            k += 1
        return -1

    def parse_type_list(self) -> list[Type]:
        types = [self.parse_type()]
        while self.toks[self.i] == ",":
            self.i += 1
            types.append(self.parse_type())
        return types

    def _parse_function_type(self) -> FunctionType:
        self.expect("(")
        inputs = []
        if self.toks[self.i] != ")":
            inputs = self.parse_type_list()
        self.expect(")", "in function type")
        self.expect("->", "in function type")
        return FunctionType(inputs, self.parse_function_result_types())

    def parse_function_result_types(self) -> list[Type]:
        """`-> T` or `-> (T, U)` (the arrow already consumed)."""
        toks = self.toks
        if toks[self.i] == "(":
            # `(` may start a parenthesized result list or a function-typed single result.
            save = self.i
            self.i += 1
            results = []
            if toks[self.i] != ")":
                results = self.parse_type_list()
            self.expect(")")
            if toks[self.i] == "->":
                self.i = save
                return [self._parse_function_type()]
            return results
        return [self.parse_type()]

    def _parse_dims(self, allow_unranked: bool = False, allow_scalable: bool = False):
        """Parse an optional dimension list; returns (shape, scalable) or None if '*'.

        The lexer makes `4x?x[8]x` one token. MLIR also allows blanks around the sizes and
        `x`s (`vector<4 x i32>`); such a list spans several tokens, and is read from the
        source text instead (`_spaced_dims`).
        """
        t = self.tok
        if t.startswith("0x") and len(t) > 2 and not t.endswith("x"):
            # `tensor<0xf32>` lexes as a hex literal: split it back into `0x` + element type.
            # (`0x?x` is an ordinary dimension list: a hex literal cannot end in `x`.)
            return self._split_hex_dims()
        first = self.i
        run = ""
        if t.endswith("x") and (starts_digit(t) or t[0] in "?*["):
            run = t
            self.i += 1
        if self._dims_continue():
            run = self._spaced_dims(first)
        elif not run:
            return (), ()
        return self._dims_of_run(run, first, allow_unranked, allow_scalable)

    def _dims_continue(self) -> bool:
        """Does the current token go on with a dimension list (`4 x`, `[8]`, `8x` after `4x `)?
        No element type starts with a digit, `?`, `*` or `[`."""
        t = self.tok
        if not t:
            return False
        if t == "[" or (t.endswith("x") and (starts_digit(t) or t[0] in "?*[")):
            return True
        return (is_digits(t) or t in ("?", "*")) and self.peek()[:1] == "x"

    def _spaced_dims(self, first: int) -> str:
        """The dimension list starting at token `first`, read from the source text with its
        blanks removed (`4x?x[8]x`); leaves the parser at the element type, re-lexing the
        rest of the shaped-type body when the last `x` began a token (`4 xf32`)."""
        src = self.source
        text = src.text
        start = src.token_offset(first)
        m = _SPACED_DIMS_RE.match(text, start)
        if m is None:
            raise self.error("invalid dimension list", first)
        end = m.end()
        j = first
        while self.toks[j] and src.token_offset(j) < end:
            j += 1
        if self.toks[j] and src.token_offset(j - 1) + len(self.toks[j - 1]) > end:
            # The element type shares a token with the last `x`: parse it from the text.
            body_end = _shape_body_end(text, end)
            sub = Parser(text[end:body_end] + ">", src.name, register_source=False)
            sub.type_aliases = self.type_aliases
            elem = sub.parse_type()
            if sub.tok != ">":
                raise self.error("invalid shape", first)
            while self.toks[j] and src.token_offset(j) < body_end:
                j += 1
            self._pending_element = elem
        self.i = j
        return re.sub(r"\s+", "", m.group())

    def _dims_of_run(self, run: str, tk: int, allow_unranked: bool, allow_scalable: bool):
        """(shape, scalable) of a dimension run `4x?x[8]x`, or None for `*x`."""
        dims = run[:-1].split("x")
        if dims[0] == "*":
            if not allow_unranked or len(dims) != 1:
                raise self.error("unranked shape is not allowed here", tk)
            return None
        shape, scalable = [], []
        for d in dims:
            if d == "?":
                shape.append(None)
                scalable.append(False)
            elif d[0] == "[":
                if not allow_scalable:
                    raise self.error("scalable dimensions are only allowed in vectors", tk)
                shape.append(int(d[1:-1]))
                scalable.append(True)
            elif d == "*":
                raise self.error("unranked '*' must be the only dimension", tk)
            else:
                shape.append(int(d))
                scalable.append(False)
        return tuple(shape), tuple(scalable)

    def _split_hex_dims(self):
        # The hex token may have swallowed part of the element type (`0xbf16`, `0xcomplex`
        # lexes as `0xc` + `omplex`), so re-lex the source text from after `0x` up to the
        # `,` or `>` that ends the element type, and resume at the token found there.
        tk = self.i
        text = self.source.text
        start = self.source.token_offset(tk) + 2
        end = _shape_body_end(text, start)
        j = tk + 1
        while self.toks[j] and self.source.token_offset(j) < end:
            j += 1
        sub = Parser(text[start:end] + ">", self.source.name, register_source=False)
        sub.type_aliases = self.type_aliases
        dims = sub._parse_dims(allow_scalable=True)
        if dims is None:
            raise self.error("invalid shape", tk)
        elem = sub._element_type()
        if sub.tok != ">":
            raise self.error("invalid shape", tk)
        self.i = j
        self._pending_element = elem
        return (0, *dims[0]), (False, *dims[1])

    def _element_type(self) -> Type:
        pending = getattr(self, "_pending_element", None)
        if pending is not None:
            self._pending_element = None
            return pending
        return self.parse_type()

    # ----- affine -----------------------------------------------------------------------

    def _parse_affine_dims_syms(self) -> tuple[dict, int, int]:
        from irkit import affine as aff     # on first use: few modules hold maps
        names: dict = {}
        self.expect("(")
        nd = 0
        if self.tok != ")":
            while True:
                names[self.next()] = aff.AffineDim(nd)
                nd += 1
                if not self.accept(","):
                    break
        self.expect(")")
        ns = 0
        if self.accept("["):
            if self.tok != "]":
                while True:
                    names[self.next()] = aff.AffineSymbol(ns)
                    ns += 1
                    if not self.accept(","):
                        break
            self.expect("]")
        return names, nd, ns

    def _parse_affine_expr(self, names: dict) -> aff.AffineExpr:
        from irkit import affine as aff
        lhs = self._parse_affine_term(names)
        while self.tok in ("+", "-"):
            op = self.next()
            rhs = self._parse_affine_term(names)
            lhs = aff.add(lhs, rhs if op == "+" else aff.neg(rhs))
        return lhs

    def _parse_affine_term(self, names: dict) -> aff.AffineExpr:
        from irkit import affine as aff
        lhs = self._parse_affine_atom(names)
        while self.tok in ("*", "mod", "floordiv", "ceildiv"):
            op = self.next()
            rhs = self._parse_affine_atom(names)
            lhs = aff.AffineBinary({"*": "mul"}.get(op, op), lhs, rhs)
        return lhs

    def _parse_affine_atom(self, names: dict) -> aff.AffineExpr:
        from irkit import affine as aff
        tk = self.i
        t = self.next()
        if t == "(":
            e = self._parse_affine_expr(names)
            self.expect(")")
            return e
        if t == "-":
            return aff.neg(self._parse_affine_atom(names))
        if is_digits(t):
            return aff.AffineConst(int(t))
        e = names.get(t)
        if e is None:
            raise self.error(f"use of undeclared identifier '{t}' in affine expression", tk)
        return e

    def parse_affine_map(self) -> aff.AffineMap:
        from irkit import affine as aff
        names, nd, ns = self._parse_affine_dims_syms()
        self.expect("->")
        self.expect("(")
        results = []
        if self.tok != ")":
            while True:
                results.append(self._parse_affine_expr(names))
                if not self.accept(","):
                    break
        self.expect(")")
        return aff.AffineMap(nd, ns, tuple(results))

    def parse_integer_set(self) -> aff.IntegerSet:
        from irkit import affine as aff
        names, nd, ns = self._parse_affine_dims_syms()
        self.expect(":")
        self.expect("(")
        cons, eqs = [], []
        while True:
            lhs = self._parse_affine_expr(names)
            tk = self.i
            a, b = self.next(), self.next()
            if (a, b) not in ((">", "="), ("<", "="), ("=", "=")):
                raise self.error("expected '>=', '<=' or '==' in integer set constraint", tk)
            rhs = self._parse_affine_expr(names)
            if a == "<":
                lhs, rhs = rhs, lhs
            if not (isinstance(rhs, aff.AffineConst) and rhs.value == 0):
                lhs = aff.add(lhs, aff.neg(rhs))
            cons.append(lhs)
            eqs.append(a == "=")
            if not self.accept(","):
                break
        self.expect(")")
        return aff.IntegerSet(nd, ns, tuple(cons), tuple(eqs))

    # ----- elements literals ------------------------------------------------------------

    def _parse_literal(self):
        """A nested list of element tokens for dense/sparse: numbers, bools, (re, im)."""
        t = self.tok
        if t == "[":
            self.i += 1
            items = []
            if self.tok != "]":
                while True:
                    items.append(self._parse_literal())
                    if not self.accept(","):
                        break
            self.expect("]")
            return items
        if t == "(":
            self.i += 1
            re_ = self._parse_literal()
            self.expect(",")
            im = self._parse_literal()
            self.expect(")")
            return ("complex", re_, im)
        tk = self.i
        if self.accept("-"):
            t2 = self.next()
            if not starts_digit(t2):
                raise self.error("expected number after '-'", tk)
            return "-" + t2
        t = self.next()
        if t in ("true", "false") or starts_digit(t):
            return t
        raise self.error("expected element literal", tk)


def _shape_body_end(text: str, pos: int) -> int:
    """Offset of the `,` or `>` that ends the shaped-type body starting at `pos`."""
    depth = 0
    n = len(text)
    while pos < n:
        c = text[pos]
        if c == '"':
            pos += 1
            while pos < n and text[pos] != '"':
                pos += 2 if text[pos] == "\\" else 1
        elif c == "-" and text.startswith("->", pos):
            pos += 1
        elif c in "<([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ">" or c == ",":
            if depth == 0:
                return pos
            if c == ">":
                depth -= 1
        pos += 1
    return n


def _literal_to_python(lit, et: Type):
    if isinstance(lit, list):
        return [_literal_to_python(x, et) for x in lit]
    if isinstance(lit, tuple):
        inner = et.element if isinstance(et, ComplexType) else et
        return complex(_literal_to_python(lit[1], inner), _literal_to_python(lit[2], inner))
    if lit == "true":
        return True
    if lit == "false":
        return False
    neg = lit.startswith("-")
    body = lit[1:] if neg else lit
    if isinstance(et, FloatType):
        return float_literal_value(body, neg, et)
    elif body.startswith("0x"):
        v = int(body, 16)
    elif "." in body or "e" in body:
        v = float(body)
    else:
        v = int(body)
    return -v if neg else v


def _wrap_ints(values, et: IntegerType):
    """Signless literals wrap to the width as MLIR stores them (`dense<255> : ...xi8` is -1)."""
    if isinstance(values, list):
        return [_wrap_ints(v, et) for v in values]
    if not isinstance(values, int) or isinstance(values, bool):
        return values
    w = et.width
    if et.signedness == "unsigned":
        return values % (1 << w)
    if et.signedness == "signless" and -(1 << (w - 1)) <= values < (1 << w):
        v = values % (1 << w)
        return v - (1 << w) if v >= 1 << (w - 1) else v
    return values


def _literal_shape(lit) -> tuple:
    shape = []
    while isinstance(lit, list):
        shape.append(len(lit))
        if not lit:
            break
        lit = lit[0]
    return tuple(shape)


# ----- keyword types --------------------------------------------------------------------------

def _ty_tensor(p: Parser) -> Type:
    tk = p.i
    dims = p._parse_dims(allow_unranked=True)
    if dims is None:
        elem = p._element_type()
        p.expect(">")
        return UnrankedTensorType(elem)
    elem = p._element_type()
    enc = None
    if p.accept(","):
        enc = p.parse_attribute()
    p.expect(">", "in tensor type")
    if isinstance(elem, (FunctionType,)):
        raise p.error("invalid tensor element type", tk)
    return RankedTensorType(dims[0], elem, enc)


def _ty_memref(p: Parser) -> Type:
    dims = p._parse_dims(allow_unranked=True)
    if dims is None:
        elem = p._element_type()
        space = None
        if p.accept(","):
            space = p.parse_attribute()
        p.expect(">")
        return UnrankedMemRefType(elem, space)
    elem = p._element_type()
    layout = space = None
    if p.accept(","):
        a = p.parse_attribute()
        if isinstance(a, (StridedLayoutAttr, AffineMapAttr)):
            layout = a
            if p.accept(","):
                space = p.parse_attribute()
        else:
            space = a
    if p.tok != ">":
        raise p.error("expected ',' or '>' in memref type")
    p.i += 1
    return MemRefType(dims[0], elem, layout, space)


def _ty_vector(p: Parser) -> Type:
    tk = p.i
    dims = p._parse_dims(allow_scalable=True)
    if dims is None:  # 0-d vectors (`vector<f32>`) are valid MLIR
        raise p.error("vector types must be ranked", tk)
    if None in dims[0]:
        raise p.error("vector types must have static shape", tk)
    elem = p._element_type()
    p.expect(">", "in vector type")
    return VectorType(dims[0], elem, dims[1])


def _ty_complex(p: Parser) -> Type:
    elem = p.parse_type()
    p.expect(">", "in complex type")
    return ComplexType(elem)


def _ty_tuple(p: Parser) -> Type:
    types = [] if p.tok == ">" else p.parse_type_list()
    p.expect(">", "in tuple type")
    return TupleType(types)


_KEYWORD_TYPES = {"tensor": _ty_tensor, "memref": _ty_memref, "vector": _ty_vector,
                  "complex": _ty_complex, "tuple": _ty_tuple}


# ----- keyword attributes ---------------------------------------------------------------------

def _attr_dense(p: Parser) -> Attribute:
    tk = p.i
    if p.tok[:1] == '"':
        raw = unescape(p.next())
        p.expect(">")
        p.expect(":")
        t = p.parse_type()
        return _dense_from_hex(p, raw, t, tk)
    lit = [] if p.tok == ">" else p._parse_literal()
    p.expect(">")
    p.expect(":", "after dense literal")
    t = p.parse_type()
    if not isinstance(t, (RankedTensorType, VectorType)) or not t.has_static_shape:
        raise p.error("elements literal type must be a statically shaped tensor or vector", tk)
    try:
        values = _literal_to_python(lit, t.element)
    except ValueError as e:
        raise p.error(str(e), tk) from None
    et = t.element
    if isinstance(et, IntegerType) and et.width > 1 and et.width <= 64:
        values = _wrap_ints(values, et)
    shape = _literal_shape(values)
    if isinstance(values, list) and shape != tuple(t.shape):
        if not (shape == (0,) and t.num_elements == 0):
            raise p.error(f"inferred shape of elements literal ([{', '.join(map(str, shape))}]) "
                          f"does not match type ([{', '.join(map(str, t.shape))}])", tk)
    import numpy as np
    try:
        arr = np.array(values, dtype=_np_dtype(t.element))
    except (OverflowError, ValueError, TypeError) as e:
        raise p.error(f"invalid element literal: {e}", tk) from None
    # A splat stays 0-d (DenseElementsAttr keeps splats that way): broadcasting first would
    # materialize `dense<1> : tensor<99999999999x99999999999xf32>`.
    return DenseElementsAttr(t, arr)


def _np_dtype(et):
    from irkit.attributes import numpy_dtype
    return numpy_dtype(et)


def _dense_from_hex(p: Parser, raw: str, t: Type, tk: int) -> Attribute:
    import numpy as np
    if not raw.startswith("0x"):
        raise p.error("expected hex string in dense attribute", tk)
    try:
        data = bytes.fromhex(raw[2:])
    except ValueError:
        raise p.error("invalid hex string in dense attribute", tk) from None
    if isinstance(t.element, FloatType):
        from irkit.float_arrays import from_raw
        arr = from_raw(data, t.element, t.num_elements)
        if arr is None:
            raise p.error("elements hex data size is invalid for provided type", tk)
        return DenseElementsAttr(t, arr.reshape(t.shape))
    dtype = np.dtype(_np_dtype(t.element))
    n = t.num_elements
    if len(data) == dtype.itemsize and n != 1:
        arr = np.broadcast_to(np.frombuffer(data, dtype=dtype)[0], t.shape)
    elif len(data) == dtype.itemsize * n:
        arr = np.frombuffer(data, dtype=dtype).reshape(t.shape)
    else:
        raise p.error(f"elements hex data size is invalid for provided type", tk)
    return DenseElementsAttr(t, arr)


def _attr_dense_resource(p: Parser) -> Attribute:
    name = p.next()
    p.expect(">")
    p.expect(":")
    t = p.parse_type()
    handle = p.resources.setdefault(name, ResourceHandle(name))
    return DenseResourceAttr(handle, t)


def _attr_sparse(p: Parser) -> Attribute:
    tk = p.i
    idx = p._parse_literal()
    p.expect(",")
    vals = p._parse_literal()
    p.expect(">")
    p.expect(":")
    t = p.parse_type()
    if not isinstance(t, (RankedTensorType, VectorType)):
        raise p.error("sparse elements literal must have a tensor or vector type", tk)
    try:
        return SparseElementsAttr(t, _literal_to_python(idx, I64),
                                  _literal_to_python(vals, t.element))
    except ValueError as e:             # a float literal the element type cannot hold
        raise p.error(str(e), tk) from None


def _attr_array(p: Parser) -> Attribute:
    tk = p.i
    et = p.parse_type()
    if not isinstance(et, (IntegerType, FloatType)):
        raise p.error("expected integer or float type in dense array", tk)
    values = []
    if p.accept(":"):
        while True:
            lit = p._parse_literal()
            if isinstance(lit, (list, tuple)):
                raise p.error("expected scalar in dense array", tk)
            try:
                values.append(_literal_to_python(lit, et))
            except ValueError as e:     # a float literal the element type cannot hold
                raise p.error(str(e), tk) from None
            if not p.accept(","):
                break
    p.expect(">", "to end dense array")
    return DenseArrayAttr(et, values)


def _attr_affine_map(p: Parser) -> Attribute:
    m = p.parse_affine_map()
    p.expect(">")
    return AffineMapAttr(m)


def _attr_affine_set(p: Parser) -> Attribute:
    s = p.parse_integer_set()
    p.expect(">")
    return IntegerSetAttr(s)


def _attr_strided(p: Parser) -> Attribute:
    p.expect("[")
    strides = []
    if p.tok != "]":
        while True:
            strides.append(_dyn_int(p))
            if not p.accept(","):
                break
    p.expect("]")
    offset = 0
    if p.accept(","):
        p.expect("offset")
        p.expect(":")
        offset = _dyn_int(p)
    p.expect(">")
    return StridedLayoutAttr(strides, offset)


def _dyn_int(p: Parser):
    if p.accept("?"):
        return None
    neg = p.accept("-")
    t = p.next()
    if not is_digits(t):
        raise p.error("expected integer or '?'", p.i - 1)
    return -int(t) if neg else int(t)


_KEYWORD_ATTRS = {"dense": _attr_dense, "dense_resource": _attr_dense_resource,
                  "sparse": _attr_sparse, "array": _attr_array, "affine_map": _attr_affine_map,
                  "affine_set": _attr_affine_set, "strided": _attr_strided}


def _is_isolated(cls) -> bool:
    from irkit.opdef import IsolatedFromAbove
    return cls.has_trait(IsolatedFromAbove)


# ----- entry points ---------------------------------------------------------------------------

def parse_module(text: str, filename: str = "<stdin>", *, allow_unregistered: bool = False,
                 verify: bool = True) -> Operation:
    """Parse (and by default verify) a module; raises ParseError / VerifyError.

    Ops are looked up in the registry: the dialects must be known (`irkit.dialects.
    register_all()`, which the tools and `irkit.parse_module` call), or each op not known
    is an error unless `allow_unregistered`."""
    p = Parser(text, filename, allow_unregistered=allow_unregistered)
    with gc_paused():
        try:
            module = p.parse_module()
        except RecursionError:
            raise p.error("nesting too deep") from None
        if verify:
            from irkit.verifier import verify as _verify
            _verify(module)
    return module


def parse_type(text: str) -> Type:
    p = Parser(text, "<type>", register_source=False)
    t = p.parse_type()
    if p.tok:
        raise p.error("unexpected trailing text after type")
    return t


def parse_attribute(text: str) -> Attribute:
    p = Parser(text, "<attribute>", register_source=False)
    a = p.parse_attribute()
    if p.tok:
        raise p.error("unexpected trailing text after attribute")
    return a


def parse_snippet(text: str, filename: str = "<snippet>") -> Operation:
    """Parse a list of ops whose free SSA values become arguments of a wrapper block.

    Docstring examples such as `%r = arith.addf %a, %b : f32` use values they do not
    define; their types are known from the uses, so each undefined value turns into an
    argument of the entry block of an `irkit.snippet` op that holds the ops. Verification is
    left to the caller (ops that need a particular parent will not have it here).
    """
    p = Parser(text, filename, allow_unregistered=True)
    body = Block()
    toks = p.toks
    while toks[p.i]:
        t = toks[p.i]
        if t[0] in "!#" and toks[p.i + 1] == "=":
            p._parse_alias_def()
        else:
            body.append(p.parse_operation())
    for (name, number), ph in sorted(p.forward[0].items(), key=lambda kv: kv[1].token):
        ph.replace_all_uses_with(body.add_argument(ph.type))
    p.forward[0].clear()
    p._resolve_deferred_locs()
    only = body.first
    if only is not None and only is body.last and only.name == "irkit.snippet" and not body.args:
        return only.detach()  # the printed form of a snippet reads back as itself
    region = Region()
    region.add_block(body)
    return Operation.create("irkit.snippet", regions=[region])
