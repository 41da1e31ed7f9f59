"""`memory.load` / `memory.store` and `memory.vector_load` / `memory.vector_store`: the
`memory` dialect's ops that read and write elements of a buffer.

These are the dialect's element accesses: one element at one `index` per dimension (MLIR's
`memref.load` / `memref.store`), or a 1-D vector of consecutive elements along the last
dimension (MLIR's `vector.load` / `vector.store`). They sit apart from `buffers` so that
the dialect's home stays about allocation, copies and effects. This module holds:

- `EraseUnusedRead`: the canonicalization that erases a load or vector load whose value is
  unused (a read changes nothing, but is not `Pure`, so dead-code elimination keeps it).
- `memory.load` / `memory.store`, with the index-count check they share with the vector ops.
- `memory.vector_load` / `memory.vector_store`, which also require a 1-D fixed-length vector
  of the memref's element type that fits in the last dimension, at a unit stride there; a
  vector store may be `nontemporal` (MLIR's attribute of `vector.store`).
- `memory.fence`: orders the running thread's non-temporal stores before its later ones;
  here because a streaming store is not safe to share without it.
- `memory.check`: the run-time error channel, a conditional write of an error record (a
  site code, a value and a bound) into a status buffer; it lives here because it is, like
  the others, a store of elements, guarded by a condition.

Their reference semantics index the numpy array of the buffer: an index out of bounds, a
vector past the end of the last dimension or over a non-unit stride, a write to a read-only
buffer or an access after `dealloc` is an `InterpreterError` naming the op.

Imports. This module builds on `buffers` (the dialect object, the `MemRef` constraint, the
effect names, custom-syntax and interpreter helpers) and on `view` (layouts), and registers
its ops on that one `memory` dialect; the package `irkit.dialects.memory` imports it last.
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import IntegerAttr
from irkit.ir import Operation
from irkit.opdef import (
    AnyType, AnyVector, BareOp, Bool, Constraint, I64Attr, Index, Op, Operand, OptProp, Prop,
    Result, StrAttr, VarOperand, attr_constraint,
)
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.types import I1, I64, IndexType, MemRefType
from irkit.dialects.memory.buffers import (
    READ, WRITE, MemRef, check_live, checked_index, checked_vector, resolve_indices, indices_text,
    parse_memref_type, parse_refs, check_writable, memory,
)
from irkit.dialects.memory.view import strides_and_offset


# ---------------------------------------------------------------------------------------------
# load, store
# ---------------------------------------------------------------------------------------------


class EraseUnusedRead(RewritePattern):
    """A load whose value is unused is dead: a read changes nothing (MLIR erases ops whose
    only effects are reads; the core's dead-code test knows only `Pure`, which a load is not,
    since it may not move across stores)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if op.results[0].has_uses():
            return False
        rewriter.erase_op(op)
        return True


class _EraseUnusedLoad(EraseUnusedRead):
    root = "memory.load"


class _EraseUnusedVectorLoad(EraseUnusedRead):
    root = "memory.vector_load"


def _verify_indices(op, t: MemRefType, n: int, what: str) -> None:
    if n != t.rank:
        raise op.error(f"incorrect number of indices for {what}, expected {t.rank} but got {n}")


@memory.op
class LoadOp(Op):
    """One element, at one `index` per dimension.

        %x = memory.load %m[%i, %j] : memref<?x4xf32>
    """

    name = "memory.load"
    memref = Operand(MemRef)
    indices = VarOperand(Index)
    result = Result(AnyType)
    canonicalization_patterns = (_EraseUnusedLoad,)

    def infer_result_types(self):
        return [self.memref.type.element]

    def verify_(self):
        t = self.memref.type
        _verify_indices(self, t, len(self.indices), "load")
        if self.result.type is not t.element:
            raise self.error(f"result type {self.result.type} does not match the memref "
                             f"element type {t.element}")

    def memory_effects(self):
        return [(READ, self.memref)]

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_operand_ref()
        idx = parse_refs(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_memref_type(p)
        return cls.build(p.resolve(ref, t), resolve_indices(p, idx), result_types=[t.element],
                         attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.memref)}{indices_text(p, self.indices)}")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}")

    def interpret(self, interp, values):
        a = values[0]
        check_live(interp, self, a)
        v = a[checked_index(self, a, values[1:])]
        return [int(v) if isinstance(self.result.type, IndexType) else v]


@memory.op
class StoreOp(Op):
    """Writes one element, at one `index` per dimension.

        memory.store %x, %m[%i, %j] : memref<?x4xf32>
    """

    name = "memory.store"
    value = Operand(AnyType)
    memref = Operand(MemRef)
    indices = VarOperand(Index)

    def infer_result_types(self):
        return []

    def verify_(self):
        t = self.memref.type
        _verify_indices(self, t, len(self.indices), "store")
        if self.value.type is not t.element:
            raise self.error(f"value type {self.value.type} does not match the memref element "
                             f"type {t.element}")

    def memory_effects(self):
        return [(WRITE, self.memref)]

    @classmethod
    def parse(cls, p, num_results):
        val = p.parse_operand_ref()
        p.expect(",")
        ref = p.parse_operand_ref()
        idx = parse_refs(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_memref_type(p)
        return cls.build(p.resolve(val, t.element), p.resolve(ref, t), resolve_indices(p, idx),
                         attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.value)}, {p.value(self.memref)}{indices_text(p, self.indices)}")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}")

    def interpret(self, interp, values):
        v, a = values[0], values[1]
        check_live(interp, self, a)
        idx = checked_index(self, a, values[2:])
        check_writable(self, a)
        a[idx] = v


# ---------------------------------------------------------------------------------------------
# vector_load, vector_store
# ---------------------------------------------------------------------------------------------


def _verify_vector(op, t: MemRefType, v, n_indices: int, what: str) -> None:
    if t.rank == 0:
        raise op.error("requires a memref of rank at least 1")
    _verify_indices(op, t, n_indices, what)
    if v.rank != 1 or v.scalable[0]:
        raise op.error(f"requires a 1-D fixed-length vector, got {v}")
    if v.element is not t.element:
        raise op.error(f"vector element type {v.element} does not match the memref element "
                       f"type {t.element}")
    last = t.shape[-1]
    if last is not None and v.shape[0] > last:
        raise op.error(f"a vector of {v.shape[0]} elements does not fit in the last dimension "
                       f"(size {last})")
    layout = strides_and_offset(t)
    if layout is None:
        raise op.error(f"requires a strided or identity layout, got {t.layout}")
    if layout[0][-1] not in (None, 1) and v.shape[0] > 1:
        raise op.error(f"requires a unit stride in the last dimension, got {layout[0][-1]}")


@memory.op
class VectorLoadOp(Op):
    """A 1-D vector of consecutive elements along the last dimension, starting at the
    indices (MLIR's vector.load). The elements must lie within the last dimension: anything
    else is undefined (callers guarantee it; the interpreter checks).

        %v = memory.vector_load %m[%i, %j] : memref<?x8xf32>, vector<8xf32>
    """

    name = "memory.vector_load"
    memref = Operand(MemRef)
    indices = VarOperand(Index)
    result = Result(AnyVector)
    canonicalization_patterns = (_EraseUnusedVectorLoad,)

    def verify_(self):
        _verify_vector(self, self.memref.type, self.result.type, len(self.indices), "load")

    def memory_effects(self):
        return [(READ, self.memref)]

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_operand_ref()
        idx = parse_refs(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_memref_type(p)
        p.expect(",")
        v = p.parse_type()
        return cls.build(p.resolve(ref, t), resolve_indices(p, idx), result_types=[v],
                         attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.memref)}{indices_text(p, self.indices)}")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}, {self.result.type}")

    def interpret(self, interp, values):
        a = values[0]
        check_live(interp, self, a)
        return [np.array(a[checked_vector(self, a, values[1:], self.result.type.shape[0])])]


#: MLIR's BoolAttr: an `i1` integer attribute, printed `true` / `false`
BoolAttrC = attr_constraint(IntegerAttr, "bool attribute", lambda a: str(a.type) == "i1")


@memory.op
class VectorStoreOp(Op):
    """Writes a 1-D vector to consecutive elements along the last dimension (MLIR's
    vector.store); the same bounds rule as `memory.vector_load`.

        memory.vector_store %v, %m[%i, %j] : memref<?x8xf32>, vector<8xf32>
        memory.vector_store %v, %m[%i, %j] {nontemporal = true} : memref<?x8xf32>, vector<8xf32>

    `nontemporal = true` (MLIR's spelling) asks for a streaming store: the line is written
    around the caches without being read first (no read-for-ownership), which saves a
    stream of memory traffic when the output is larger than the last-level cache and is
    not read again soon. On x86 such stores are weakly ordered: they are visible to other
    threads only after the storing thread's `memory.fence`. What is stored is the same.
    """

    name = "memory.vector_store"
    value = Operand(AnyVector)
    memref = Operand(MemRef)
    indices = VarOperand(Index)
    nontemporal = OptProp(BoolAttrC, doc="a streaming store (write around the caches)")

    def infer_result_types(self):
        return []

    def verify_(self):
        _verify_vector(self, self.memref.type, self.value.type, len(self.indices), "store")

    def memory_effects(self):
        return [(WRITE, self.memref)]

    @classmethod
    def parse(cls, p, num_results):
        val = p.parse_operand_ref()
        p.expect(",")
        ref = p.parse_operand_ref()
        idx = parse_refs(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        props = {k: attrs.pop(k) for k in list(attrs) if k in cls.spec.prop_names}
        t = parse_memref_type(p)
        p.expect(",")
        v = p.parse_type()
        return cls.build(p.resolve(val, v), p.resolve(ref, t), resolve_indices(p, idx),
                         attributes=attrs, **props)

    def print(self, p):
        p.write(f" {p.value(self.value)}, {p.value(self.memref)}{indices_text(p, self.indices)}")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}, {self.value.type}")

    def interpret(self, interp, values):
        v, a = values[0], values[1]
        check_live(interp, self, a)
        idx = checked_vector(self, a, values[2:], self.value.type.shape[0])
        check_writable(self, a)
        a[idx] = v


@memory.op
class FenceOp(BareOp):
    """Orders every store the running thread made before it, non-temporal ones included,
    before its stores after it, as other threads see them (x86's `sfence`). Streaming
    stores (`memory.vector_store {nontemporal = true}`) go through write-combining buffers
    that x86 leaves unordered with other stores until a fence, so the thread that made them
    runs one before it joins the others or returns (`vector-streaming-stores` places it).

        memory.fence

    It reads and writes no buffer of its own, yet nothing may move across it: it declares
    no memory effects (unknown effects are the conservative answer). The interpreter has
    no buffers to order and does nothing.
    """

    name = "memory.fence"

    def interpret(self, interp, values):
        return None


# ---------------------------------------------------------------------------------------------
# check: the run-time error channel
# ---------------------------------------------------------------------------------------------

#: the status buffer of `memory.check`: [code, value, bound]
STATUS_TYPE = MemRefType((3,), I64)
StatusBuffer = Constraint(lambda t: t == STATUS_TYPE, "memref<3xi64> (code, value, bound)")


class EraseTrueCheck(RewritePattern):
    """A check whose condition is the constant true never records anything (MLIR erases
    `cf.assert true`)."""

    root = "memory.check"       # CheckOp is defined below, so the annotation is a name

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        c = constant_value(op.ok)
        if not (isinstance(c, IntegerAttr) and c.value):
            return False
        rewriter.erase_op(op)
        return True


@memory.op
class CheckOp(Op):
    """Records a run-time error in a status buffer: when `ok` is false and none is recorded
    yet (`status[0] == 0`), stores `code` in status[0], then `value` and `bound` in
    status[1] and status[2]; otherwise nothing. MLIR's `cf.assert`, made recoverable: the
    program goes on (its callers clamp what they were about to index with, so no memory out
    of range is touched), and whoever called the function reads the status afterwards.

        memory.check %ok, %value, %bound, %status
            {code = 1 : i64, message = "label {value} is out of range for {bound} classes"}
            : memref<3xi64>

    `code` (at least 1) names the site within the function; `message` is what the error
    says, `{value}` and `{bound}` standing for the values stored (the runtime and a
    library's C code substitute them), and the op's location is the source line to blame.
    Compiled, the first failing check wins even across threads (a compare-and-swap on
    status[0]); interpreted, the same stores, so that the lowered program stays an ordinary
    program over buffers that the interpreter runs and compares (it raises nothing).
    """

    name = "memory.check"
    ok = Operand(Bool, doc="the condition that holds when all is well")
    value = Operand(Constraint(lambda t: t == I64, "i64"), doc="the offending value")
    bound = Operand(Constraint(lambda t: t == I64, "i64"), doc="what it was checked against")
    status = Operand(StatusBuffer)
    code = Prop(I64Attr, doc="the site's error code, at least 1 (0 is 'no error')")
    message = Prop(StrAttr, doc="the error's text, with {value} and {bound} placeholders")
    canonicalization_patterns = (EraseTrueCheck,)

    def infer_result_types(self):
        return []

    def verify_(self):
        if self.code.value < 1:
            raise self.error(f"requires a code of at least 1 (0 means no error), got "
                             f"{self.code.value}")

    def memory_effects(self):
        return [(READ, self.status), (WRITE, self.status)]

    def render(self, value: int, bound: int) -> str:
        """The message with the recorded value and bound in place of the placeholders."""
        return self.message.value.replace("{value}", str(value)).replace("{bound}", str(bound))

    @classmethod
    def parse(cls, p, num_results):
        refs = p.parse_operand_refs()
        if len(refs) != 4:
            raise p.error(f"expected 4 operands (ok, value, bound, status), got {len(refs)}")
        attrs = p.parse_optional_attr_dict()
        props = {k: attrs.pop(k) for k in list(attrs) if k in cls.spec.prop_names}
        p.expect(":")
        t = parse_memref_type(p)
        ok, value, bound, status = refs
        return cls.build(p.resolve(ok, I1), p.resolve(value, I64), p.resolve(bound, I64),
                         p.resolve(status, t), attributes=attrs, **props)

    def print(self, p):
        operands = (self.ok, self.value, self.bound, self.status)
        p.write(" " + ", ".join(map(p.value, operands)))
        p.attr_dict(self)
        p.write(f" : {self.status.type}")

    def interpret(self, interp, values):
        ok, value, bound, status = values
        check_live(interp, self, status)
        if ok or status[0] != 0:
            return
        check_writable(self, status)
        status[0], status[1], status[2] = self.code.value, value, bound
