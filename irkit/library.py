"""Shared libraries of compiled models: one `.so` of every model's functions (symbols
`<model>_<function>`), a C header, checked entry points, the models' variables, and the
metadata `irkit.load` reads.

    write_library(lowered, "model.so")           # model.so + model.h + model.so.json
    model = load_library("model.so", model="mlp")

The header declares a memref descriptor struct per element type and rank, each function's
plain entry point, a `_checked` one that validates every buffer's rank, sizes,
symbolic-dimension agreement and contiguity and returns nonzero with a message for
`irkit_last_error()`, a `_run` one over the library's own copy of the variables, and the
functions that initialize, enumerate, get and set that copy. All but the plain entry points
are C code (`irkit.library_c`) compiled with the system compiler and linked in. The Python
side (`load_library`) calls the plain entry points with numpy arrays for the variables, as
the JIT does, and leaves the library's copy alone.

A library's metadata is a sidecar JSON file next to it (`model.so.json`): per model, the
lowered module's text (function symbols renamed `<model>_<function>`) and the graph module's
text (for the shape functions), from which `load_library` rebuilds the same runner the JIT
uses. JSON rather than IR embedded in the library keeps the library a plain C artifact and
the metadata readable with any tool.
"""

from __future__ import annotations

import json
import os

from irkit.ir import Operation
from irkit.library_c import c_header, c_source, compile_c
from irkit.runtime import CompiledRunner


def flat_module(lowered: dict[str, Operation]) -> Operation:
    """One `builtin.module` of every model's functions, renamed `<model>_<function>`."""
    from irkit.attributes import StringAttr
    from irkit.parser import parse_module
    top = parse_module("module {\n}\n")
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
    from irkit.attributes import StringAttr
    c = mod.clone()
    for fn in c.regions[0].blocks[0].ops:
        if fn.name == "func.func":
            fn.properties["sym_name"] = StringAttr(f"{model}_{fn.properties['sym_name'].value}")
    return c


def write_library(lowered: dict[str, Operation], path: str, opt_level: int = 2,
                  header: str | None = None,
                  graphs: dict[str, Operation] | None = None) -> tuple[str, str, str]:
    """Link `path` (a shared library of every model's functions, `<model>_<fn>` symbols),
    write the C header (`header`, default next to it with `.h`) and the sidecar metadata
    `path + ".json"` (the lowered IR, and the graph IR of `graphs` for output shapes the
    symbolic pass cannot derive). Returns the three paths."""
    import re
    from irkit.backends.llvm_cpu import emit_object, link_shared
    from irkit.printer import print_op
    import tempfile
    path = os.fspath(path)
    if header is None:
        header = os.path.splitext(path)[0] + ".h"
    guard = re.sub(r"\W", "_", os.path.basename(header)).upper()
    with open(header, "w", encoding="utf-8") as f:
        f.write(c_header(lowered, guard=f"IRKIT_{guard}"))
    objects = [emit_object(flat_module(lowered), opt_level=opt_level)]
    with tempfile.TemporaryDirectory(prefix="irkit-library-") as tmp:
        objects.append(compile_c(c_source(lowered, os.path.abspath(header)), tmp))
    link_shared(objects, path)
    meta = {"format": "irkit-library-1",
            "models": {m: {"ir": print_op(renamed(m, mod)),
                           **({"graph_ir": print_op(graphs[m])} if graphs and m in graphs
                              else {})}
                       for m, mod in lowered.items()}}
    with open(path + ".json", "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return path, header, path + ".json"


def load_library(path: str, model: str | None = None):
    """The `Model` (engine "shared") of one model of a library written by `write_library`."""
    from irkit.backends.llvm_cpu import load_shared
    from irkit.model import Model
    from irkit.parser import parse_module
    meta_path = os.fspath(path) + ".json"
    try:
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
    except OSError as e:
        raise ValueError(f"cannot read the metadata of '{path}' ({meta_path}): "
                         f"{e.strerror}") from None
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
    jm = load_shared(os.path.abspath(os.fspath(path)), lowered)
    prefix = f"{model}_"
    runner = CompiledRunner(lowered, {n[len(prefix):]: f for n, f in jm.functions.items()},
                            jm, prefix=prefix, graph=graph)
    return Model.from_runner(model, runner, "shared")
