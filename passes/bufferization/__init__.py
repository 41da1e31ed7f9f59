"""The op-by-op half of `bufferize` (the pass is `irkit.passes.bufferize`): tensors to buffers.

- `analysis`: what is read off the tensor program first: views, tied inits, whether an init
  is read after the op that would overwrite it;
- `function`: `Bufferization`, the per-function state (today's `FunctionLowering`
  generalized: destinations planned, in place or copied, values without buffers, reshapes as
  views of raw bytes), the rule table `BUFFERIZATIONS` and `@bufferizes`;
- `structured`: every linalg op on tensors -> the same op on memrefs, and the ops inside its
  body that read tensors or check something;
- `tensors`: the `tensor` ops and tensor constants;
- `state`: `graph.read` (aware of views) and `graph.check`.

Graph ops without a rule here (`graph.assign`, `graph.if`, ops no structured op expresses
such as `graph.scatter_add`) are lowered by their loop rule in
`irkit.passes.lower_graph.LOWERINGS`, in the same buffer map.
"""

from irkit.passes.bufferization.function import (
    BUFFERIZATIONS, Bufferization, BufferizeError, bufferizes,
)
from irkit.passes.bufferization import state, structured, tensors  # noqa: F401

__all__ = ["BUFFERIZATIONS", "Bufferization", "BufferizeError", "bufferizes"]
