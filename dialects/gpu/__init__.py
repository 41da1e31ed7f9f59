"""The `gpu` dialect: MLIR's names, forms and meaning for kernels, grids and shared memory.

A GPU runs a kernel once per thread of a grid: `grid` blocks (x, y, z) of `block` threads
each. The threads of a block may share workgroup memory and wait for each other at a
barrier; blocks cannot. The ops, with the exact forms irkit prints (the generic forms are
MLIR 22's, which `mlir-opt` reads; tests/unit/test_gpu_dialect.py checks that):

- inline launch, the form `gpu-map-parallel-loops` produces; twelve `index` body arguments
  (block ids, thread ids, grid sizes, block sizes), then the attributions:

      gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
                 threads(%tx, %ty, %tz) in (%sx = %b, %sy = %c1, %sz = %c1)
                 [dynamic_shared_memory_size %bytes : i32 operand]
                 [workgroup(%w : memref<256xf32, #gpu.address_space<workgroup>>)]
                 [private(%p : memref<4xf32, #gpu.address_space<private>>)] {
        ...
        gpu.terminator
      }
      generic: "gpu.launch"(%g, %c1, %c1, %b, %c1, %c1) <{operandSegmentSizes =
        array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({^bb0(12 x index, attributions): ...})
        {workgroup_attributions = 0 : i64} : (index, index, index, index, index, index) -> ()

- outlined kernels, the form `gpu-kernel-outlining` produces (one `gpu.module @kernels` per
  module of functions, which gets the unit attribute `gpu.container_module`):

      gpu.module @kernels {
        gpu.func @forward_kernel_0(%a: memref<?xf32>, %n: index)
            [workgroup(...)] [private(...)] kernel {
          %tx = gpu.thread_id x
          gpu.return
        }
      }
      gpu.launch_func @kernels::@forward_kernel_0 blocks in (%g, %c1, %c1)
          threads in (%b, %c1, %c1) [dynamic_shared_memory_size %bytes]
          args(%a : memref<?xf32>, %n : index)
      generic gpu.func: "gpu.func"() <{function_type = (...) -> ()}> ({...})
        {gpu.kernel, sym_name = "k", workgroup_attributions = 0 : i64} : () -> ()

- ids and sizes, `index` results, dimension `#gpu<dim x>` (generic `<{dimension = #gpu<dim
  x>}>`): `gpu.thread_id x`, `gpu.block_id y`, `gpu.block_dim z`, `gpu.grid_dim x`; then
  `gpu.barrier`, `gpu.return`, `gpu.terminator`, and `%s = gpu.dynamic_shared_memory :
  memref<?xi8, #gpu.address_space<workgroup>>`;
- host side: `%d = gpu.alloc (%n) : memref<?xf32>`, `gpu.dealloc %d : memref<?xf32>`,
  `gpu.memcpy %dst, %src : memref<?xf32>, memref<?xf32>`.

**Memory.** Shared memory is MLIR's: a memref in address space
`#gpu.address_space<workgroup>` (NVVM address space 3), declared as a workgroup attribution
of a `gpu.launch` or a `gpu.func` (static shape, identity layout; one buffer per block), or
carved from `gpu.dynamic_shared_memory` with `memory.view`. Private attributions
(`#gpu.address_space<private>`, NVVM 5) are one buffer per thread. Every other memref a
kernel sees is global device memory: a kernel argument, or a `memory.alloc` inside the body,
which is per thread (a backend may put it in registers or local memory). A host function at
this level treats each memref as device memory; only the kernels load and store.

**Semantics** (`grid`): a launch runs every thread of every block, a block at a time; a
block's threads advance in lockstep between barriers (a thread each, when the body has a
barrier), so shared-memory programs run as on a GPU, and a barrier only some threads reach
is an error, as is a launch a GPU would refuse (a size of 0, over 1024 threads a block).

Parts, each importing only those before it: `base` (the dialect, dimensions, address spaces,
attributions), `grid` (running a grid), `ids` (ids, sizes, barrier), `launch`, `kernel`
(module, func, return, launch_func), `host` (alloc, dealloc, memcpy).
"""

from irkit.dialects.gpu.base import *  # noqa: F401,F403
from irkit.dialects.gpu.grid import *  # noqa: F401,F403
from irkit.dialects.gpu.ids import *  # noqa: F401,F403
from irkit.dialects.gpu.launch import *  # noqa: F401,F403
from irkit.dialects.gpu.kernel import *  # noqa: F401,F403
from irkit.dialects.gpu.host import *  # noqa: F401,F403
