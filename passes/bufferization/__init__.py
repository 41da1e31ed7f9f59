"""The op-by-op half of `bufferize` (the pass is `irkit.passes.bufferize`): tensors to buffers.

- `buffers`: `FunctionBuffers`, one function's buffers: the calling convention, which buffer
  holds each value and when it is freed, run-time checks, constants, loop nests;
- `analysis`: what is read off the tensor program first: views, tied inits, whether an init
  is read after the op that would overwrite it;
- `function`: `Bufferization`, the per-function state (destinations planned, in place or
  copied, values without buffers, reshapes as views of raw bytes), the rule table
  `BUFFERIZATIONS` and `@bufferizes`;
- `structured`: every linalg op on tensors -> the same op on memrefs, and the ops inside its
  body that read tensors or check something;
- `tensors`: the `tensor` ops and tensor constants;
- `state`: `graph.read` (aware of views), `graph.assign` and `graph.check`;
- `control`: `graph.if` -> `loop.if`, its branches bufferized by the same rules;
- `fusion`: `fusion.group` on tensors -> on memrefs, its intermediates' buffers inside it;
- `scatter`: `graph.scatter_add`, which no structured op expresses, straight to loops;
- `collectives`: the `parallel` dialect's collectives -> `mpi` ops on their buffers;
- `output_sizes`: a function's `<name>_output_sizes` sibling, its outputs' `?` sizes from
  the inputs' (the `output-sizes` option).

Rules register themselves in `BUFFERIZATIONS` when their module is imported, which this
package does; `irkit-opt --describe graph.scatter_add` shows the entry.
"""

from irkit.passes.bufferization.buffers import BufferizeError, FunctionBuffers
from irkit.passes.bufferization.function import BUFFERIZATIONS, Bufferization, bufferizes
from irkit.passes.bufferization import (  # noqa: F401  (register their rules)
    collectives, control, fusion, scatter, state, structured, tensors,
)

__all__ = ["BUFFERIZATIONS", "Bufferization", "BufferizeError", "FunctionBuffers",
           "bufferizes"]
