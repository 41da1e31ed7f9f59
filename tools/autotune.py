"""The schedule tuner: `irkit-compile --autotune` measures BLIS sizes for a model's
contractions and records the fastest (`irkit.runtime.tuning` says where the choice lives and
how the compilers take it).

Algorithm (`autotune`): coordinate descent over the contractions, the whole step measured.

1. Lower a copy of the model to where `linalg-matmul-blis` runs and list its contractions
   (`sites`: the pass's own walk and threshold), each with its location, its static sizes and
   the cost model's schedule.
2. Compile the model as the pipeline does and time the step (`train_step` where the model
   trains, else `forward`) on random inputs with the given sizes: the best of `repeat` calls
   after two warm-up calls (the minimum: what a quiet machine gives; the median moves with
   other work).
3. For each contraction in turn, for each knob in turn (the register tile among the cost
   model's best `TILES`; `kc`; `mc`), compile and time each candidate value, the other
   contractions and knobs as chosen so far; a candidate replaces the incumbent only if it is
   faster by more than `margin` (3%: below that, run-to-run noise decides).
4. Confirm: time the cost model's schedule and the chosen one again, alternately,
   `CONFIRM_ROUNDS` times each; the choice stands only if its best still beats the cost
   model's by `margin` (the incumbent of step 3 was timed once, and a machine busier then
   than later fakes a gain).
5. Store the record (configs that differ from the cost model's, and the times).

Each candidate is one compile of the whole model (1-3 s for the example models) and `repeat`
steps; a model with three contractions tries about 20 candidates.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Callable

from irkit.ir import Operation
from irkit.runtime.tuning import KNOBS, set_configs, store

#: how many of the cost model's best register tiles the tuner tries
TILES = 3
#: rounds of the cost model's schedule and the chosen one timed alternately at the end
CONFIRM_ROUNDS = 3


# ---------------------------------------------------------------------------------------------
# The contractions of a model
# ---------------------------------------------------------------------------------------------


@dataclass
class Site:
    """One contraction `linalg-matmul-blis` schedules: its ordinal in the pass's walk, where
    the model wrote it, its static (M, N, K) (None: dynamic) and the cost model's sizes."""

    ordinal: int
    location: str
    function: str
    sizes: tuple
    default: dict
    tiles: list = field(default_factory=list)       # (mr, nr) candidates, best first


def sites(module: Operation) -> list[Site]:
    """The contractions of a model module (a graph module as the DSL makes it) that
    `linalg-matmul-blis` builds a BLIS nest for, with the ordinals it numbers them by
    (module docstring, step 1); those it computes as dot products have no sizes to tune."""
    from irkit.pass_manager import PassManager
    from irkit.passes import pipeline
    from irkit.passes.blis.contraction import contractions
    from irkit.passes.blis.nest import register_tiles, schedule, vector_lanes
    from irkit.passes.linalg_matmul_blis import LinalgMatmulBlis
    from irkit.target import of as target_of
    loop = next(s for s in pipeline.stages() if s.name == "loop").passes
    before = loop.split("linalg-matmul-blis")[0].rstrip(",")
    m = module.clone()
    pipeline.pass_manager(None, "linalg").run(m)
    PassManager.parse(before).run(m)
    blis = LinalgMatmulBlis()
    target = target_of(m)
    lanes = vector_lanes(blis, target)
    out = []
    for i, (op, generic, c) in enumerate(contractions(m, blis._worth_it)):
        c, ep, dot, fill = blis.prepare(op, generic, c, target)
        if dot:
            continue
        sizes = tuple(c.static(g) for g in (c.m, c.n, c.k))
        # the schedule the pass builds: K one block where an epilogue allows (kc-epilogue,
        # kc-dynamic), which the report had shown as kc = 256
        s = schedule(blis, sizes, target, ep is not None and fill is not None)
        tiles = [(mr, nv * lanes) for mr, nv in
                 register_tiles(target.vector_registers, lanes, sizes[0], sizes[1])][:TILES]
        out.append(Site(i, _where(op), _function(op), sizes, {k: getattr(s, k) for k in KNOBS},
                        tiles))
    return out


def _where(op: Operation) -> str:
    """`file:line:col` of the model line an op came from."""
    from irkit.diagnostics import resolve_file_line_col
    flc = resolve_file_line_col(op.location)
    return "?" if flc is None else ":".join(map(str, flc))


def _function(op: Operation) -> str:
    """The name of the function an op is in."""
    from irkit.symbols import symbol_name
    while op is not None and op.name != "func.func":
        op = op.parent_op
    return symbol_name(op) if op is not None else "?"


# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------


def random_inputs(model, dims: dict, seed: int = 0) -> dict:
    """Inputs of `model` (a `Model`) with the symbolic sizes `dims` (name -> size):
    `irkit.runtime.inputs.random_inputs`, once every size the inputs use is given."""
    from irkit.runtime.inputs import random_inputs as draw
    for spec in model.inputs:
        missing = [d for d in spec.dims if isinstance(d, str) and d not in dims]
        if missing:
            raise ValueError(f"input '{spec.name}' has the symbolic size(s) "
                             f"{', '.join(missing)}: give them (--autotune-sizes "
                             f"{missing[0]}=128)")
    return draw(model.inputs, dims, seed)


def measure(module: Operation, name: str, configs: list[dict], dims: dict, threads: int,
            repeat: int, opt_level: int = 2, cpu: str = "native") -> float:
    """Seconds of the model's step (train_step where it trains, else forward), compiled with
    `configs`: the best of `repeat` calls after two warm-up calls."""
    from irkit.runtime.compiled import compile_models
    from irkit.runtime.engines import JitEngine
    from irkit.runtime.model import Model
    m = module.clone()
    set_configs(m, configs)
    compiled = compile_models({name: m}, opt_level=opt_level, cpu=cpu)
    model = Model.from_engine(name, JitEngine(compiled, name, threads))
    step = model.train_step if model.trainable else model.forward
    batch = random_inputs(model, dims)
    step(**batch)
    step(**batch)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        step(**batch)
        best = min(best, time.perf_counter() - t0)
    return best


# ---------------------------------------------------------------------------------------------
# The tuner
# ---------------------------------------------------------------------------------------------


@dataclass
class Result:
    """What `autotune` chose and measured."""

    model: str
    sites: list
    configs: list            # the chosen sizes that differ from the cost model's
    baseline_s: float        # the cost model's schedule
    best_s: float            # the chosen one
    tried: int               # candidates compiled and timed
    record_path: str | None = None

    def table(self) -> str:
        lines = [f"autotune {self.model}: {self.tried} candidates; step "
                 f"{self.baseline_s * 1e3:.3f} ms (cost model) -> {self.best_s * 1e3:.3f} ms "
                 f"(x{self.baseline_s / self.best_s:.2f})"]
        chosen = {c["ordinal"]: c for c in self.configs}
        for s in self.sites:
            sizes = "x".join("?" if v is None else str(v) for v in s.sizes)
            c = chosen.get(s.ordinal, {})
            picked = ", ".join(f"{k}={c.get(k, s.default[k])}" for k in KNOBS)
            note = "tuned" if c else "cost model"
            lines.append(f"  #{s.ordinal} {s.location} (MxNxK {sizes}): {picked} [{note}]")
        if self.record_path:
            lines.append(f"  recorded in {self.record_path}")
        return "\n".join(lines)


def _candidates(site: Site, knob: str, current: dict) -> list[dict]:
    """The values of one knob to try against `current` (the site's sizes so far)."""
    if knob == "tile":
        return [{"mr": mr, "nr": nr} for mr, nr in site.tiles
                if (mr, nr) != (current["mr"], current["nr"])]
    k = site.sizes[2]
    if knob == "kc":
        values = [v for v in (64, 128, 256, 512, 1024) if k is None or v < k]
        return [{"kc": v} for v in values if v != current["kc"]]
    mr = current["mr"]
    m = site.sizes[0]
    values = {max(mr, current["mc"] // 2 // mr * mr), current["mc"] * 2}
    return [{"mc": v} for v in sorted(values)
            if v != current["mc"] and (m is None or v <= -(-m // mr) * mr)]


def autotune(source: str, filename: str, model: str | None = None, *, dims: dict,
             threads: int = 0, repeat: int = 20, margin: float = 0.03, record: bool = True,
             cpu: str = "native", progress: Callable[[str], None] | None = None) -> Result:
    """Tune the BLIS sizes of one model of `source` (module docstring) and record them; a
    model whose step has no BLIS nest gets a `Result` without sites, nothing measured."""
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.runtime.compiled import mark_target
    from irkit.runtime.engines import select_model
    models = model_modules(compile_source(source, filename))
    name = select_model(models, filename, model)
    mark_target(models, cpu)            # the sites' default sizes are those of `cpu`
    module = models[name]
    step = "train_step" if _trains(module) else "forward"
    found = [s for s in sites(module) if s.function == step]
    if not found:                       # nothing to measure, nothing recorded
        return Result(name, [], [], 0.0, 0.0, 0)
    say = progress or (lambda text: None)
    chosen = {s.ordinal: dict(s.default) for s in found}
    overrides: dict[int, dict] = {}

    def configs() -> list[dict]:
        return [{"ordinal": i, **o} for i, o in sorted(overrides.items()) if o]

    plan = [(s, knob) for s in found for knob in ("tile", "kc", "mc")]
    total = 1 + sum(len(_candidates(s, knob, chosen[s.ordinal])) for s, knob in plan) \
        + 2 * CONFIRM_ROUNDS
    done = 0

    def timed(cfg: list[dict], what: str) -> float:
        nonlocal done
        t = measure(module, name, cfg, dims, threads, repeat, cpu=cpu)
        done += 1
        say(f"[{done}/{max(total, done)}] {what}: {t * 1e3:.3f} ms")
        return t

    baseline = best = timed([], "cost model")
    for site, knob in plan:
        for cand in _candidates(site, knob, chosen[site.ordinal]):
            trial = {**overrides.get(site.ordinal, {}), **cand}
            saved = overrides.get(site.ordinal)
            overrides[site.ordinal] = trial
            label = ", ".join(f"{k}={v}" for k, v in cand.items())
            t = timed(configs(), f"#{site.ordinal} {label}")
            if t < best * (1 - margin):
                best = t
                chosen[site.ordinal].update(cand)
            elif saved is None:
                del overrides[site.ordinal]
            else:
                overrides[site.ordinal] = saved
    # The search compared each candidate with an incumbent timed once, minutes apart: a
    # machine that was busier for the baseline than later makes a gain of nothing. The
    # choice stands only if it still wins when the two are timed again, alternately.
    chosen_configs = configs()
    if chosen_configs:
        again = {"cost model": [], "chosen": []}
        for _ in range(CONFIRM_ROUNDS):
            again["cost model"].append(timed([], "cost model, again"))
            again["chosen"].append(timed(chosen_configs, "chosen, again"))
        baseline, best = min(again["cost model"]), min(again["chosen"])
        if best >= baseline * (1 - margin):
            chosen_configs, best = [], baseline
    result = Result(name, found, chosen_configs, baseline, best, done)
    if record:
        result.record_path = store(source, name, {
            "configs": result.configs, "dims": dims, "threads": threads,
            "baseline_ms": baseline * 1e3, "best_ms": best * 1e3,
            "measured": time.strftime("%Y-%m-%dT%H:%M:%S")}, cpu)
    return result


def _trains(module: Operation) -> bool:
    """Whether a model module has a training step (`@train_step`): what `measure` times then,
    so that function's contractions are the ones tuned."""
    from irkit.symbols import lookup_symbol_in
    return lookup_symbol_in(module, "train_step") is not None


def print_progress(text: str) -> None:
    """One progress line on stderr, overwritten by the next (a terminal), else one a line."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K" + text)
    else:
        sys.stderr.write(text + "\n")
    sys.stderr.flush()


__all__ = ["Site", "Result", "sites", "measure", "autotune", "random_inputs", "print_progress"]
