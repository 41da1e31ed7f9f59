"""Shared libraries of compiled models: one `.so` of every model's functions (symbols
`<model>_<function>`), a C header, checked entry points, and the metadata `irkit.load` reads.

    write_library(lowered, "model.so")           # model.so + model.h + model.so.json
    model = load_library("model.so", model="mlp")

The header declares a memref descriptor struct per element type and rank, each function's
plain entry point and a `_checked` one (C code compiled with the system compiler and linked
in) that validates every buffer's rank, sizes, symbolic-dimension agreement and contiguity,
and returns nonzero with a message for `irkit_last_error()`.

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
from irkit.runtime import CompiledRunner, Entry, variable_specs

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


_C_TYPES = {"f32": "float", "f64": "double", "f16": "uint16_t", "i1": "uint8_t",
            "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
            "index": "int64_t"}


def _desc_name(t) -> str:
    return f"irkit_memref_{t.element}_{len(t.shape)}d"


def _c_type(t) -> str:
    from irkit.types import MemRefType
    if isinstance(t, MemRefType):
        return _desc_name(t) + " *"
    return _C_TYPES.get(str(t), "void *") + " "


def c_header(lowered: dict[str, Operation], guard: str = "IRKIT_MODEL_H") -> str:
    """The C header of a library written by `write_library`: descriptor typedefs, then per
    model and function a comment block (inputs, outputs, variables) and the prototype."""
    from irkit.types import MemRefType
    descs: dict[str, tuple] = {}
    body = []
    for model, mod in lowered.items():
        body.append(f"/* ---- model {model} " + "-" * max(0, 72 - len(model)) + " */")
        body.append("/* Variables (the caller owns their storage across calls; initial values "
                    "are in the\n * sidecar JSON's IR, attribute graph.variables):")
        for name, shape, dtype, _ in variable_specs(mod):
            body.append(f" *   {name}: {dtype.name}{list(shape)}")
        body.append(" */")
        for fn in mod.regions[0].blocks[0].ops:
            if fn.name != "func.func" or not fn.regions[0].blocks:
                continue
            e = Entry(fn)
            ftype = fn.properties["function_type"].value
            attrs = fn.properties.get("arg_attrs")
            lines = [f"/* {model}_{e.name}: call with, in this order:"]
            params = []
            for i, t in enumerate(ftype.inputs):
                if isinstance(t, MemRefType):
                    descs[_desc_name(t)] = (t.element, len(t.shape))
                d = attrs[i].value if attrs is not None else {}
                pname = (d["graph.name"].value if "graph.name" in d else
                         d["graph.variable"].value if "graph.variable" in d else f"arg{i}")
                dims = ([a.value for a in d["graph.dims"]] if "graph.dims" in d else
                        ["?" if s is None else s for s in t.shape])
                dims_s = "[" + ", ".join(map(str, dims)) + "]"
                if "graph.output" in d:
                    role = f"output {d['graph.output'].value}"
                    if "graph.dims" not in d and any(s is None for s in t.shape):
                        dims_s += " (shape not derived: see the function's IR)"
                elif "graph.variable" in d:
                    role = "variable"
                else:
                    role = "input"
                lines.append(f" *   {role:<9} {pname}: {t.element}{dims_s}")
                params.append(f"{_c_type(t)}{_c_ident(pname)}")
            lines.append(" * Outputs are allocated by the caller with the shapes above and are "
                         "written\n * completely; variables are read and updated in place. */")
            body.extend(lines)
            body.append(f"void {model}_{e.name}({', '.join(params) or 'void'});")
            body.append("/* The same call, checked first: null descriptors, every static size, "
                        "symbolic sizes\n * consistent across the arguments, row-major "
                        "strides. Returns 0, or nonzero without\n * running with the reason "
                        "in irkit_last_error(). */")
            body.append(f"int {model}_{e.name}_checked({', '.join(params) or 'void'});")
            body.append("")
    out = ["/* Generated by irkit-compile: the C interface of the models in this library. */",
           f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "",
           "/* Shapes are NOT checked by the plain entry points (`model_fn`): the caller",
           " * guarantees that every buffer has the static and symbolic sizes (N, ...) declared",
           " * below, is contiguous row-major (strides in elements), and that buffers do not",
           " * overlap. The `model_fn_checked` entry points check sizes and strides (not",
           " * overlap) and return nonzero with a message readable by irkit_last_error().",
           " * Element (i0, ..., iR-1) is at aligned[offset + sum(ik * strides[k])]. */",
           "", "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    for name, (elem, rank) in sorted(descs.items()):
        ct = _C_TYPES.get(str(elem), "void")
        arrays = f" int64_t sizes[{rank}]; int64_t strides[{rank}];" if rank else ""
        out.append(f"typedef struct {{ {ct} *allocated; {ct} *aligned; int64_t offset;"
                   f"{arrays} }} {name};")
    out += ["", "/* Why the last failed `_checked` call (on this thread) returned nonzero. */",
            "const char *irkit_last_error(void);", ""]
    out.extend(body)
    out += ["#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""]
    return "\n".join(out)


def c_checks_source(lowered: dict[str, Operation], header: str) -> str:
    """C source of the `<model>_<fn>_checked` wrappers and `irkit_last_error`."""
    from irkit.types import MemRefType
    out = ["/* Generated by irkit-compile: checked entry points. */", "#include <stdio.h>",
           "#include <stdint.h>", f'#include "{header}"', "",
           "static _Thread_local char irkit_error[512];",
           "const char *irkit_last_error(void) { return irkit_error; }", "",
           "#define IRKIT_FAIL(...) do { snprintf(irkit_error, sizeof irkit_error, "
           "__VA_ARGS__); return 1; } while (0)", ""]
    for model, mod in lowered.items():
        for fn in mod.regions[0].blocks[0].ops:
            if fn.name != "func.func" or not fn.regions[0].blocks:
                continue
            name = f"{model}_{fn.properties['sym_name'].value}"
            ftype = fn.properties["function_type"].value
            attrs = fn.properties.get("arg_attrs")
            params, names, checks, symbols = [], [], [], {}
            for i, t in enumerate(ftype.inputs):
                d = attrs[i].value if attrs is not None else {}
                pname = _c_ident(d["graph.name"].value if "graph.name" in d else
                                 d["graph.variable"].value if "graph.variable" in d else
                                 f"arg{i}")
                params.append(f"{_c_type(t)}{pname}")
                names.append(pname)
                if not isinstance(t, MemRefType):
                    continue
                checks.append(f'  if (!{pname} || !{pname}->aligned) IRKIT_FAIL("{name}: '
                              f'argument \'{pname}\' is a null buffer");')
                dims = [a.value for a in d["graph.dims"]] if "graph.dims" in d else None
                rank = len(t.shape)
                for k, s in enumerate(t.shape):
                    sym = dims[k] if dims is not None else None
                    if s is not None:
                        checks.append(
                            f"  if ({pname}->sizes[{k}] != {s}) IRKIT_FAIL(\"{name}: argument "
                            f"'{pname}' axis {k} is %lld, expected {s}\", "
                            f"(long long){pname}->sizes[{k}]);")
                    elif isinstance(sym, str) and sym != "?":
                        if sym in symbols:
                            first, fk = symbols[sym]
                            checks.append(
                                f"  if ({pname}->sizes[{k}] != {first}->sizes[{fk}]) "
                                f"IRKIT_FAIL(\"{name}: dimension {sym} is %lld in '{first}' "
                                f"but %lld in '{pname}' (axis {k})\", (long long){first}->"
                                f"sizes[{fk}], (long long){pname}->sizes[{k}]);")
                        else:
                            symbols[sym] = (pname, k)
                    if s is None:
                        checks.append(f"  if ({pname}->sizes[{k}] < 0) IRKIT_FAIL(\"{name}: "
                                      f"argument '{pname}' has a negative size\");")
                stride = "1"
                for k in reversed(range(rank)):
                    checks.append(f"  if ({pname}->sizes[{k}] > 1 && {pname}->strides[{k}] != "
                                  f"{stride}) IRKIT_FAIL(\"{name}: argument '{pname}' is not "
                                  f"contiguous row-major (axis {k})\");")
                    stride = f"{stride} * {pname}->sizes[{k}]"
            out.append(f"int {name}_checked({', '.join(params) or 'void'}) {{")
            out.extend(checks)
            out.append(f"  {name}({', '.join(names)});")
            out.append('  irkit_error[0] = 0;')
            out.append("  return 0;")
            out.append("}")
            out.append("")
    return "\n".join(out)


def _compile_c(source: str, obj_dir: str) -> bytes:
    import subprocess
    from irkit.backends.llvm_cpu import BackendError, find_c_compiler
    cc = find_c_compiler()
    if cc is None:
        raise BackendError("no C compiler (cc, gcc or clang) found to build the checked "
                           "entry points")
    src = os.path.join(obj_dir, "irkit_checks.c")
    obj = os.path.join(obj_dir, "irkit_checks.o")
    with open(src, "w", encoding="utf-8") as f:
        f.write(source)
    cmd = [cc, "-std=c11", "-O2", "-fPIC", "-c", "-o", obj, src]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BackendError(f"compiling the checked entry points failed ({' '.join(cmd)}):\n"
                           f"{proc.stderr.strip()}")
    with open(obj, "rb") as f:
        return f.read()


def _c_ident(name: str) -> str:
    import re
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


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
    with tempfile.TemporaryDirectory(prefix="irkit-checks-") as tmp:
        objects.append(_compile_c(c_checks_source(lowered, os.path.abspath(header)), tmp))
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
