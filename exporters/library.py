"""Shared libraries of compiled models: one `.so` of every model's functions (symbols
`<model>_<function>`), a C header, checked entry points, the models' variables, and the
metadata `irkit.load` reads.

    write_library(lowered, "model.so")           # model.so + model.h + model.so.json
    lib = open_library("model.so", model="mlp")   # checked, loaded: irkit.load's model

The header declares a memref descriptor struct per element type and rank, each function's
plain entry point, a `_checked` one that validates every buffer's rank, sizes,
symbolic-dimension agreement and contiguity and returns nonzero with a message for
`irkit_last_error()`, a `_run` one over the library's own copy of the variables, and the
functions that initialize, enumerate, get and set that copy. All but the plain entry points
are C code (`irkit.exporters.library_c`) compiled with the system compiler and linked in.
The Python side (`irkit.load`, through `open_library`) calls the plain entry points with numpy
arrays for the variables, as the JIT does, and leaves the library's copy alone.

A library's metadata is a sidecar JSON file next to it (`model.so.json`): per model, the
lowered module's text (function symbols renamed `<model>_<function>`) and the graph module's
text (for the shape functions), from which the runtime rebuilds the same runner the JIT
uses. JSON rather than IR embedded in the library keeps the library a plain C artifact and
the metadata readable with any tool. The two are tied by a fingerprint (`library_metadata`),
compiled into the library as `irkit_fingerprint()` and checked by `open_library` first.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from irkit.version import VERSION as __version__
from irkit.attributes import StringAttr
from irkit.builtin import ModuleOp
from irkit.exporters.library_c import c_header, c_source, compile_c
from irkit.exporters.output_files import OutputFiles
from irkit.ir import Operation
from irkit.parser import parse_module
from irkit.printer import print_op


def flat_module(lowered: dict[str, Operation]) -> Operation:
    """One `builtin.module` of every model's functions, renamed `<model>_<function>`."""
    top = ModuleOp.create_empty()
    block = top.regions[0].blocks[0]
    for model, mod in lowered.items():
        for fn in mod.regions[0].blocks[0].ops:
            if fn.name != "func.func":
                continue
            c = fn.clone()
            c.properties["sym_name"] = StringAttr(f"{model}_{fn.properties['sym_name'].value}")
            block.append(c)
    return top


def renamed(model: str, mod: Operation) -> Operation:
    """A copy of a lowered model module whose functions are named `<model>_<function>`."""
    c = mod.clone()
    for fn in c.regions[0].blocks[0].ops:
        if fn.name == "func.func":
            fn.properties["sym_name"] = StringAttr(f"{model}_{fn.properties['sym_name'].value}")
    return c


def write_library(lowered: dict[str, Operation], path: str, opt_level: int = 2,
                  header: str | None = None,
                  graphs: dict[str, Operation] | None = None,
                  cpu: str = "native",
                  object_code: tuple[bytes, ...] | None = None) -> tuple[str, str, str]:
    """Link `path` (a shared library of every model's functions, `<model>_<fn>` symbols,
    compiled for `cpu`: `llvm_cpu.cpu_target`), write the C header (`header`, default next
    to it with `.h`) and the sidecar metadata `path + ".json"` (the lowered IR, and the
    graph IR of `graphs` for output shapes the symbolic pass cannot derive). Returns the
    three paths. `object_code`, when given, is the backend's object files of
    `flat_module(lowered)` for `cpu` already compiled (the compile cache's), used as it is.

    The three are one build: each is written to a temporary beside it and all are renamed
    into place only once every one is complete (`irkit.exporters.output_files`), so a failure or
    Ctrl-C leaves none of them, and an `OSError` names the file that failed. LLVM runs on a
    helper thread (`llvm_cpu.start_object`) while the rest is made, and Ctrl-C acts at once.
    The library and the metadata carry the same fingerprint (`library_metadata`), which
    `open_library` checks."""
    import re
    import tempfile
    from irkit.backends.llvm_cpu import link_shared, start_object
    path = os.fspath(path)
    # LLVM first, on a helper thread (`start_object`): the metadata, the header and the C
    # wrapper are made while it optimizes (mlp: 0.3 s of printing and 0.2 s of cc hidden).
    pending = None if object_code is not None else \
        start_object(flat_module(lowered), opt_level=opt_level, cpu=cpu)
    if header is None:
        header = os.path.splitext(path)[0] + ".h"
    header, meta_path = os.fspath(header), path + ".json"
    guard = re.sub(r"\W", "_", os.path.basename(header)).upper()
    meta = library_metadata(lowered, graphs, opt_level, cpu)
    with OutputFiles() as files:
        tmp_so, tmp_h, tmp_meta = files.path(path), files.path(header), files.path(meta_path)
        _write(tmp_h, header, c_header(lowered, guard=f"IRKIT_{guard}",
                                       fingerprint=meta["fingerprint"]))
        with tempfile.TemporaryDirectory(prefix="irkit-library-") as tmp:
            wrapper = compile_c(c_source(lowered, os.path.abspath(tmp_h),
                                         fingerprint=meta["fingerprint"],
                                         target=meta["target"]), tmp)
        objects = object_code if pending is None else pending.result().objects
        link_shared([*objects, wrapper], tmp_so)
        _write(tmp_meta, meta_path, json.dumps(meta, indent=1) + "\n")
        files.commit()
    return path, header, meta_path


def _write(tmp: str, dest: str, text: str) -> None:
    """`text` into the temporary `tmp` of `dest`; an error names `dest`."""
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise type(e)(e.errno, e.strerror, dest) from None


def library_metadata(lowered: dict[str, Operation], graphs: dict[str, Operation] | None,
                     opt_level: int, cpu: str = "native") -> dict:
    """The sidecar metadata of a library: per model its lowered IR (and graph IR), the
    irkit version and the CPU target (`cpu_target(cpu)`: triple, CPU, features) it is built
    for, and `fingerprint`, a hash of all of that. The same fingerprint is compiled into
    the library (`irkit_fingerprint()`) and its header, so that a library and a description
    (or a header) of two different builds are told apart before either is trusted."""
    import hashlib
    from irkit.backends.llvm_cpu import cpu_target
    meta = {"format": "irkit-library-1", "irkit_version": __version__,
            "target": cpu_target(cpu), "opt_level": opt_level,
            # with locations: run-time errors (memory.check sites, shape errors) name the
            # model's line
            "models": {m: {"ir": print_op(renamed(m, mod), debuginfo=True),
                           **({"graph_ir": print_op(graphs[m], debuginfo=True)}
                              if graphs and m in graphs else {})}
                       for m, mod in lowered.items()}}
    digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode("utf-8")).hexdigest()
    return {**meta, "fingerprint": digest[:32]}


def _built_fingerprint(path: str) -> str | None:
    """The fingerprint compiled into the library at `path`, None if it has none."""
    import ctypes
    lib = ctypes.CDLL(path)
    if not hasattr(lib, "irkit_fingerprint"):
        return None
    get = lib.irkit_fingerprint
    get.restype, get.argtypes = ctypes.c_char_p, []
    return get().decode("ascii", "replace")


def _private_copy(path: str) -> str:
    """A copy of `path` under a new name, removed when the process exits. The dynamic loader
    hands back a library already loaded from the same path, so a library rebuilt in place
    after this process loaded it must be loaded from a copy to be seen."""
    import atexit
    import shutil
    import tempfile
    folder = tempfile.mkdtemp(prefix="irkit-reload-")
    atexit.register(shutil.rmtree, folder, True)
    return shutil.copy2(path, os.path.join(folder, os.path.basename(path)))


def check_library(path: str, meta_path: str, meta: dict) -> str:
    """The file to load `path` from, once checked: refuse a library whose metadata is not
    from the same build (fingerprints differ), or that was built by another irkit version
    or for a CPU with features this one lacks, with a clear `ValueError`, where going on
    would call functions the library does not have, with another signature, or with
    instructions this CPU cannot run. A library rebuilt in place after this process loaded
    the old one is loaded from a private copy (`_private_copy`), not refused."""
    from irkit.backends.llvm_cpu import host_target, missing_features
    path = os.path.abspath(path)
    built, recorded = _built_fingerprint(path), meta.get("fingerprint")
    if built is None or recorded is None:
        raise ValueError(f"{path} or {meta_path} has no fingerprint: built by an older irkit; "
                         "rebuild it")
    if built != recorded:               # perhaps the old image of a library rebuilt since
        copy = _private_copy(path)
        if _built_fingerprint(copy) == recorded:
            path, built = copy, recorded
    if built != recorded:
        raise ValueError(f"{path} was built from a different model description than "
                         f"{meta_path} (fingerprints {built} vs {recorded})")
    if meta.get("irkit_version") != __version__:
        raise ValueError(f"{path} was built by irkit {meta.get('irkit_version')}; this is "
                         f"irkit {__version__}: rebuild it")
    target, host = meta.get("target", {}), host_target()
    if target.get("triple") != host["triple"]:
        raise ValueError(f"{path} was built for {target.get('triple')}; this machine is "
                         f"{host['triple']}")
    missing = missing_features(target)
    if missing:
        raise ValueError(f"{path} was built for CPU {target.get('cpu')} with features this "
                         f"CPU ({host['cpu']}) lacks: {', '.join(missing)}; "
                         "rebuild it here (irkit-compile --cpu=native) or for every CPU of "
                         "its kind (--cpu=generic)")
    return path


@dataclass
class OpenedLibrary:
    """One model of a library, checked and loaded: its lowered module (functions named as
    in the model), its graph module (None if the library has none), the functions the
    library exports for it by name, and the handle that keeps the library loaded."""

    model: str
    lowered: Operation
    graph: Operation | None
    functions: dict
    handle: object


def open_library(path: str, model: str | None = None, threads: int = 0) -> OpenedLibrary:
    """Check and load the library at `path` written by `write_library` (its metadata from
    `path + ".json"`), for one of its models (`model` may be left out when it holds one),
    its parallel loops set to run on `threads` threads (`irkit_set_threads`: 0 is OpenMP's
    default; one setting per library and process). Every dialect must be known
    (`irkit.dialects.register_all()`) to read the metadata."""
    import ctypes
    from irkit.backends.llvm_cpu import check_threads, load_shared
    check_threads(threads)
    meta_path = os.fspath(path) + ".json"
    try:
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
    except OSError as e:
        raise ValueError(f"cannot read the metadata of '{path}' ({meta_path}): "
                         f"{e.strerror}") from None
    except ValueError as e:             # not UTF-8, not JSON
        raise ValueError(f"{meta_path} is not an irkit library description: {e}") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("models"), dict):
        raise ValueError(f"{meta_path} is not an irkit library description (no models)")
    lib_path = check_library(os.fspath(path), meta_path, meta)
    models = meta["models"]
    if model is None:
        if len(models) != 1:
            raise ValueError(f"{path} holds {len(models)} models ({', '.join(models)}); "
                             "choose one with model=")
        model = next(iter(models))
    if model not in models:
        raise ValueError(f"{path} has no model {model!r} (models: {', '.join(models)})")
    lowered = parse_module(models[model]["ir"], meta_path)
    graph = (parse_module(models[model]["graph_ir"], meta_path)
             if "graph_ir" in models[model] else None)
    jm = load_shared(lib_path, lowered)
    ctypes.CDLL(lib_path).irkit_set_threads(ctypes.c_int(threads))
    prefix = f"{model}_"
    functions = {n[len(prefix):]: f for n, f in jm.functions.items()}
    return OpenedLibrary(model, lowered, graph, functions, jm)
