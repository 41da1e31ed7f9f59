"""The host's side of device memory: `gpu.alloc`, `gpu.dealloc` and `gpu.memcpy` (MLIR's,
without async tokens).

In the interpreter the host and the device share one memory, so these mean exactly what
`memory.alloc`, `memory.dealloc` and `memory.copy` mean (fresh memory filled with all-ones
bytes, use-after-free and double-free errors, overlapping copies refused): each op runs the
memory op's semantics, which stay in one place. Note MLIR's operand order for the copy:
target first.

    %d = gpu.alloc (%n) : memref<?xf32>
    gpu.memcpy %d, %h : memref<?xf32>, memref<?xf32>
    gpu.dealloc %d : memref<?xf32>
"""

from __future__ import annotations

from irkit.opdef import AnyType, Index, Op, Operand, OptProp, Result, UnitAttrC, VarOperand
from irkit.dialects import memory
from irkit.dialects.memory import ALLOCATE, FREE, READ, WRITE, MemRef
from irkit.dialects.memory.buffers import parse_memref_type, parse_refs, resolve_indices
from irkit.dialects.gpu.base import gpu
from irkit.dialects.gpu.launch import verify_no_async


@gpu.op
class AllocOp(Op):
    """A new device buffer (contiguous), one index operand per `?` size.

        %d = gpu.alloc (%n) : memref<?x4xf32>
    """

    name = "gpu.alloc"
    async_dependencies = VarOperand(AnyType)
    dynamic_sizes = VarOperand(Index)
    symbol_operands = VarOperand(Index)
    host_shared = OptProp(UnitAttrC)
    memref = Result(MemRef)

    def verify_(self):
        verify_no_async(self)
        if self.symbol_operands:
            raise self.error("symbol operands are not supported (no affine layouts)")
        memory.AllocOp.verify_(self)

    def memory_effects(self):
        return [(ALLOCATE, self.memref)]

    @classmethod
    def parse(cls, p, num_results):
        refs = parse_refs(p, "(", ")")
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_memref_type(p)
        return cls.build([], resolve_indices(p, refs), [], result_types=[t], attributes=attrs)

    def print(self, p):
        p.write(f" ({', '.join(map(p.value, self.dynamic_sizes))})")
        p.attr_dict(self, elided=("operandSegmentSizes",))
        p.write(f" : {self.memref.type}")

    def interpret(self, interp, values):
        return memory.AllocOp.interpret(self, interp, values)


@gpu.op
class DeallocOp(Op):
    """Frees a buffer made by `gpu.alloc`.

        gpu.dealloc %d : memref<?x4xf32>
    """

    name = "gpu.dealloc"
    async_dependencies = VarOperand(AnyType)
    memref = Operand(MemRef)

    def infer_result_types(self):
        return []

    def verify_(self):
        verify_no_async(self)

    def memory_effects(self):
        return [(FREE, self.memref)]

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_operand_ref()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        return cls.build([], p.resolve(ref, parse_memref_type(p)), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.memref)}")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}")

    def interpret(self, interp, values):
        return memory.DeallocOp.interpret(self, interp, values[-1:])


@gpu.op
class MemcpyOp(Op):
    """Copies every element of `src` into `dst` (host to device, device to host or device
    to device): same element type and shape.

        gpu.memcpy %dst, %src : memref<?xf32>, memref<?xf32>
    """

    name = "gpu.memcpy"
    async_dependencies = VarOperand(AnyType)
    dst = Operand(MemRef)
    src = Operand(MemRef)

    def infer_result_types(self):
        return []

    def verify_(self):
        verify_no_async(self)
        s, d = self.src.type, self.dst.type
        if s.element is not d.element:
            raise self.error("arguments have incompatible element type")
        if s.shape != d.shape:
            raise self.error("arguments have incompatible shape")

    def memory_effects(self):
        return [(READ, self.src), (WRITE, self.dst)]

    @classmethod
    def parse(cls, p, num_results):
        dst = p.parse_operand_ref()
        p.expect(",")
        src = p.parse_operand_ref()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        dt = parse_memref_type(p)
        p.expect(",")
        st = parse_memref_type(p)
        return cls.build([], p.resolve(dst, dt), p.resolve(src, st), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.dst)}, {p.value(self.src)}")
        p.attr_dict(self)
        p.write(f" : {self.dst.type}, {self.src.type}")

    def interpret(self, interp, values):
        return memory.CopyOp.interpret(self, interp, values[-1:] + values[-2:-1])
