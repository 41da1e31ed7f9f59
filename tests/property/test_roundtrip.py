"""Print -> parse -> print is a fixpoint, for random well-typed modules.

The strategies build IR objects directly (not text), so the printer sees shapes of IR that no
parser produced: nested regions of unregistered ops, multi-block regions whose blocks take
arguments and branch through an unregistered terminator (`ut.br`), multi-result ops, every
builtin type and every builtin attribute kind, including the float values that are awkward to
spell (NaN, infinities, -0.0, values not exactly representable in six digits).

Properties:

- generic form: `print(parse(print(m))) == print(m)`;
- custom form (`module`, `func.func`, `return`): the same fixpoint;
- `--mlir-print-debuginfo`: locations of ops and block arguments survive the round trip;
- where the real `mlir-opt` is installed, it accepts irkit's generic output.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irkit import affine as aff
from irkit.attributes import (
    UNIT, UNKNOWN_LOC, AffineMapAttr, ArrayAttr, BoolAttr, CallSiteLoc, DenseArrayAttr,
    DenseElementsAttr, DenseResourceAttr, DictionaryAttr, FileLineColLoc, FloatAttr, FusedLoc,
    IntegerAttr, IntegerSetAttr, NameLoc, OpaqueAttr, ResourceHandle, SparseElementsAttr,
    StridedLayoutAttr, StringAttr, SymbolRefAttr, TypeAttr,
)
from irkit.ir import Block, Operation, Region
from irkit.parser import parse_module
from irkit.printer import print_op
from irkit.types import (
    BF16, F16, F32, F64, I1, INDEX, NONE, ComplexType, FunctionType, IntegerType, MemRefType,
    OpaqueType, RankedTensorType, TupleType, UnrankedMemRefType, UnrankedTensorType,
    VectorType,
)

MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ----- types ----------------------------------------------------------------------------------

INT_TYPES = [IntegerType(1), IntegerType(8), IntegerType(32), IntegerType(64),
             IntegerType(8, "signed"), IntegerType(16, "signed"),
             IntegerType(64, "unsigned"), IntegerType(8, "unsigned")]
FLOAT_TYPES = [F16, BF16, F32, F64]

ints = st.sampled_from(INT_TYPES)
floats_t = st.sampled_from(FLOAT_TYPES)
scalars = st.one_of(ints, floats_t, st.just(INDEX))
opaque_types = st.sampled_from([OpaqueType("ut.handle"), OpaqueType('foo.bar<"x", 1>'),
                                OpaqueType("llvm.ptr")])
complexes = st.builds(ComplexType, st.one_of(floats_t, ints))
dims = st.lists(st.one_of(st.integers(0, 5), st.none()), max_size=3)
static_dims = st.lists(st.integers(1, 4), min_size=1, max_size=3)


@st.composite
def vectors(draw):
    shape = draw(static_dims)
    scalable = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    return VectorType(shape, draw(st.one_of(ints, floats_t, st.just(INDEX))), scalable)


element_types = st.one_of(scalars, complexes, opaque_types, vectors())


@st.composite
def memrefs(draw):
    shape = draw(dims)
    elem = draw(st.one_of(scalars, complexes))
    layout = None
    kind = draw(st.integers(0, 2))
    if kind == 1:
        strides = draw(st.lists(st.one_of(st.integers(1, 64), st.none()),
                                min_size=len(shape), max_size=len(shape)))
        layout = StridedLayoutAttr(strides, draw(st.one_of(st.integers(0, 9), st.none())))
    elif kind == 2:
        n = len(shape)
        layout = AffineMapAttr(aff.AffineMap(n, 0, tuple(aff.AffineDim(i) for i in
                                                          reversed(range(n)))))
    space = draw(st.sampled_from([None, IntegerAttr(3), IntegerAttr(1, IntegerType(32)),
                                  OpaqueAttr("gpu.address_space<workgroup>")]))
    if draw(st.booleans()) and layout is None:
        return UnrankedMemRefType(elem, space)
    return MemRefType(shape, elem, layout, space)


tensors = st.one_of(
    st.builds(RankedTensorType, dims, element_types),
    st.builds(UnrankedTensorType, element_types),
)


def _types(leaves):
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.builds(TupleType, st.lists(inner, max_size=3)),
            st.builds(FunctionType, st.lists(inner, max_size=2), st.lists(inner, max_size=2)),
        ),
        max_leaves=4,
    )


types = _types(st.one_of(scalars, complexes, st.just(NONE), opaque_types, tensors, memrefs(),
                         vectors()))

# ----- attributes -----------------------------------------------------------------------------


@st.composite
def integer_attrs(draw):
    t = draw(st.one_of(ints, st.just(INDEX)))
    if t is I1:
        return BoolAttr(draw(st.booleans()))
    w = 64 if t is INDEX else t.width
    if getattr(t, "signedness", "signless") == "unsigned":
        lo, hi = 0, (1 << w) - 1
    else:
        lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    return IntegerAttr(draw(st.integers(lo, hi)), t)


awkward_floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.1, -0.0, 0.0, 1.5, 1e20, 3.4028235e38, 5e-324, 1.0 / 3.0, 65504.0,
                     1.2345678, 123456789.0, math.pi, float("nan"), float("inf"),
                     float("-inf")]),
)
float_attrs = st.builds(lambda v, t: FloatAttr(v, t), awkward_floats, floats_t)

strings = st.text(alphabet=st.one_of(st.characters(codec="utf-8"),
                                     st.sampled_from('"\\\n\t\x00\x7f{}<>')), max_size=12)
bare_names = st.from_regex(r"[a-z_][a-z0-9_$.]{0,6}", fullmatch=True)
sym_names = st.one_of(bare_names, strings.filter(bool))
attr_names = st.one_of(bare_names, strings.filter(bool))  # MLIR rejects an empty name


@st.composite
def affine_exprs(draw, nd, ns, depth=2):
    atoms = [aff.AffineDim(i) for i in range(nd)] + [aff.AffineSymbol(i) for i in range(ns)]
    if not atoms or depth == 0 or draw(st.booleans()):
        if atoms and draw(st.integers(0, 3)):
            return draw(st.sampled_from(atoms))
        return aff.AffineConst(draw(st.integers(-5, 9)))
    kind = draw(st.sampled_from(["add", "sub", "mul", "mod", "floordiv", "ceildiv", "neg"]))
    lhs = draw(affine_exprs(nd, ns, depth - 1))
    if kind in ("add", "sub"):
        rhs = draw(affine_exprs(nd, ns, depth - 1))
        return aff.add(lhs, rhs if kind == "add" else aff.neg(rhs))
    if kind == "neg":
        return aff.neg(lhs)
    # MLIR's affine rules: the right side of * and the divisions is a (positive) constant.
    if isinstance(lhs, aff.AffineConst):
        lhs = atoms[0]
    c = draw(st.integers(2, 7) if kind != "mul" else st.integers(-3, 5).filter(bool))
    return aff.AffineBinary(kind, lhs, aff.AffineConst(c))


@st.composite
def affine_maps(draw):
    nd, ns = draw(st.integers(0, 3)), draw(st.integers(0, 2))
    results = draw(st.lists(affine_exprs(nd, ns), max_size=3))
    return AffineMapAttr(aff.AffineMap(nd, ns, tuple(results)))


@st.composite
def integer_sets(draw):
    nd, ns = draw(st.integers(1, 3)), draw(st.integers(0, 2))
    cons = draw(st.lists(affine_exprs(nd, ns), min_size=1, max_size=3))
    eqs = draw(st.lists(st.booleans(), min_size=len(cons), max_size=len(cons)))
    return IntegerSetAttr(aff.IntegerSet(nd, ns, tuple(cons), tuple(eqs)))


def _element_values(draw, et, n):
    if et is I1:
        return draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if isinstance(et, IntegerType):
        w = et.width
        lo, hi = (0, (1 << w) - 1) if et.signedness == "unsigned" else (
            -(1 << (w - 1)), (1 << (w - 1)) - 1)
        return draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n))
    if et is INDEX:
        return draw(st.lists(st.integers(-1000, 1000), min_size=n, max_size=n))
    width = 32 if et is BF16 else et.width
    vals = st.one_of(st.floats(width=width, allow_subnormal=et is not F16),
                     st.sampled_from([0.1, -0.0, 1.5]))
    return draw(st.lists(vals, min_size=n, max_size=n))


@st.composite
def dense_attrs(draw):
    et = draw(st.one_of(st.sampled_from([I1, IntegerType(8), IntegerType(32),
                                         IntegerType(8, "unsigned"), INDEX]), floats_t))
    shape = draw(st.lists(st.integers(1, 3), max_size=3))
    t = draw(st.sampled_from([RankedTensorType, VectorType])) if shape else RankedTensorType
    t = t(shape, et)
    n = int(np.prod(shape)) if shape else 1
    if draw(st.booleans()):
        vals = _element_values(draw, et, 1) * n
    else:
        vals = _element_values(draw, et, n)
    return DenseElementsAttr(t, np.array(vals).reshape(shape))


@st.composite
def sparse_attrs(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=2))
    idx = draw(st.lists(st.tuples(*[st.integers(0, d - 1) for d in shape]),
                        min_size=1, max_size=3, unique=True))
    et = draw(st.sampled_from([IntegerType(32), F32]))
    vals = _element_values(draw, et, len(idx))
    return SparseElementsAttr(RankedTensorType(shape, et), idx, vals)


@st.composite
def resource_attrs(draw):
    n = draw(st.integers(1, 4))
    data = draw(st.binary(min_size=4 * n, max_size=4 * n))
    name = f"blob_{data.hex()}"  # one name per content: a name denotes one blob
    handle = ResourceHandle(name, "builtin", "0x04000000" + data.hex().upper())
    return DenseResourceAttr(handle, RankedTensorType([n], F32))


@st.composite
def dense_arrays(draw):
    et = draw(st.sampled_from([I1, IntegerType(8), IntegerType(32), IntegerType(64), F32, F64]))
    n = draw(st.integers(0, 4))
    return DenseArrayAttr(et, _element_values(draw, et, n))


file_names = st.sampled_from(["a.mlir", "dir/b.py", 'we"ird\\.mlir', "unicodé.irk"])
file_locs = st.builds(FileLineColLoc, file_names, st.integers(1, 500), st.integers(1, 120))
locations = st.recursive(
    st.one_of(file_locs, st.just(UNKNOWN_LOC), st.builds(NameLoc, strings)),
    lambda inner: st.one_of(
        st.builds(NameLoc, strings, inner),
        st.builds(CallSiteLoc, inner, inner),
        st.builds(FusedLoc, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=4,
)

scalar_attrs = st.one_of(
    integer_attrs(), float_attrs, st.builds(StringAttr, strings), st.just(UNIT),
    st.builds(StringAttr, strings, st.just(IntegerType(32))),
    st.builds(lambda p, n: SymbolRefAttr(p, n), sym_names, st.lists(sym_names, max_size=2)),
    st.builds(TypeAttr, types), st.sampled_from([OpaqueAttr('ut.attr<"x", [1, 2]>'),
                                                OpaqueAttr("arith.fastmath<none>")]),
    dense_arrays(), dense_attrs(), sparse_attrs(), resource_attrs(), affine_maps(),
    integer_sets(), st.builds(StridedLayoutAttr, st.lists(st.one_of(st.integers(1, 9),
                                                                    st.none()), max_size=3)),
    file_locs,
)

attributes = st.recursive(
    scalar_attrs,
    lambda inner: st.one_of(
        st.builds(ArrayAttr, st.lists(inner, max_size=3)),
        st.builds(DictionaryAttr, st.dictionaries(attr_names, inner,
                                                  max_size=3)),
    ),
    max_leaves=6,
)
attr_dicts = st.dictionaries(attr_names, attributes, max_size=3)

# ----- modules --------------------------------------------------------------------------------

OP_NAMES = st.sampled_from(["ut.op", "ut.compute", "foo.bar", "ut.multi"])


class _Gen:
    """Builds one random module with a draw function; values only used where they dominate."""

    def __init__(self, draw, locs: bool) -> None:
        self.draw = draw
        self.locs = locs
        self.budget = 14

    def loc(self):
        return self.draw(locations) if self.locs else None

    value_types = st.one_of(scalars, types)

    def op(self, visible: list):
        """A non-terminator op using values from `visible`; returns it."""
        d = self.draw
        self.budget -= 1
        operands = d(st.lists(st.sampled_from(visible), max_size=3)) if visible else []
        results = d(st.lists(self.value_types, max_size=3))
        props = d(attr_dicts) if d(st.integers(0, 3)) == 0 else None
        nreg = d(st.integers(0, 2)) if self.budget > 0 else 0
        op = Operation.create(d(OP_NAMES), operands, results, properties=props,
                              attributes=d(attr_dicts), regions=0, location=self.loc())
        for _ in range(nreg):
            op.regions.append(self.region(op, visible))
        return op

    def region(self, parent, outer: list) -> Region:
        d = self.draw
        region = Region(parent)
        nblocks = d(st.integers(0, 3)) if self.budget > 0 else d(st.integers(0, 1))
        blocks = []
        for i in range(nblocks):
            arg_types = d(st.lists(self.value_types, max_size=2))
            locs = [self.loc() for _ in arg_types] if self.locs else None
            blocks.append(region.add_block(Block(arg_types, locs)))
        for i, b in enumerate(blocks):
            visible = outer + list(b.args)
            for _ in range(d(st.integers(0, 3))):
                op = self.op(visible)
                b.append(op)
                visible = visible + op.results
            if nblocks > 1:
                # Branch to later blocks only (the entry block may not have predecessors).
                targets = d(st.lists(st.sampled_from(blocks[1:]), max_size=2))
                args = []
                for t in targets:
                    for a in t.args:
                        same = [v for v in visible if v.type is a.type]
                        args.append(d(st.sampled_from(same)) if same else None)
                if None in args:
                    targets, args = [], []
                b.append(Operation.create("ut.br", args, [], successors=targets,
                                          location=self.loc()))
        return region


@st.composite
def generic_modules(draw, locs: bool = False):
    g = _Gen(draw, locs)
    module = Operation.create("builtin.module", regions=1, location=g.loc())
    body = module.regions[0].add_block()
    for _ in range(draw(st.integers(1, 3))):
        body.append(g.op([]))
    return module


@st.composite
def func_modules(draw, locs: bool = False):
    """Modules of func.func ops (custom syntax) with unregistered ops in their bodies."""
    from irkit.dialects.func import FuncOp
    g = _Gen(draw, locs)
    module = Operation.create("builtin.module", regions=1, location=g.loc())
    body = module.regions[0].add_block()
    for k in range(draw(st.integers(1, 3))):
        ins = draw(st.lists(g.value_types, max_size=3))
        outs = draw(st.lists(g.value_types, max_size=2))
        if draw(st.integers(0, 4)) == 0:
            fn = FuncOp.create(f"decl{k}", ins, outs, location=g.loc(), visibility="private")
            fn.body.blocks.clear()
            body.append(fn)
            continue
        fn = FuncOp.create(draw(st.sampled_from([f"f{k}", f"fn.{k}", f"g_{k}"])), ins, outs,
                           location=g.loc())
        if g.locs:
            for a in fn.args:
                a.location = g.loc()
        entry = fn.entry
        visible = list(entry.args)
        for _ in range(draw(st.integers(0, 3))):
            op = g.op(visible)
            entry.append(op)
            visible += op.results
        rets = []
        for t in outs:
            same = [v for v in visible if v.type is t]
            if same:
                rets.append(draw(st.sampled_from(same)))
            else:
                op = Operation.create("ut.make", [], [t], location=g.loc())
                entry.append(op)
                rets.append(op.result)
        entry.append(Operation.create("func.return", rets, [], location=g.loc()))
        body.append(fn)
    return module


# ----- properties -----------------------------------------------------------------------------


def _reparse(text: str, name: str):
    return parse_module(text, name, allow_unregistered=True)


def _assert_fixpoint(module, **flags):
    first = print_op(module, **flags)
    again = print_op(_reparse(first, "first.mlir"), **flags)
    assert again == first
    # And once more from irkit's own output: the text is stable, not just one step.
    assert print_op(_reparse(again, "second.mlir"), **flags) == again


@SETTINGS
@given(generic_modules())
def test_generic_form_round_trips(module):
    _assert_fixpoint(module, generic=True)


@SETTINGS
@given(func_modules())
def test_custom_form_round_trips(module):
    _assert_fixpoint(module)


@SETTINGS
@given(func_modules())
def test_custom_and_generic_forms_agree(module):
    custom = print_op(module)
    generic = print_op(module, generic=True)
    assert print_op(_reparse(custom, "c.mlir"), generic=True) == generic
    assert print_op(_reparse(generic, "g.mlir")) == custom


@settings(SETTINGS, max_examples=20)
@given(generic_modules(locs=True))
def test_debuginfo_round_trips(module):
    _assert_fixpoint(module, generic=True, debuginfo=True)


@settings(SETTINGS, max_examples=20)
@given(func_modules(locs=True))
def test_debuginfo_custom_form_round_trips(module):
    _assert_fixpoint(module, debuginfo=True)


@SETTINGS
@given(st.lists(types, min_size=1, max_size=4))
def test_types_round_trip(ts):
    from irkit.parser import parse_type
    for t in ts:
        assert parse_type(str(t)) is t


@SETTINGS
@given(attributes)
def test_attributes_round_trip(a):
    from irkit.parser import parse_attribute
    text = a.format()
    if "dense_resource" in text:
        return  # needs the module's resource section; covered by the module properties
    b = parse_attribute(text)
    assert b.format() == text
    if "0x7" not in text and "0xF" not in text and "nan" not in text:
        assert b == a or isinstance(a, FileLineColLoc)
        assert hash(b) == hash(a) or isinstance(a, FileLineColLoc)


needs_mlir = pytest.mark.skipif(not (os.path.exists(MLIR_OPT) or shutil.which("mlir-opt")),
                                reason="mlir-opt not installed")


def _mlir_opt() -> str:
    return MLIR_OPT if os.path.exists(MLIR_OPT) else shutil.which("mlir-opt")


@needs_mlir
@settings(SETTINGS, max_examples=25)
@given(st.one_of(generic_modules(), func_modules(), generic_modules(locs=True)))
def test_mlir_opt_accepts_generic_output(module):
    text = print_op(module, generic=True, debuginfo=True)
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run([_mlir_opt(), "--allow-unregistered-dialect", "--mlir-print-op-generic",
                            f.name], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)
    assert r.returncode == 0, f"mlir-opt rejected irkit output:\n{r.stderr}\n---\n{text}"
    # And irkit reads MLIR's own generic output of the same module back.
    back = _reparse(r.stdout, "from_mlir.mlir")
    assert print_op(_reparse(print_op(back, generic=True), "x.mlir"), generic=True) == \
        print_op(back, generic=True)
