"""The partition report (`irkit-compile --partition-report`): what a partitioned training
step sends, and what that costs past one machine.

**Bytes per step.** For every collective of a partitioned function, its payload (the bytes
of the value it reduces, or of the whole value a gather assembles) and the bytes each rank
sends on a ring of k ranks (the alpha-beta model's beta term, as `parallel-propagate`
counts it): all_reduce 2(k-1)/k P (reduce-scatter, then all-gather), all_gather and
reduce_scatter (k-1)/k P, all_to_all (k-1)/k^2 P, broadcast and send P. A payload with `?`
sizes is linear in the batch: it is reported as `a + b*B` (sizes at B = 0 and B = 1); in a
pipeline of M micro-batches (`parallel-pipeline`), a message of one micro-batch's value
(`parallel.micro`) has B/M rows.

**Step time at N ranks** (`predict`), from a measured single-process step time T on the
global batch (strong scaling: the batch stays, the ranks share it), the link bandwidth W
(bytes/s) and latency alpha, ring collectives:

- data parallel: T/N + sum over the gradients' all_reduce payloads P of
  2(N-1)/N P/W + 2(N-1) alpha (every parameter's gradient summed every step);
- tensor parallel (Megatron-LM: column-split then row-split layer pairs): T/N + per layer
  pair two all_reduces (the forward's partial output, the backward's partial input
  gradient) of the pair's activation bytes; possible while N divides into the narrowest
  split width;
- pipeline (GPipe, M micro-batches, default 4N): (M + N - 1) (T/(N M) + 2 (A/M/W + alpha)),
  A the largest activation between stages (bubble plus one send forward and one back per
  micro-batch per stage); possible while N is at most the number of layers.

"Layers" are the ops that read a weight (`graph.matmul`, `graph.conv2d` on a variable),
their activations the bytes of their results per batch row times the batch given.
"""

from __future__ import annotations

from dataclasses import dataclass

from irkit.ir import Operation, Value
from irkit.types import RankedTensorType
from irkit.dialects.graph import Conv2dOp, MatmulOp, ReadOp
from irkit.dialects.parallel import (
    AllGatherOp, AllReduceOp, AllToAllOp, BroadcastOp, GroupOp, ReduceScatterOp, SendOp,
)
from irkit.passes.parallel_pipeline import MICRO_ATTR, MICRO_BATCHES_ATTR

#: bytes each rank sends, as a multiple of the payload, on a ring of k ranks
RING_FACTOR = {
    AllReduceOp: lambda k: 2 * (k - 1) / k,
    AllGatherOp: lambda k: (k - 1) / k,
    ReduceScatterOp: lambda k: (k - 1) / k,
    AllToAllOp: lambda k: (k - 1) / (k * k),
    BroadcastOp: lambda k: 1.0,
    SendOp: lambda k: 1.0,
}
#: 100 Gb/s links, 5 us per message
LINK_BANDWIDTH = 100e9 / 8
LINK_LATENCY = 5e-6
RANKS = (8, 64, 512)


def tensor_bytes(t, batch: int) -> int:
    """The bytes of a tensor of type `t`, its `?` sizes taken as `batch`."""
    if not isinstance(t, RankedTensorType):
        return 0
    n = 1
    for d in t.shape:
        n *= batch if d is None else d
    return n * max(1, (getattr(t.element, "width", 32) + 7) // 8)


@dataclass(frozen=True)
class Traffic:
    """One collective of a partitioned function: its payload is `fixed + per_row * B`."""

    function: str
    kind: str
    group: int
    fixed: int
    per_row: int
    line: str

    def payload(self, batch: int) -> int:
        return self.fixed + self.per_row * batch

    def sent(self, batch: int) -> float:
        """Bytes each rank sends for it (the ring model of the module docstring)."""
        factor = next(f for cls, f in RING_FACTOR.items() if self.kind == cls.name)
        return factor(self.group) * self.payload(batch)


def _payload_value(op: GroupOp) -> Value:
    return op.results[0] if isinstance(op, AllGatherOp) else op.operands[0]


def collective_traffic(module: Operation) -> list[Traffic]:
    """Every collective of every function of the partitioned `module` (see the module
    docstring)."""
    out = []
    micro = module.attributes.get(MICRO_BATCHES_ATTR)
    for fn in module.walk():
        if fn.name != "func.func":
            continue
        name = fn.properties["sym_name"].value
        for op in fn.walk():
            cls = type(op)
            if cls not in RING_FACTOR:
                continue
            t = _payload_value(op).type
            fixed = tensor_bytes(t, 0)
            per_row = tensor_bytes(t, 1) - fixed
            if MICRO_ATTR in op.attributes:
                m = micro.value
                per_row = per_row // m if per_row % m == 0 else per_row / m
            flc = getattr(op.location, "file_line_col", None)
            where = flc() if flc is not None else None
            out.append(Traffic(name, op.name, op.group_size(), fixed, per_row,
                               f"{where[0]}:{where[1]}" if where else "?"))
    return out


def format_traffic(traffic: list[Traffic]) -> str:
    """The per-collective table, and each function's total."""
    rows = ["function        collective              ranks  payload bytes        where"]
    totals: dict = {}
    for t in traffic:
        size = f"{t.fixed}" if not t.per_row else f"{t.fixed} + {t.per_row}*B"
        rows.append(f"{t.function:<15} {t.kind:<23} {t.group:>5}  {size:<20} {t.line}")
        f, r = totals.get(t.function, (0, 0))
        totals[t.function] = (f + t.fixed, r + t.per_row)
    for name, (f, r) in totals.items():
        rows.append(f"{name:<15} {'total':<23} {'':>5}  "
                    f"{f if not r else f'{f} + {r}*B':<20}")
    return "\n".join(rows)


# ---------------------------------------------------------------------------------------------
# The cost model
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """An op that reads a weight: its result's bytes per batch row, and the narrowest width
    a tensor parallel split of it may divide."""

    per_row: int
    width: int


def weight_layers(fn: Operation) -> list[Layer]:
    """The layers of an unpartitioned graph function (see the module docstring)."""
    out = []
    for op in fn.walk():
        if not isinstance(op, (MatmulOp, Conv2dOp)):
            continue
        weights = [v for v in op.operands if isinstance(v.owner, ReadOp)]
        if not weights:
            continue
        shape = [d for d in weights[0].type.shape]
        r = op.results[0].type
        rows = r.shape[0] if r.rank and r.shape[0] is not None else 1
        out.append(Layer(tensor_bytes(r, 1) // rows,
                         min(shape[:2]) if isinstance(op, Conv2dOp) else min(shape)))
    return out


def ring_allreduce(nbytes: float, n: int, bandwidth: float, latency: float) -> float:
    """Seconds of a ring all_reduce of `nbytes` over `n` ranks."""
    if n <= 1:
        return 0.0
    return 2 * (n - 1) / n * nbytes / bandwidth + 2 * (n - 1) * latency


def predict(kind: str, n: int, compute_s: float, grad_bytes: int, layers: list[Layer],
            batch: int, bandwidth: float = LINK_BANDWIDTH, latency: float = LINK_LATENCY,
            micro_batches: int | None = None) -> float | None:
    """The step time at `n` ranks for `kind` ("data", "tensor", "pipeline"), None where the
    model cannot be split so (see the module docstring)."""
    if kind == "data":
        if n > batch:
            return None
        return compute_s / n + ring_allreduce(grad_bytes, n, bandwidth, latency)
    if kind == "tensor":
        if not layers or n > min(layer.width for layer in layers):
            return None
        pairs = layers[1::2] or layers
        comm = sum(2 * ring_allreduce(p.per_row * batch, n, bandwidth, latency)
                   for p in pairs)
        return compute_s / n + comm
    if kind == "pipeline":
        if n > len(layers):
            return None
        m = micro_batches or 4 * n
        act = max(layer.per_row for layer in layers) * batch
        hop = act / m / bandwidth + latency if n > 1 else 0.0
        return (m + n - 1) * (compute_s / (n * m) + 2 * hop)
    raise ValueError(f"unknown parallelism {kind!r}: data, tensor or pipeline")


def format_cost_table(model: str, compute_s: float, grad_bytes: int, layers: list[Layer],
                      batch: int, ranks=RANKS, bandwidth: float = LINK_BANDWIDTH,
                      latency: float = LINK_LATENCY) -> str:
    """Predicted step times (ms) and speedups over one process, per parallelism and rank
    count."""
    head = (f"{model}: step {compute_s * 1e3:.3f} ms on 1 process at B={batch}; gradients "
            f"{grad_bytes} bytes; {len(layers)} layers; links {bandwidth * 8 / 1e9:g} Gb/s, "
            f"{latency * 1e6:g} us")
    rows = [head, f"{'parallelism':<12}" + "".join(f"{f'N={n}':>22}" for n in ranks)]
    for kind in ("data", "tensor", "pipeline"):
        cells = []
        for n in ranks:
            t = predict(kind, n, compute_s, grad_bytes, layers, batch, bandwidth, latency)
            cells.append("-" if t is None else f"{t * 1e3:.3f} ms ({compute_s / t:.2f}x)")
        rows.append(f"{kind:<12}" + "".join(f"{c:>22}" for c in cells))
    return "\n".join(rows)
