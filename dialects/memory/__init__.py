"""The `memory` dialect: buffers with MLIR's `memref` and `vector` load/store spelling.

A buffer is a value of the core's `MemRefType`: `memref<?x4xf32>` (contiguous, row-major: the
identity layout) or `memref<?x4xf32, strided<[8, 1], offset: ?>>` (a strided window into a
bigger buffer; the offset and strides count elements). Ops:

- `memory.alloc` / `memory.dealloc`: a fresh buffer, freed again; `memory.arena`: one raw
  byte buffer that a function's temporaries are planned into, freed by `memory.dealloc` too;
- `memory.view`: a contiguous typed view at a byte offset of a byte buffer (`memref.view`);
- `memory.subview`: a strided window with static or dynamic offsets, sizes and strides;
- `memory.collapse_shape`: the same memory with groups of adjacent dims merged (these
  three in `view`);
- `memory.load` / `memory.store`: one element; `memory.vector_load` / `memory.vector_store`:
  a 1-D vector of consecutive elements along the last dimension (these four in
  `access`);
- `memory.copy`: every element of one buffer into another of the same shape;
- `memory.dim`: the size of one dimension; `memory.address`: the address of its first element;
- `memory.check`: a run-time error recorded in a status buffer when a condition fails (the
  code, value and bound of the failing site; in `access`);
- `memory.fence`: the running thread's non-temporal stores ordered before what follows
  (in `access`).

Effects. The core has one effect trait, `Pure`: `dim`, `address`, `view`, `subview` and
`collapse_shape` carry it (they compute a new descriptor or read one and touch no memory),
every other op has effects and is never CSE'd, hoisted or erased for being unused. Which
effect, on which buffer, is told by each op's `memory_effects()` (MLIR's
`MemoryEffectOpInterface`), and `effects_of(op)` answers for any op, so that liveness and
buffer reuse need not know this dialect's op list.

Reference semantics. A memref value is a numpy array, and views are numpy views sharing
memory, so a store through a view is seen through its base. A memref argument is the
caller's own array (by reference, as compiled code receives a pointer). The interpreter is
strict where compiled code would be undefined: an out-of-bounds index, a misaligned view, a
vector access past the end of the last dimension, a use after `dealloc`, a double free,
freeing what `alloc` did not make and copying between overlapping buffers are
`InterpreterError`s naming the op. Fresh memory is filled with all-ones bytes (NaN for
floats, -1 for integers, true for i1), and so is freed memory: a read of uninitialized data
shows up in the results.

The dialect is split by meaning, each part importing only those before it:

- `buffers` — the dialect object, constraints, effects, the helpers every op uses, and the
  ops that allocate, free, copy and measure buffers;
- `view` — `memory.view`, `memory.subview`, `memory.collapse_shape` and the layout
  arithmetic they share with lowerings and backends (`strides_and_offset`,
  `contiguous_strides`, `subview_type`, `byte_size`, `DYNAMIC_INDEX`), and the
  reassociations of reshapes (`memory.collapse_shape`'s and the tensor dialect's);
- `access` — `memory.load`, `memory.store`, `memory.vector_load`, `memory.vector_store`,
  `memory.fence`, `memory.check` and `EraseUnusedRead`.

Importing the package registers every op; its namespace holds the public names of all parts.
"""

from irkit.dialects.memory.buffers import *  # noqa: F401,F403
from irkit.dialects.memory.view import *  # noqa: F401,F403
from irkit.dialects.memory.access import *  # noqa: F401,F403
