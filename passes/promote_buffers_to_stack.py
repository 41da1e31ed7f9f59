"""promote-buffers-to-stack: small buffers freed in their own block onto the stack.

Why. plan-memory places a function's temporaries in one arena, allocated once per call;
what it leaves as `memory.alloc` are the buffers of a loop's body (a BLIS nest's packed
panels, one per image or row block and thread, its scratch tiles), allocated and freed on
every iteration: `malloc` and `free` each time. examples/cnn.irk's training step made about
a thousand such calls per step, 3% of its time in `perf`. On the stack they cost nothing:
the CPU backend gives a `memory.alloca` one slot in its function's entry block (in an
outlined parallel body, its own, one per thread).

What is promoted (MLIR's pass of the same name, with one more condition): a `memory.alloc`
of a static shape of at most `max-alloc-size-in-bytes` bytes (default 64 KiB: a thread's
stack is megabytes, and a nest holds a few such buffers at once), whose only user that
frees it is one `memory.dealloc` in the same block. That dealloc ends its life inside one
execution of the block, which is `memory.alloca`'s scope (dialects/memory/buffers.py): so
no iteration still uses the slot the next one takes, and nothing returned or yielded from
the block can hold it. The dealloc is erased; an alloc freed elsewhere, or never, stays.
"""

from __future__ import annotations

from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass
from irkit.dialects.memory import AllocaOp, AllocOp, DeallocOp, byte_size


def _promotable(op: AllocOp, limit: int) -> DeallocOp | None:
    """`op`'s one dealloc, where `op` may live on the stack (module docstring), else None."""
    t = op.memref.type
    size = byte_size(t.element)
    if not t.has_static_shape or size is None or t.num_elements * size > limit:
        return None
    frees = [u for u in op.memref.users if isinstance(u, DeallocOp)]
    if len(frees) != 1 or frees[0].parent is not op.parent:
        return None
    return frees[0]


@register_pass
class PromoteBuffersToStack(Pass):
    """Replace each small `memory.alloc` freed in its own block by a `memory.alloca`
    (module docstring).

    Algorithm: for each `memory.alloc`, in any region: its static size in bytes at most
    `max-alloc-size-in-bytes` and exactly one `memory.dealloc` of it, in its block: build
    an alloca of the same type and attributes in its place, replace its uses, erase it and
    the dealloc."""

    name = "promote-buffers-to-stack"
    max_alloc_size_in_bytes: int = 64 << 10

    def run(self, root: Operation) -> None:
        for op in [o for o in root.walk() if isinstance(o, AllocOp)]:
            free = _promotable(op, self.max_alloc_size_in_bytes)
            if free is None:
                continue
            stack = AllocaOp.build(result_types=[op.memref.type],
                                   attributes=dict(op.attributes), location=op.location)
            op.parent.insert_before(op, stack)
            op.memref.replace_all_uses_with(stack.memref)
            free.erase()
            op.erase()
