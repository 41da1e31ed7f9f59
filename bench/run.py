#!/usr/bin/env python3
"""The benchmark table: irkit's compiled code against numpy, PyTorch and JAX, one run.

    python bench/run.py [--threads 1,2] [--repeat 15] [--rounds 3] [--only softmax,matmul]
                        [--no-compile]

Every workload below is timed for each engine present (irkit's JIT, numpy by hand, PyTorch
eager, `jax.jit`): the median over at least `--repeat` calls and 0.2 s of them, after 0.1 s
of warm-up calls (`timed`), in each of `--rounds` worker processes, with the min-max range,
and the ratio numpy / engine (above 1: faster than numpy) from the same run. Each engine at
each thread count runs in its own worker processes, one per round, the engines taking turns
(round by round, in a rotated order), since on a shared or virtual machine one process's
luck (where its threads and pages land, a neighbour's burst) moved a column by up to 1.5x
from one run to the next: the calls of all rounds are pooled. Each worker is pinned to that
many cores (`sched_setaffinity`) with `OMP_NUM_THREADS` and the BLAS / PyTorch thread counts
set to it before anything is imported, so no library sees more cores than its column says,
and no library's idle thread pool competes with the engine being timed: OpenBLAS, PyTorch's
OpenMP and XLA's threads keep spinning after a call, and timed in one process after them,
irkit's 2-thread MLP step took 1.45 ms (median) against 0.91 ms alone. The table is
markdown.

Workloads (float32):

- `fused`: E = D + (A + B) * C over N = 10^7 (symbolic N in irkit), and STREAM's add
  (`np.add(a, b, out=c)`, three arrays moved) as the bandwidth the fused kernel can reach;
- `softmax`: row softmax of 4096 x 1024;
- `matmul`: 1024^3, GFLOP/s next to the time;
- `mlp128` / `mlp1024`: an MLP 784-256-10 training step (ReLU, mean softmax cross-entropy on
  integer labels, SGD lr 0.1) at batch 128 and 1024;
- `logreg`: logistic regression 784 -> 10, one SGD step at batch 100;
- `cnn`: examples/cnn.irk's training step (momentum) at batch 64 against PyTorch eager;
- `compile` (unless `--no-compile`): a fresh process to the first MLP training step with
  the JIT, cold (empty compile cache) and warm (the cache from the cold run), and
  `irkit-compile` of each example to a shared library, cold.

Before measuring it waits (up to `--wait` seconds) for the 1-minute load average to drop
below `--quiet`, and prints the load it measured under. It is a benchmark, not a test: it
never fails on its numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ("fused", "softmax", "matmul", "mlp128", "mlp1024", "logreg", "cnn")
ENGINES = ("irkit", "numpy", "torch", "jax")

MODELS = {
    "fused": """
model fused {
  input a: f32[N]
  input b: f32[N]
  input c: f32[N]
  input d: f32[N]
  e = d + (a + b) * c
  output e
}""",
    "softmax": """
model softmax_rows {
  input x: f32[R, C]
  y = softmax(x, axis=1)
  output y
}""",
    "matmul": """
model matmul {
  input a: f32[M, K]
  input b: f32[K, N]
  c = a @ b
  output c
}""",
    "mlp": """
model mlp {
  input x: f32[B, 784]
  input labels: i32[B]
  param w1: f32[784, 256] = normal(std=0.05, seed=1)
  param b1: f32[256] = zeros
  param w2: f32[256, 10] = glorot(seed=2)
  param b2: f32[10] = zeros
  loss = cross_entropy(relu(x @ w1 + b1) @ w2 + b2, labels)
  output loss
  train loss with sgd(lr=0.1)
}""",
    "logreg": """
model logreg {
  input x: f32[B, 784]
  input labels: i32[B]
  param w: f32[784, 10] = zeros
  param b: f32[10] = zeros
  loss = cross_entropy(x @ w + b, labels)
  output loss
  train loss with sgd(lr=0.1)
}""",
}


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


#: seconds of warm-up calls before the timed ones, and the fewest seconds of timed calls
WARM_SECONDS = 0.1
TIMED_SECONDS = 0.2
#: the most calls timed to make up TIMED_SECONDS (a workload of a few microseconds)
MOST_CALLS = 20_000


def timed(fn, repeat: int) -> list[float]:
    """Seconds per call of `fn`, each call timed alone: at least `repeat` calls and at least
    TIMED_SECONDS of them (MOST_CALLS at most), after at least two warm-up calls and
    WARM_SECONDS of them.

    Why time, not a count of calls. Each engine is timed after half a second's sleep
    (`worker`), in which a thread team goes to sleep and the core may drop its clock; the
    first calls after it pay for the wake-ups. Two warm-up calls and 15 timed ones were
    0.4 ms of calls for a step of 25 us: the logistic regression step on 2 threads took 33.5 us
    (median of 15 calls after the sleep) and 23.5 us (median of 2,000 calls after 300), numpy's
    97.4 and 79.9 us (this VM, one process). A training loop calls its step back to back, so
    the table times every engine the same way, long enough to be past those wake-ups: a floor
    of time, as `timeit` and pyperf calibrate their loops, for engines of microseconds and of
    seconds alike."""
    fn()
    fn()
    start = time.perf_counter()
    while time.perf_counter() - start < WARM_SECONDS:
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < repeat or (time.perf_counter() - start < TIMED_SECONDS and
                                  len(times) < MOST_CALLS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def wait_for_quiet(quiet: float, wait: float) -> float:
    """Wait until the 1-minute load average is below `quiet` (at most `wait` seconds);
    returns the load measured last."""
    deadline = time.monotonic() + wait
    load = os.getloadavg()[0]
    while load >= quiet and time.monotonic() < deadline:
        time.sleep(5)
        load = os.getloadavg()[0]
    return load


# ---------------------------------------------------------------------------------------------
# The engines of each workload (run in a worker)
# ---------------------------------------------------------------------------------------------


def _irkit_model(name: str, threads: int, tmp: Path):
    import inspect

    import irkit
    path = tmp / f"{name}.irk"
    path.write_text(MODELS[name])
    kwargs = {"engine": "jit"}
    if "threads" in inspect.signature(irkit.load_model).parameters:
        kwargs["threads"] = threads
    return irkit.load_model(path, **kwargs)


#: the engine a worker process times (`--engine`), None for all; its peers' libraries are
#: not even imported there
ONLY_ENGINE: str | None = None


def _optional(module: str):
    if ONLY_ENGINE is not None and module != ONLY_ENGINE:
        return None
    try:
        return __import__(module)
    except ImportError:
        return None


def _torch(threads: int):
    torch = _optional("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    return torch


def _jax():
    if _optional("jax") is None:
        return None
    import jax
    jax.config.update("jax_platforms", "cpu")
    return jax


def fused_engines(threads: int, tmp: Path) -> dict:
    import numpy as np
    n = 10_000_000
    rng = np.random.default_rng(0)
    a, b, c, d = (rng.standard_normal(n, dtype=np.float32) for _ in range(4))
    out = np.empty_like(a)
    model = _irkit_model("fused", threads, tmp)
    engines = {
        "irkit": lambda: model.forward(a=a, b=b, c=c, d=d),
        "numpy": lambda: d + (a + b) * c,
        "numpy out=": lambda: np.add(d, np.multiply(np.add(a, b, out=out), c, out=out),
                                     out=out),
        "STREAM add": lambda: np.add(a, b, out=out),
    }
    torch = _torch(threads)
    if torch is not None:
        ta, tb, tc, td = (torch.from_numpy(v) for v in (a, b, c, d))
        engines["torch"] = lambda: td + (ta + tb) * tc
    jax = _jax()
    if jax is not None:
        f = jax.jit(lambda a, b, c, d: d + (a + b) * c)
        ja, jb, jc, jd = (jax.device_put(v) for v in (a, b, c, d))
        engines["jax"] = lambda: f(ja, jb, jc, jd).block_until_ready()
    check = model.forward(a=a, b=b, c=c, d=d)["e"]
    assert np.allclose(check, d + (a + b) * c, rtol=1e-6, atol=1e-6), "fused: wrong answer"
    return engines


def softmax_engines(threads: int, tmp: Path) -> dict:
    import numpy as np
    x = np.random.default_rng(0).standard_normal((4096, 1024), dtype=np.float32)
    model = _irkit_model("softmax", threads, tmp)

    def np_softmax():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    engines = {"irkit": lambda: model.forward(x=x), "numpy": np_softmax}
    torch = _torch(threads)
    if torch is not None:
        tx = torch.from_numpy(x)
        engines["torch"] = lambda: torch.softmax(tx, dim=1)
    jax = _jax()
    if jax is not None:
        f = jax.jit(lambda v: jax.nn.softmax(v, axis=1))
        jx = jax.device_put(x)
        engines["jax"] = lambda: f(jx).block_until_ready()
    assert np.allclose(model.forward(x=x)["y"], np_softmax(), rtol=1e-5, atol=1e-7)
    return engines


def matmul_engines(threads: int, tmp: Path) -> dict:
    import numpy as np
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    model = _irkit_model("matmul", threads, tmp)
    engines = {"irkit": lambda: model.forward(a=a, b=b), "numpy": lambda: a @ b}
    torch = _torch(threads)
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        engines["torch"] = lambda: ta @ tb
    jax = _jax()
    if jax is not None:
        f = jax.jit(lambda x, y: x @ y)
        ja, jb = jax.device_put(a), jax.device_put(b)
        engines["jax"] = lambda: f(ja, jb).block_until_ready()
    assert np.allclose(model.forward(a=a, b=b)["c"], a @ b, rtol=1e-3, atol=1e-3)
    return engines


def _sgd_numpy(params: dict, hidden: bool):
    """One SGD step by hand: forward, backprop of mean softmax cross-entropy, update."""
    import numpy as np

    def step(x, labels):
        p = params
        n = len(labels)
        if hidden:
            z1 = x @ p["w1"] + p["b1"]
            h = np.maximum(z1, 0)
            logits = h @ p["w2"] + p["b2"]
        else:
            logits = x @ p["w"] + p["b"]
        z = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(z)
        probs = e / e.sum(axis=1, keepdims=True)
        loss = -np.log(probs[np.arange(n), labels]).mean()
        d = probs
        d[np.arange(n), labels] -= 1
        d /= n
        if hidden:
            grads = {"w2": h.T @ d, "b2": d.sum(axis=0)}
            dz1 = (d @ p["w2"].T) * (z1 > 0)
            grads["w1"], grads["b1"] = x.T @ dz1, dz1.sum(axis=0)
        else:
            grads = {"w": x.T @ d, "b": d.sum(axis=0)}
        for k, g in grads.items():
            p[k] -= np.float32(0.1) * g
        return loss

    return step


def _sgd_jax(params: dict, hidden: bool):
    jax = _jax()
    if jax is None:
        return None
    import jax.numpy as jnp

    def loss_fn(p, x, labels):
        if hidden:
            logits = jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        else:
            logits = x @ p["w"] + p["b"]
        logp = jax.nn.log_softmax(logits, axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    @jax.jit
    def step(p, x, labels):
        loss, g = jax.value_and_grad(loss_fn)(p, x, labels)
        return {k: p[k] - 0.1 * g[k] for k in p}, loss

    state = {"p": {k: jax.device_put(v) for k, v in params.items()}}

    def run(x, labels):
        state["p"], loss = step(state["p"], x, labels)
        return loss.block_until_ready()

    return run


def _sgd_torch(params: dict, hidden: bool, threads: int):
    torch = _torch(threads)
    if torch is None:
        return None
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    opt = torch.optim.SGD(tp.values(), lr=0.1)

    def run(x, labels):
        opt.zero_grad()
        if hidden:
            logits = torch.relu(x @ tp["w1"] + tp["b1"]) @ tp["w2"] + tp["b2"]
        else:
            logits = x @ tp["w"] + tp["b"]
        loss = torch.nn.functional.cross_entropy(logits, labels)
        loss.backward()
        opt.step()
        return loss

    return run, torch


def _train_engines(name: str, batch: int, threads: int, tmp: Path) -> dict:
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 784), dtype=np.float32)
    labels = rng.integers(0, 10, size=batch).astype(np.int32)
    model = _irkit_model(name, threads, tmp)
    hidden = name == "mlp"
    params = {k: np.array(v) for k, v in model.variables.items()}
    np_step = _sgd_numpy({k: v.copy() for k, v in params.items()}, hidden)
    engines = {"irkit": lambda: model.train_step(x=x, labels=labels),
               "numpy": lambda: np_step(x, labels)}
    torch_step = _sgd_torch(params, hidden, threads)
    if torch_step is not None:
        run, torch = torch_step
        tx, tl = torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))
        engines["torch"] = lambda: run(tx, tl)
    jax_step = _sgd_jax(params, hidden)
    if jax_step is not None:
        jax = _jax()
        jx, jl = jax.device_put(x), jax.device_put(labels)
        engines["jax"] = lambda: jax_step(jx, jl)
    # the first step of each from the same parameters gives the same loss
    first = float(model.train_step(x=x, labels=labels)["loss"])
    ref = float(_sgd_numpy({k: v.copy() for k, v in params.items()}, hidden)(x, labels))
    assert abs(first - ref) <= 1e-4 * max(1.0, abs(ref)), f"{name}: loss {first} != {ref}"
    return engines


def cnn_engines(threads: int, tmp: Path) -> dict:
    import inspect

    import numpy as np

    import irkit
    kwargs = {"engine": "jit"}
    if "threads" in inspect.signature(irkit.load_model).parameters:
        kwargs["threads"] = threads
    model = irkit.load_model(ROOT / "examples" / "cnn.irk", **kwargs)
    rng = np.random.default_rng(0)
    images = rng.standard_normal((64, 1, 12, 12), dtype=np.float32)
    labels = rng.integers(0, 10, size=64).astype(np.int32)
    engines = {"irkit": lambda: model.train_step(images=images, labels=labels)}
    torch = _torch(threads)
    if torch is not None:
        F = torch.nn.functional
        p = {k: torch.tensor(np.array(v), requires_grad=True)
             for k, v in model.variables.items() if k in
             ("k1", "mu1", "var1", "g1", "b1", "k2", "w", "b")}
        opt = torch.optim.SGD(list(p.values()), lr=0.01, momentum=0.9)   # irkit trains all
        ti = torch.from_numpy(images)
        tl = torch.from_numpy(labels.astype(np.int64))

        def step():
            opt.zero_grad()
            h = F.conv2d(ti, p["k1"], padding=1)
            c = (1, -1, 1, 1)                   # batchnorm by its formula: irkit trains the
            h = ((h - p["mu1"].view(c)) / torch.sqrt(p["var1"].view(c) + 1e-5)  # statistics
                 * p["g1"].view(c) + p["b1"].view(c))
            h1 = F.max_pool2d(F.relu(h), 2)
            h2 = F.relu(F.conv2d(h1, p["k2"]))
            logits = F.avg_pool2d(h2, 2, 2).reshape(-1, 64) @ p["w"] + p["b"]
            loss = F.cross_entropy(logits, tl)
            loss.backward()
            opt.step()
            return loss

        engines["torch"] = step
    return engines


def engines_for(workload: str, threads: int, tmp: Path) -> dict:
    if workload == "mlp128":
        return _train_engines("mlp", 128, threads, tmp)
    if workload == "mlp1024":
        return _train_engines("mlp", 1024, threads, tmp)
    if workload == "logreg":
        return _train_engines("logreg", 100, threads, tmp)
    return globals()[f"{workload}_engines"](threads, tmp)


def worker(threads: int, workloads: list[str], repeat: int) -> dict:
    """Time every engine of every workload in this process (already pinned)."""
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for w in workloads:
            try:
                engines = engines_for(w, threads, Path(tmp))
            except Exception as e:                 # a workload that fails is reported
                results[w] = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:200]}
                continue
            results[w] = {}
            for name, fn in engines.items():
                if ONLY_ENGINE is None or name.split()[0] == ONLY_ENGINE or \
                        (ONLY_ENGINE == "numpy" and name == "STREAM add"):
                    time.sleep(0.5)     # the set-up's numpy calls: OpenBLAS's threads idle
                    results[w][name] = timed(fn, repeat)
    return results


# ---------------------------------------------------------------------------------------------
# Compile times (fresh processes)
# ---------------------------------------------------------------------------------------------


FIRST_STEP = """
import time, numpy as np
t0 = time.perf_counter()
import irkit
m = irkit.load_model({path!r}, engine="jit")
x = np.zeros((32, 64), np.float32); labels = np.zeros(32, np.int32)
m.train_step(x=x, labels=labels)
print(time.perf_counter() - t0)
"""


def compile_times() -> list[tuple[str, float, float | None]]:
    """(what, seconds of the whole process, seconds from `import irkit` on or None) for a
    fresh process to the first MLP step (cold and warm cache) and a cold `irkit-compile` of
    each example to a shared library. The first column is the target's; the second leaves
    out what every Python program pays (the interpreter's start, numpy's import, the exit),
    as one times `jax.jit`'s first call after `import jax`."""
    import compileall
    # A user's fresh process finds irkit's modules compiled to bytecode (Python writes it on
    # the first import), unless PYTHONDONTWRITEBYTECODE is set, as it is on some machines:
    # each module edited since would then be compiled from source in every process timed
    # (0.3-0.5 s of the cold row, measured)
    for folder in ("irkit", "backends", "dialects", "exporters", "frontend", "passes",
                   "runtime", "tools"):
        compileall.compile_dir(ROOT / folder, quiet=1)
    rows = []
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, IRKIT_CACHE_DIR=cache)
        code = FIRST_STEP.format(path=str(ROOT / "examples" / "mlp.irk"))
        for label in ("cold", "warm"):
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                               capture_output=True, text=True)
            rows.append((f"fresh process to first MLP train step, JIT, {label} cache",
                         time.perf_counter() - t0, float(r.stdout.split()[-1])))
        compiler = Path(sys.executable).with_name("irkit-compile")
        for example in sorted((ROOT / "examples").glob("*.irk")):
            with tempfile.TemporaryDirectory() as fresh:
                env_cold = dict(os.environ, IRKIT_CACHE_DIR=fresh)
                t0 = time.perf_counter()
                r = subprocess.run([str(compiler), str(example), "-o",
                                    str(Path(out) / f"{example.stem}.so")],
                                   env=env_cold, capture_output=True, text=True)
                dt = time.perf_counter() - t0
            status = "" if r.returncode == 0 else " (failed)"
            rows.append((f"irkit-compile {example.name} to .so, cold{status}", dt, None))
    return rows


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------


def run_worker_process(threads: int, workloads: list[str], repeat: int,
                       engine: str) -> dict:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMEXPR_NUM_THREADS"):
        env[var] = str(threads)
    env["XLA_FLAGS"] = (f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'} "
                        f"intra_op_parallelism_threads={threads}")
    r = subprocess.run([sys.executable, __file__, "--worker", str(threads), "--engine", engine,
                        "--only", ",".join(workloads), "--repeat", str(repeat)],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"worker for {engine} on {threads} thread(s) failed:\n"
                         f"{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def run_workers(threads: int, workloads: list[str], repeat: int, rounds: int) -> dict:
    """Every engine's times at `threads`, each engine timed in a process of its own per
    round (`ONLY_ENGINE`), the rounds' calls pooled, merged per workload in `ENGINES`
    order."""
    merged: dict = {w: {} for w in workloads}
    for r in range(rounds):
        for engine in ENGINES[r % len(ENGINES):] + ENGINES[:r % len(ENGINES)]:
            for w, times in run_worker_process(threads, workloads, repeat, engine).items():
                if "error" in times:
                    merged[w].setdefault("error", times["error"])
                    continue
                for name, calls in times.items():
                    merged[w].setdefault(name, []).extend(calls)
    return merged         # rows in the first round's order: `ENGINES`


def cell(times: list[float], ref: list[float] | None, flops: float | None) -> str:
    med = statistics.median(times)
    text = f"{med * 1e3:.3g} ms ({min(times) * 1e3:.3g}-{max(times) * 1e3:.3g})"
    if flops:
        text += f", {flops / med / 1e9:.3g} GFLOP/s"
    if ref is not None:
        text += f", x{statistics.median(ref) / med:.2f}"
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2", help="thread counts, one worker each")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3, help="worker processes per engine")
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--quiet", type=float, default=1.0, help="load average to wait for")
    ap.add_argument("--wait", type=float, default=120.0)
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--engine", choices=ENGINES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    workloads = [w for w in args.only.split(",") if w]
    if args.worker:
        global ONLY_ENGINE
        ONLY_ENGINE = args.engine
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:args.worker])
        print(json.dumps(worker(args.worker, workloads, args.repeat)))
        return 0

    load = wait_for_quiet(args.quiet, args.wait)
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    threads = [int(t) for t in args.threads.split(",")]
    results = {t: run_workers(t, workloads, args.repeat, args.rounds) for t in threads}
    print(f"irkit bench/run.py on {cpu}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}; load average before: {load:.2f}, after: "
          f"{os.getloadavg()[0]:.2f}")
    print("median (min-max) of the calls, and numpy's median / the engine's (x above 1: "
          "faster than numpy)\n")
    print("| workload | engine | " + " | ".join(f"{t} thread{'s' * (t > 1)}" for t in threads)
          + " |")
    print("| --- | --- | " + " | ".join("---" for _ in threads) + " |")
    flops = {"matmul": 2 * 1024 ** 3}
    for w in workloads:
        errors = {t: results[t][w]["error"] for t in threads if "error" in results[t][w]}
        if errors:
            print(f"| {w} | (failed) | " + " | ".join(errors.get(t, "") for t in threads)
                  + " |")
            continue
        names = list(results[threads[0]][w])
        for name in names:
            cells = []
            for t in threads:
                r = results[t][w]
                cells.append(cell(r[name], r.get("numpy") if name != "numpy" else None,
                                  flops.get(w)) if name in r else "-")
            print(f"| {w} | {name} | " + " | ".join(cells) + " |")
    if "fused" in workloads:
        n_bytes = 3 * 4 * 10_000_000
        for t in threads:
            r = results[t]["fused"]
            if "error" in r:
                continue
            stream = n_bytes / statistics.median(r["STREAM add"])
            fused = 5 * 4 * 10_000_000 / statistics.median(r["irkit"])
            print(f"\nfused, {t} thread(s): STREAM add {stream / 1e9:.1f} GB/s; irkit's fused "
                  f"kernel moves 5 arrays at {fused / 1e9:.1f} GB/s = "
                  f"{100 * fused / stream:.0f}% of STREAM")
    if not args.no_compile:
        print("\n| compile | seconds, whole process | from `import irkit` on |\n"
              "| --- | --- | --- |")
        for what, dt, inside in compile_times():
            print(f"| {what} | {dt:.2f} | {'-' if inside is None else f'{inside:.2f}'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
