"""The model object users call: `irkit.load_model("m.irk", model="mlp").forward(x=...)`.

A `Model` wraps one model's module (`module @mlp { graph.variable ...; func.func @forward }`)
and an *engine* that runs its functions (`irkit.runtime.engines`: the reference interpreter,
code compiled in process, or a shared library loaded with `irkit.load`). The signature comes
from the IR itself, not from the DSL: `@forward`'s arguments carry `{graph.name, graph.dims}`
and its results `{graph.name}`, so a module read back from text, or a compiled library,
describes itself the same way.

Training: a model with a `train` clause has a second function `@train_step` (same inputs,
result `loss`): forward, backward and the optimizer's update, which assigns the params and
the optimizer's state variables. `Model.train_step(**batch)` runs it once, so the arrays in
`model.variables` (params and optimizer state alike) change in place between calls.

Inputs are checked before anything runs, in the user's terms (`irkit.runtime.inputs`).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

import numpy as np

from irkit.diagnostics import ParseError
from irkit.dialects import register_all
from irkit.ir import Operation
from irkit.passes import pipeline
from irkit.runtime import param_pages
from irkit.runtime.compiled import CompiledRunner, IRText
from irkit.runtime.engines import ENGINES, CompiledEngine, Engine
from irkit.source_files import read_source
from irkit.symbols import symbol_name


class Variables(MutableMapping):
    """The model's parameters by name: reading gives the live array, assigning checks the
    shape and converts the element type (so a typo cannot silently change a model)."""

    def __init__(self, store: dict, types: dict) -> None:
        self._store = store
        self._types = types         # name -> (shape, numpy dtype)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._types:
            raise KeyError(f"no variable {name!r} (variables: {', '.join(self._types)})")
        return self._store[name]

    def __setitem__(self, name: str, value) -> None:
        self.assign({name: value})

    def assign(self, values: dict) -> None:
        """Replace several variables at once (`restore`): each checked as one assignment
        is, and the large ones placed together on huge pages (`param_pages`)."""
        fresh = {}
        for name, value in values.items():
            if name not in self._types:
                raise KeyError(f"no variable {name!r} (variables: {', '.join(self._types)})")
            shape, dtype = self._types[name]
            arr = np.asarray(value)
            if arr.shape != shape:
                raise ValueError(f"variable {name!r} has shape {list(shape)}, got "
                                 f"{list(arr.shape)}")
            if not np.can_cast(arr.dtype, dtype, "same_kind"):
                raise ValueError(f"variable {name!r} holds {np.dtype(dtype).name}, got "
                                 f"{arr.dtype.name}")
            # row-major, as compiled code reads it; not copied yet: `place` copies the
            # large ones into its mapping, and the others are copied below, so that no
            # variable shares memory with the caller's array
            fresh[name] = np.asarray(arr, dtype=dtype, order="C")
        for name, arr in param_pages.place(fresh).items():
            self._store[name] = np.array(arr) if arr is fresh[name] else arr

    def __delitem__(self, name: str) -> None:
        raise TypeError("variables cannot be deleted")

    def __iter__(self):
        return iter(self._types)

    def __len__(self) -> int:
        return len(self._types)

    def __repr__(self) -> str:
        return "Variables(" + ", ".join(f"{n}: {list(s)}" for n, (s, _) in
                                        self._types.items()) + ")"


class Model:
    """One model of a DSL file (or any module with a `@forward` function), run by an engine:
    one of `ENGINES` by name (`"interpreter"`, `"jit"`), or an `Engine` (`from_engine`).

    A module that still holds derivative requests is copied and the copy expanded (the
    caller's module is left as it was)."""

    def __init__(self, module: Operation, engine: str = "interpreter", *,
                 opt_level: int = 2, threads: int | None = None, disable=(),
                 pass_options: str = "") -> None:
        disable, pass_options = _disable(disable), _pass_options(pass_options, engine)
        self._init(symbol_name(module) or "model",
                   _engine_class(engine).from_module(module, opt_level, _threads(threads),
                                                     disable, pass_options=pass_options),
                   (disable, pass_options))

    @classmethod
    def from_engine(cls, name: str, engine: Engine,
                    pipeline_edits: tuple[tuple[str, ...], str] = ((), "")) -> "Model":
        """A model run by `engine` (a library's code, `irkit.load`); `pipeline_edits`: the
        (`disable`, `pass_options`) its code was compiled with."""
        self = cls.__new__(cls)
        self._init(name, engine, pipeline_edits)
        return self

    def _init(self, name: str, engine: Engine,
              pipeline_edits: tuple[tuple[str, ...], str] = ((), "")) -> None:
        self.name = name
        #: (`disable`, `pass_options`) the model was compiled with, for `profile` to compile
        #: the same code
        self._pipeline_edits = pipeline_edits
        self._engine = engine
        self.engine = engine.name
        functions = engine.functions()
        if "forward" not in functions:
            raise ValueError(f"model {name!r} has no function @forward")
        self._train_step = "train_step" if "train_step" in functions else None
        self.inputs = engine.inputs("forward")
        self.outputs = engine.outputs("forward")
        self._store = engine.variable_store()
        types, values = {}, {}
        for vname, (value, shape, dtype) in engine.variables().items():
            values[vname] = value
            types[vname] = (tuple(shape), dtype)
        for vname, value in param_pages.place(values).items():
            self._store[vname] = value              # (an engine's store may track each)
        self.variables = Variables(self._store, types)

    @property
    def module(self) -> Operation:
        """The model's module as its engine shows it (`Engine.module`: a warm start's is
        parsed from the compile cache's text when first asked for)."""
        return self._engine.module

    def save(self, path: str | Path) -> None:
        """Write every variable (params and optimizer state) to an `.npz` file."""
        np.savez(path, **{n: np.asarray(self.variables[n]) for n in self.variables})

    def restore(self, path: str | Path) -> None:
        """Read the variables written by `save` (any engine); every variable must be there
        with its shape, and no other array."""
        with np.load(path) as data:
            names = set(data.files)
            missing = [n for n in self.variables if n not in names]
            unknown = sorted(names - set(self.variables))
            if missing or unknown:
                raise ValueError(f"{path}: does not match model {self.name!r}: "
                                 + "; ".join(p for p in (
                                     missing and f"missing {', '.join(missing)}",
                                     unknown and f"unknown {', '.join(unknown)}") if p))
            self.variables.assign({n: data[n] for n in self.variables})

    def forward(self, **inputs) -> dict:
        """Run `@forward`: a dict from output name to numpy array."""
        return self._engine.run("forward", self.name, inputs, self._store)

    @property
    def trainable(self) -> bool:
        """Whether the model has a `train` clause (a `@train_step` function)."""
        return self._train_step is not None

    def train_step(self, **batch) -> dict:
        """Run `@train_step` once on a batch (the same inputs as `forward`): one optimizer
        step, which updates the params and the optimizer state in `variables`. Returns
        {"loss": the loss before the update}."""
        if self._train_step is None:
            raise ValueError(f"model {self.name!r} has no train clause: add `train LOSS with "
                             f"OPTIMIZER(...)` to give it a train_step")
        return self._engine.run("train_step", self.name, batch, self._store)

    def profile(self, function: str = "train_step", *, threads: int | None = None,
                repeat: int = 20, **inputs):
        """Where `function`'s time goes on these inputs, kernel by kernel, each named by
        its model line (`irkit.runtime.profile.Profile`; print it for a table). A timed copy
        of the model is compiled for it (a few seconds), with the `disable` and
        `pass_options` the model was loaded with, and run `repeat` times on `threads`
        threads (`_threads`) from copies of the variables: the model itself, its code and its
        variables are left as they are."""
        from irkit.runtime.profile import profile_module
        disable, pass_options = self._pipeline_edits
        return profile_module(self.module, function, inputs, dict(self._store),
                              threads=_threads(threads), repeat=repeat, disable=disable,
                              pass_options=pass_options)

    def __repr__(self) -> str:
        ins = ", ".join(f"{s.name}: {s.describe()}" for s in self.inputs)
        return f"<Model {self.name}({ins}) -> {', '.join(self.outputs)} [{self.engine}]>"


def load_model(path: str | Path, model: str | None = None,
               engine: str = "interpreter", opt_level: int = 2, cache: bool = True,
               threads: int | None = None, disable=(),
               data_parallel: int | None = None, micro_batches: int | None = None,
               pass_options: str = "") -> Model:
    """Compile a `.irk` file and return one of its models, ready to run on `engine` (its
    derivative requests expanded into graph ops for the interpreter, as `Model` does).

    `model` may be left out when the file defines exactly one model. `engine="jit"` lowers
    the model to loops and compiles it in process (`opt_level` 0..3); the result has the same
    API. Compiled code comes from the persistent compile cache when it holds this file's
    model compiled the same way (`irkit.runtime.compile_cache`; `cache=False` bypasses it).
    Compiled code runs its parallel loops on `threads` threads (`_threads`). `disable` names
    passes of the pipeline table to leave out (`disable=["linalg-fuse"]`: no fusion groups),
    for every engine: the interpreter runs the rows up to autodiff, which may name some.
    `pass_options` sets options of passes the table runs, over the table's own
    (`pass_options="linalg-matmul-blis{align-start=false}"`: matmul results that do not
    depend on where the inputs lie within a vector; `pipeline.pass_option_edits`).

    `data_parallel=N` runs the model on N MPI ranks, this process being one of them
    (`mpiexec -n N`), as PyTorch's DistributedDataParallel does: each rank is given its own
    slice of the batch, the variables stay identical on all ranks, and the loss and the
    gradients are those of the whole batch (`irkit.runtime.distributed`). A model that
    declares a grid (`grid g[model=2]`, placements of its inputs and params) runs the same
    way on that grid's ranks, each holding its pieces of the split variables; its `stage`
    blocks make it a pipeline, one stage per rank, the batch cut into `micro_batches`.
    """
    threads = _threads(threads)
    engine_class = _engine_class(engine)
    pass_options, disable = _pass_options(pass_options, engine), _disable(disable)
    filename = str(path)
    try:
        text = read_source(filename)
    except ParseError:      # not UTF-8: the DSL's error (the front end imported only then)
        from irkit.frontend.dsl import DSLSyntaxError
        text = read_source(filename, DSLSyntaxError)
    # A model that declares no grid and is given no ranks runs in this process: a warm start
    # imports neither the MPI runtime nor the DSL (`distributed_engine` would return None)
    found = None
    if data_parallel is not None or micro_batches is not None or "grid" in text:
        from irkit.runtime.distributed import distributed_engine
        found = distributed_engine(engine, text, filename, model, data_parallel,
                                   micro_batches, opt_level, cache, threads, disable,
                                   pass_options)
    if found is None:
        found = engine_class.from_source(text, filename, model, opt_level, cache, threads,
                                         disable, pass_options=pass_options)
    return Model.from_engine(*found, (disable, pass_options))


def _engine_class(engine: str) -> type[Engine]:
    if engine not in ENGINES:
        from irkit.runtime import cuda  # noqa: F401  (registers the engine "cuda" when asked)
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; available: "
                         f"{', '.join(repr(e) for e in ENGINES)}")
    return ENGINES[engine]


def _disable(disable) -> tuple[str, ...]:
    """`disable` as a tuple of pass names, checked against the pipeline table now (a typo is
    an error before anything compiles): a string is one name or a comma-separated list."""
    names = tuple(disable.split(",")) if isinstance(disable, str) else tuple(disable)
    pipeline.passes_between(None, pipeline.compiled_stage(), names)
    return names


def _pass_options(pass_options: str, engine: str = "jit") -> str:
    """`pass_options` checked against the pipeline table of `engine`'s target now (an unknown
    pass or option, or a bad value, is an error before anything compiles), as given."""
    if not isinstance(pass_options, str):
        raise TypeError(f"pass_options must be a pipeline string such as "
                        f"'linalg-matmul-blis{{align-start=false}}', not "
                        f"{type(pass_options).__name__}")
    if pass_options.strip():
        pipeline.pass_option_edits(pass_options, "nvptx" if engine == "cuda" else "cpu")
    return pass_options.strip()


def _threads(threads: int | None) -> int:
    """The thread count compiled code is given: None (not told) and 0 both mean OpenMP's
    default, the `OMP_NUM_THREADS` environment variable, else every core; n > 0 at most n
    threads per parallel loop (fewer where a loop has too little work); a ValueError for
    anything else, before any compiling."""
    from irkit.backends.llvm_cpu import check_threads
    return check_threads(0 if threads is None else threads)


def load(path: str | Path, model: str | None = None, threads: int | None = None) -> Model:
    """A model of a shared library built by `irkit-compile model.irk -o model.so` (engine
    "shared"), called through ctypes; its metadata is read from the sidecar `model.so.json`
    and checked against the library (`irkit.exporters.library`: a CPU without the features
    it was compiled for is refused). Its parallel loops run on `threads` threads (`_threads`;
    one setting per library file and process: the last load of it decides). A `.ptx` file
    (`irkit-compile --target=nvptx -o model.ptx`) is loaded on the GPU instead (engine
    "cuda", `irkit.runtime.cuda`)."""
    from irkit.exporters.library import open_library
    register_all()
    if os.fspath(path).endswith(".ptx"):
        from irkit.runtime import cuda
        return Model.from_engine(*cuda.load_ptx(os.fspath(path)))
    lib = open_library(os.fspath(path), model, _threads(threads))
    runner = CompiledRunner(lib.lowered, lib.functions, lib.handle, prefix=f"{lib.model}_",
                            graph=IRText(lib.graph) if lib.graph is not None else None)
    return Model.from_engine(lib.model, CompiledEngine(runner, "shared"))
