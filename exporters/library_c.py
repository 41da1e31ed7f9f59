"""The C side of a model library (`irkit.exporters.library`): its header, and the C source
compiled with the system compiler and linked into the `.so` next to the LLVM backend's object.

Per model `M` and function `F` the header declares `M_F` (the backend's entry point: the
caller passes every variable's buffer), `M_F_checked` (the same after checking every
descriptor) and `M_F_run` (the checked call over the library's own variables: the caller
passes inputs and outputs only), and per model the variable API: `M_init_variables`,
`M_variable_count`, `M_variable_name`, `M_get_variable`, `M_set_variable`. Per library,
`irkit_last_error()` and `irkit_fingerprint()` (the build's fingerprint, also the header's
`<GUARD>_FINGERPRINT` macro and the `.json`'s, so that a program can tell they match),
`irkit_init(threads)`, the call a program makes first (it refuses a CPU without the
instruction set extensions the library was compiled for, with a message, rather than let it
die of an illegal instruction: CPUID, checked against the features the library records), and
`irkit_set_threads(n)` (the OpenMP thread count of the parallel loops; 0: the runtime's own).
A function with run-time checks (`memory.check`) takes a status descriptor last in `M_F`;
`M_F_checked` and `M_F_run` pass a zeroed one of their own and, when the call leaves a code
in it, fail with that check's message, from a table of the function's sites (`_sites`).

The library owns one static buffer per variable. Its initial value is computed here, at
compile time, by `irkit.dialects.graph.variable_specs`, the code dev mode and `irkit.load` use, and
baked into the source as the array's bits (unsigned words of the element's size, host byte
order): a C program then starts from exactly the numbers a Python session would, random
initializers included, with no file written by Python. All-zero variables get no data,
only zeroed storage.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from irkit.ir import Operation
from irkit.dialects.graph import variable_specs

_C_TYPES = {"f32": "float", "f64": "double", "f16": "uint16_t", "i1": "uint8_t",
            "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
            "index": "int64_t"}

#: the per-model functions of the variable API, after `<model>_`
_VARIABLE_API = ("init_variables", "variable_count", "variable_name", "get_variable",
                 "set_variable")


#: C11 keywords and the names the generated code declares itself: a parameter must be none
_C_RESERVED = frozenset("""auto break case char const continue default do double else enum
    extern float for goto if inline int long register restrict return short signed sizeof
    static struct switch typedef union unsigned void volatile while _Alignas _Alignof _Atomic
    _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local""".split())


def _c_ident(name: str) -> str:
    """A C identifier for a model name: ASCII word characters only (`\\w` alone would keep
    'é'), not starting with a digit, not a keyword, and clear of the `irkit_` prefix that the
    generated code's own locals use."""
    import re
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    s = s if s and not s[0].isdigit() else "_" + s
    return s + "_" if s in _C_RESERVED or s.startswith("irkit_") else s


def _unique_c_names(args: list["_Arg"]) -> None:
    """Give every parameter of one function its own C name: a model may return an input
    (`output y, x`) or name an input like a variable, and C rejects a repeated parameter.
    The first keeps its name; a later one gets its role (`x_output`), then a number."""
    used: set[str] = set()
    for a in args:
        name = a.c_name
        if name in used:
            base = f"{name}_{a.role.split()[0]}"
            name, k = base, 2
            while name in used:
                name, k = f"{base}{k}", k + 1
        a.c_name = name
        used.add(name)


def _desc_name(t) -> str:
    return f"irkit_memref_{t.element}_{len(t.shape)}d"


def _c_type(t) -> str:
    from irkit.types import MemRefType
    if isinstance(t, MemRefType):
        return _desc_name(t) + " *"
    return _C_TYPES.get(str(t), "void *") + " "


@dataclass
class _Arg:
    """One argument of a lowered function, as its attributes describe it."""
    name: str          # the DSL's name of the input, output or variable
    type: object       # the lowered type (a memref, or a scalar)
    role: str          # "input", "output K" or "variable"
    attrs: dict        # the argument's attribute dictionary
    c_name: str = ""   # its C parameter name (`_unique_c_names`)

    def __post_init__(self) -> None:
        self.c_name = self.c_name or _c_ident(self.name)

    @property
    def param(self) -> str:
        return f"{_c_type(self.type)}{self.c_name}"


def _output_sizes(mod: Operation) -> dict[str, list[tuple[int, int]]]:
    """function name -> the (output k, axis a) pairs its sizes function (`<fn>_output_sizes`,
    passes/bufferization/output_sizes.py) writes, in order."""
    from irkit.passes.bufferization.output_sizes import AXES_ATTR, OF_ATTR
    out = {}
    for fn in mod.regions[0].blocks[0].ops:
        if fn.name == "func.func" and OF_ATTR in fn.attributes:
            last = fn.properties["arg_attrs"][-1].value[AXES_ATTR]
            out[fn.attributes[OF_ATTR].value] = [(p[0].value, p[1].value) for p in last]
    return out


def _functions(mod: Operation) -> list[tuple[str, list[_Arg]]]:
    """(name, arguments) of every function of a lowered model that has a body (a sizes
    function is not one: it goes with the function it serves, see `_output_sizes`)."""
    from irkit.passes.bufferization.output_sizes import OF_ATTR
    out = []
    for fn in mod.regions[0].blocks[0].ops:
        if fn.name != "func.func" or not fn.regions[0].blocks or OF_ATTR in fn.attributes:
            continue
        attrs = fn.properties.get("arg_attrs")
        args = []
        for i, t in enumerate(fn.properties["function_type"].value.inputs):
            d = attrs[i].value if attrs is not None else {}
            name = (d["graph.name"].value if "graph.name" in d else
                    d["graph.variable"].value if "graph.variable" in d else
                    "status" if "graph.status" in d else f"arg{i}")
            role = (f"output {d['graph.output'].value}" if "graph.output" in d else
                    "variable" if "graph.variable" in d else
                    "status" if "graph.status" in d else "input")
            args.append(_Arg(name, t, role, d))
        _unique_c_names(args)
        out.append((fn.properties["sym_name"].value, args))
    return out


@dataclass
class _Variable:
    """One variable of a model: what the header documents and the source stores."""
    name: str
    shape: tuple
    dtype: np.dtype
    element: str           # the IR element type (`f32`)
    initializer: str       # `normal(seed=1, std=0.05)`
    value: np.ndarray      # the initial value, exactly as dev mode computes it

    @property
    def nbytes(self) -> int:
        return int(self.value.nbytes)

    @property
    def type_text(self) -> str:
        return f"{self.dtype.name}[{', '.join(map(str, self.shape))}]"


def _variables(mod: Operation) -> list[_Variable]:
    """The model's variables in `graph.variables` order (`variable_specs`' order)."""
    attr = mod.attributes.get("graph.variables")
    entries = attr.value if attr is not None else []
    out = []
    for (name, shape, dtype, value), entry in zip(variable_specs(mod), entries):
        d = entry.value
        args = d["init_args"].value if "init_args" in d else {}
        init = d["initializer"].value
        if args:
            init += "(" + ", ".join(f"{k}={v.value}" for k, v in args.items()) + ")"
        out.append(_Variable(name, shape, dtype, str(d["type"].value.element), init,
                             np.ascontiguousarray(value)))
    return out


def _check_symbols(lowered: dict[str, Operation]) -> None:
    """Refuse a library whose exported C names would clash (`forward_run` next to the `_run`
    of `forward`, a function called `init_variables`) with a message that names both, rather
    than the C compiler's or linker's duplicate-definition error."""
    from irkit.backends.llvm_cpu import BackendError
    seen: dict[str, str] = {}
    for model, mod in lowered.items():
        names = [(f"{model}_{api}", "the variable API") for api in _VARIABLE_API]
        for fname, _ in _functions(mod):
            names += [(f"{model}_{fname}{s}", f"function @{fname} of model {model}")
                      for s in ("", "_checked", "_run", "_output_sizes")]
        for sym, what in names:
            if sym in seen:
                raise BackendError(f"the C symbol {sym} would be both {seen[sym]} and "
                                   f"{what}")
            seen[sym] = what


# ---------------------------------------------------------------------------------------------
# The header
# ---------------------------------------------------------------------------------------------

_HEADER_INTRO = """\
/* Shapes are NOT checked by the plain entry points (`model_fn`): the caller
 * guarantees that every buffer has the static and symbolic sizes (N, ...) declared
 * below, is contiguous row-major (strides in elements), and that buffers do not
 * overlap. The `model_fn_checked` entry points check sizes and strides (not
 * overlap) and return nonzero with a message readable by irkit_last_error().
 * Element (i0, ..., iR-1) is at aligned[offset + sum(ik * strides[k])].
 *
 * Variables (parameters, optimizer state) have two homes. The plain and `_checked`
 * entry points take each as an argument: the caller owns that storage. The library
 * also holds one copy of every variable, initialized from the model's initializers
 * (the same numbers as irkit's dev mode, computed when the library was compiled);
 * the `model_fn_run` entry points use that copy, so a caller passes inputs and
 * outputs only, and `model_get_variable`/`model_set_variable` copy it out and in.
 * The library's copy is per process and NOT thread-safe: do not call the `_run`,
 * init, get or set functions of one model from two threads at once. */"""

_VARIABLE_API_DOC = """\
/* The library's variables of model {m}. The first call of one of these functions or of a
 * {m}_*_run entry point sets every variable to its initial value, then does its work (so
 * a set before anything else keeps what it set); {m}_init_variables() resets them all to
 * the initial values (returns 0). Names are the model's (`w1`, `adam.step`, `w1.adam_m`);
 * {m}_variable_name(i) is NULL outside 0 <= i < {m}_variable_count(). Get and set copy
 * the variable's bytes (row-major, host byte order) and return 0, or nonzero with the
 * reason in irkit_last_error() for an unknown name, a null buffer or an nbytes that is not
 * the variable's size. */
int {m}_init_variables(void);
int64_t {m}_variable_count(void);
const char *{m}_variable_name(int64_t i);
int {m}_get_variable(const char *name, void *dst, int64_t nbytes);
int {m}_set_variable(const char *name, const void *src, int64_t nbytes);
"""


def _sizes_doc(model: str, fname: str, args: list[_Arg], pairs: list[tuple[int, int]],
               descs: dict) -> list[str]:
    """The header's comment block and prototype of a function's sizes function."""
    descs["irkit_memref_i64_1d"] = ("i64", 1)
    outs = {int(a.role.split()[1]): a for a in args if a.role.startswith("output")}
    inputs = [a for a in args if a.role == "input"]
    lines = [f"/* {model}_{fname}_output_sizes: the sizes that {model}_{fname}'s outputs "
             "must have on", " * the axes below, for inputs of these sizes (only their "
             "sizes are read): allocate", f" * the outputs with them. sizes has {len(pairs)} "
             "elements; sizes[j] is"]
    lines += [f" *   j = {j}: output {k} {outs[k].name}, axis {a}" for j, (k, a) in
              enumerate(pairs)]
    lines.append(" * The _checked and _run entry points call it and compare. */")
    params = ", ".join([a.param for a in inputs] + ["irkit_memref_i64_1d *sizes"])
    return lines + [f"void {model}_{fname}_output_sizes({params});", ""]


def _function_doc(model: str, fname: str, args: list[_Arg], descs: dict,
                  sizes: list[tuple[int, int]] | None = None) -> list[str]:
    """The header's comment block and three prototypes of one function (and its sizes
    function's, when it has one)."""
    from irkit.types import MemRefType
    sized = {(int(a.role.split()[1]), k) for a in args if a.role.startswith("output")
             for k in range(len(a.type.shape))} & set(sizes or ())
    lines = [f"/* {model}_{fname}: call with, in this order:"]
    for a in args:
        t = a.type
        if isinstance(t, MemRefType):
            descs[_desc_name(t)] = (t.element, len(t.shape))
        d = a.attrs
        dims = ([x.value for x in d["graph.dims"]] if "graph.dims" in d else
                ["?" if s is None else s for s in t.shape])
        dims_s = "[" + ", ".join(map(str, dims)) + "]"
        if a.role.startswith("output") and None in t.shape:
            k = int(a.role.split()[1])
            free = [x for x, dim in enumerate(dims) if not isinstance(dim, (int, str))
                    or dim == "?"]
            if free and all((k, x) in sized for x in free):
                dims_s += f" (the ? sizes: {model}_{fname}_output_sizes)"
            elif free:
                dims_s += (" (shape not derived, it depends on the data: only the plain "
                           "entry point runs it)")
        shown = a.name if a.c_name == a.name else f"{a.name} (parameter {a.c_name})"
        lines.append(f" *   {a.role:<9} {shown}: {t.element}{dims_s}")
    lines.append(" * Outputs are allocated by the caller with the shapes above and are "
                 "written\n * completely; variables are read and updated in place. */")
    if any(a.role == "status" for a in args):
        lines.append(_STATUS_DOC)
    params = ", ".join(a.param for a in args) or "void"
    checked_params = ", ".join(a.param for a in args if a.role != "status") or "void"
    run_params = ", ".join(a.param for a in args
                           if a.role not in ("variable", "status")) or "void"
    variables = ", ".join(a.name for a in args if a.role == "variable") or "none"
    lines += [f"void {model}_{fname}({params});",
              "/* The same call, checked first: null descriptors, every static size, "
              "symbolic sizes\n * consistent across the arguments, row-major strides. "
              "Returns 0, or nonzero without\n * running with the reason in "
              "irkit_last_error(); also nonzero (after the call) for a\n * run-time error, "
              "the message naming the model line. No status argument: it\n * passes its "
              "own. */",
              f"int {model}_{fname}_checked({checked_params});",
              f"/* {model}_{fname}_checked on the library's variables ({variables}): pass "
              "the inputs\n * and outputs only, in the order above (no status). */",
              f"int {model}_{fname}_run({run_params});", ""]
    if sizes:
        lines += _sizes_doc(model, fname, args, sizes, descs)
    return lines


#: the header's note on a function's status argument (`memory.check`, docs/lowering.md)
_STATUS_DOC = """\
/* The last argument, status (three int64_t), reports run-time errors of the plain
 * entry point, which cannot return one: zero it before the call; status[0] != 0 after
 * it means that the check with that code failed (an index out of range, a size that
 * does not divide, as in the model's dev mode), status[1] holding the offending value
 * and status[2] the bound; the outputs are then unspecified. The `_checked` and `_run`
 * entry points pass their own and return nonzero with the message (the model line,
 * the value and the bound) in irkit_last_error(). */"""


def c_header(lowered: dict[str, Operation], guard: str = "IRKIT_MODEL_H",
             fingerprint: str = "") -> str:
    """The C header of a library written by `write_library`: descriptor typedefs, the
    library's fingerprint, then per model its variables and their API, and per function a
    comment block (inputs, outputs, variables) and the three prototypes."""
    _check_symbols(lowered)
    descs: dict[str, tuple] = {}
    body = []
    for model, mod in lowered.items():
        body.append(f"/* ---- model {model} " + "-" * max(0, 72 - len(model)) + " */")
        variables = _variables(mod)
        body.append("/* Variables, with their initializers:" + ("" if variables else " none"))
        for v in variables:
            body.append(f" *   {v.name}: {v.type_text} ({v.nbytes} bytes), {v.initializer}")
        body.append(" */")
        body.append(_VARIABLE_API_DOC.format(m=model))
        sizes = _output_sizes(mod)
        for fname, args in _functions(mod):
            body.extend(_function_doc(model, fname, args, descs, sizes.get(fname)))
    out = ["/* Generated by irkit-compile: the C interface of the models in this library. */",
           f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "",
           _HEADER_INTRO, "", "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    for name, (elem, rank) in sorted(descs.items()):
        ct = _C_TYPES.get(str(elem), "void")
        arrays = f" int64_t sizes[{rank}]; int64_t strides[{rank}];" if rank else ""
        out.append(f"typedef struct {{ {ct} *allocated; {ct} *aligned; int64_t offset;"
                   f"{arrays} }} {name};")
    out += ["", "/* Why the last failed call of this library (on this thread) returned "
            "nonzero. */", "const char *irkit_last_error(void);", "", _RUNTIME_DOC,
            *_fingerprint_doc(guard, fingerprint)]
    out.extend(body)
    out += ["#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""]
    return "\n".join(out)


def _fingerprint_doc(guard: str, fingerprint: str) -> list[str]:
    """The header's fingerprint macro and `irkit_fingerprint()` prototype (`write_library`'s
    `library_metadata` computes the hash; `fingerprint` is hex digits only)."""
    return [f"/* This build's fingerprint: a hash of the models' lowered IR, the irkit version "
            "and the CPU\n * target (triple, CPU, features) the library was built for; the "
            "same as in the\n * library's .json. irkit_fingerprint() returns the library's own: "
            "a program can\n * check that the library it loaded is the one this header "
            f"describes with\n * strcmp(irkit_fingerprint(), {guard}_FINGERPRINT) == 0. */",
            f'#define {guard}_FINGERPRINT "{fingerprint}"',
            "const char *irkit_fingerprint(void);", ""]


# ---------------------------------------------------------------------------------------------
# The C source: checked entry points, variable storage and API, `_run` entry points
# ---------------------------------------------------------------------------------------------

#: the model-independent part: the error buffer and the variable tables' operations
_SOURCE_PRELUDE = r"""/* Generated by irkit-compile: checked entry points and variables. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include "{header}"

static _Thread_local char irkit_error[512];
const char *irkit_last_error(void) {{ return irkit_error; }}

#define IRKIT_FAIL(...) do {{ snprintf(irkit_error, sizeof irkit_error, __VA_ARGS__); \
  return 1; }} while (0)

/* One variable in the library: its storage, and its initial bits (NULL: all zero). */
typedef struct {{
  const char *name, *type;
  void *data;
  const void *init;
  int64_t nbytes;
}} irkit_variable;

/* One model's variables; `ready` once they hold a value (initial or set). */
typedef struct {{
  const char *model;
  irkit_variable *vars;
  int64_t count;
  int ready;
}} irkit_variables;

static int irkit_init_variables(irkit_variables *m) {{
  for (int64_t i = 0; i < m->count; i++) {{
    irkit_variable *v = &m->vars[i];
    if (v->init) memcpy(v->data, v->init, (size_t)v->nbytes);
    else memset(v->data, 0, (size_t)v->nbytes);
  }}
  m->ready = 1;
  irkit_error[0] = 0;
  return 0;
}}

/* Initialize on first use, so that a fresh process (or a set before any init) starts from
   the initial values rather than zeros. */
static void irkit_ready(irkit_variables *m) {{
  if (!m->ready) irkit_init_variables(m);
}}

static const char *irkit_name(const irkit_variables *m, int64_t i) {{
  return i >= 0 && i < m->count ? m->vars[i].name : NULL;
}}

/* Copy variable `name` of `m` out to `buf` (out != 0) or in from it, after checking the name
   and the size; `fn` names the caller in the message. */
static int irkit_copy(irkit_variables *m, const char *fn, const char *name, void *buf,
                      int64_t nbytes, int out) {{
  if (!name) IRKIT_FAIL("%s: null variable name", fn);
  for (int64_t i = 0; i < m->count; i++) {{
    irkit_variable *v = &m->vars[i];
    if (strcmp(v->name, name) != 0) continue;
    if (nbytes != v->nbytes)
      IRKIT_FAIL("%s: variable '%s' is %s, %lld bytes; got %lld bytes", fn, name, v->type,
                 (long long)v->nbytes, (long long)nbytes);
    if (!buf && nbytes) IRKIT_FAIL("%s: null buffer for variable '%s'", fn, name);
    irkit_ready(m);
    if (nbytes) {{
      if (out) memcpy(buf, v->data, (size_t)nbytes);
      else memcpy(v->data, buf, (size_t)nbytes);
    }}
    irkit_error[0] = 0;
    return 0;
  }}
  IRKIT_FAIL("%s: model %s has no variable '%s'", fn, m->model, name);
}}
"""

#: the variable API of one model, over its table `irkit_vars_{m}`
_MODEL_API = """\
int {m}_init_variables(void) {{ return irkit_init_variables(&irkit_vars_{m}); }}
int64_t {m}_variable_count(void) {{ return irkit_vars_{m}.count; }}
const char *{m}_variable_name(int64_t i) {{ return irkit_name(&irkit_vars_{m}, i); }}
int {m}_get_variable(const char *name, void *dst, int64_t nbytes) {{
  return irkit_copy(&irkit_vars_{m}, "{m}_get_variable", name, dst, nbytes, 1);
}}
int {m}_set_variable(const char *name, const void *src, int64_t nbytes) {{
  return irkit_copy(&irkit_vars_{m}, "{m}_set_variable", name, (void *)src, nbytes, 0);
}}
"""


def _c_words(value: np.ndarray) -> tuple[str, list[str]]:
    """(C type, initializer lines) of an array's bits as unsigned words of its item size:
    exact for every value (NaN payloads, -0.0, f16) and about as fast to print and to parse
    as C data gets, with a handful of words per line to keep the source readable."""
    k = value.dtype.itemsize if value.dtype.itemsize in (1, 2, 4, 8) else 1
    words = value.reshape(-1).view(f"u{k}").tolist()
    per_line = {1: 16, 2: 12, 4: 8, 8: 4}[k]
    fmt = f"0x{{:0{2 * k}x}}".format
    return f"uint{8 * k}_t", ["  " + ", ".join(map(fmt, words[i:i + per_line])) + ","
                              for i in range(0, len(words), per_line)]


def _variable_storage(model: str, variables: list[_Variable]) -> list[str]:
    """Each variable's static storage and initial bits, and the model's table of them."""
    out, rows = [], []
    for i, v in enumerate(variables):
        ctype = _C_TYPES.get(v.element)
        count = max(1, v.value.size if ctype else v.nbytes)
        store = f"irkit_v_{model}_{i}"
        out.append(f"/* {v.name}: {v.type_text}, {v.initializer} */")
        out.append(f"static _Alignas(64) {ctype or 'unsigned char'} {store}[{count}];")
        init = "NULL"
        if v.value.reshape(-1).view(np.uint8).any():
            wtype, lines = _c_words(v.value)
            init = f"irkit_i_{model}_{i}"
            out += [f"static const {wtype} {init}[] = {{", *lines, "};"]
        rows.append(f'  {{"{v.name}", "{v.type_text}", {store}, {init}, {v.nbytes}}},')
    out.append(f"static irkit_variable irkit_table_{model}[] = {{")
    out += rows
    out += ["  {NULL, NULL, NULL, NULL, 0}", "};",
            f'static irkit_variables irkit_vars_{model} = {{"{model}", irkit_table_{model}, '
            f"{len(variables)}, 0}};", ""]
    return out


def _checks(name: str, args: list[_Arg],
            sizes: list[tuple[int, int]] | None = None) -> list[str]:
    """The C statements of `<name>_checked` that validate every descriptor argument: null
    buffers, static sizes, symbols that must agree, contiguity; then the outputs' `?`
    sizes that no symbol names against what the sizes function computes (`sizes`: its
    (output, axis) pairs), and a refusal where neither gives one (a size that depends on
    the data): nothing could tell a buffer too small, which the call would write past."""
    from irkit.types import MemRefType
    checks, symbols = [], {}
    sizes = sizes or []
    for a in args:
        p, t = a.c_name, a.type
        if not isinstance(t, MemRefType):
            continue
        checks.append(f'  if (!{p} || !{p}->aligned) IRKIT_FAIL("{name}: '
                      f'argument \'{p}\' is a null buffer");')
        dims = [x.value for x in a.attrs["graph.dims"]] if "graph.dims" in a.attrs else None
        for k, s in enumerate(t.shape):
            sym = dims[k] if dims is not None else None
            if s is not None:
                checks.append(f"  if ({p}->sizes[{k}] != {s}) IRKIT_FAIL(\"{name}: argument "
                              f"'{p}' axis {k} is %lld, expected {s}\", "
                              f"(long long){p}->sizes[{k}]);")
            elif isinstance(sym, str) and sym != "?":
                if sym in symbols:
                    first, fk = symbols[sym]
                    checks.append(f"  if ({p}->sizes[{k}] != {first}->sizes[{fk}]) "
                                  f"IRKIT_FAIL(\"{name}: dimension {sym} is %lld in '{first}' "
                                  f"but %lld in '{p}' (axis {k})\", (long long){first}->"
                                  f"sizes[{fk}], (long long){p}->sizes[{k}]);")
                else:
                    symbols[sym] = (p, k)
            if s is None:
                checks.append(f"  if ({p}->sizes[{k}] < 0) IRKIT_FAIL(\"{name}: "
                              f"argument '{p}' has a negative size\");")
        stride = "1"
        for k in reversed(range(len(t.shape))):
            checks.append(f"  if ({p}->sizes[{k}] > 1 && {p}->strides[{k}] != {stride}) "
                          f"IRKIT_FAIL(\"{name}: argument '{p}' is not contiguous row-major "
                          f"(axis {k})\");")
            stride = f"{stride} * {p}->sizes[{k}]"
    return checks + _output_size_checks(name, args, sizes)


def _output_size_checks(name: str, args: list[_Arg], sizes: list[tuple[int, int]]) -> list[str]:
    """See `_checks`: the sizes function's call and comparisons, and the refusals."""
    outs = {int(a.role.split()[1]): a for a in args if a.role.startswith("output")}
    lines = []
    if sizes:
        inputs = ", ".join([a.c_name for a in args if a.role == "input"] + ["&irkit_os_d"])
        lines += [f"  int64_t irkit_os[{len(sizes)}];",
                  f"  irkit_memref_i64_1d irkit_os_d = {{irkit_os, irkit_os, 0, "
                  f"{{{len(sizes)}}}, {{1}}}};",
                  f"  {name}_output_sizes({inputs});"]
    for j, (k, axis) in enumerate(sizes):
        p = outs[k].c_name
        lines.append(f"  if ({p}->sizes[{axis}] != irkit_os[{j}]) IRKIT_FAIL(\"{name}: "
                     f"output '{p}' axis {axis} is %lld, the inputs give %lld\", "
                     f"(long long){p}->sizes[{axis}], (long long)irkit_os[{j}]);")
    for k, a in outs.items():
        dims = [x.value for x in a.attrs["graph.dims"]] if "graph.dims" in a.attrs else None
        for axis, d in enumerate(a.type.shape):
            named = dims is not None and isinstance(dims[axis], str) and dims[axis] != "?"
            if d is None and not named and (k, axis) not in sizes:
                lines.append(f"  IRKIT_FAIL(\"{name}: the size of output '{a.name}' (axis "
                             f"{axis}) depends on the data, so this entry point cannot check "
                             f"its buffer; call {name} with one of the size the model "
                             f"gives\");")
    return lines


#: how `_checked` reports a run-time error (`memory.check`): from a table of the sites
_REPORT_SOURCE = r"""/* One `memory.check` of a function: its code, and its message as a
   printf format with two %lld, for (value, bound), or (bound, value) when `swapped`. */
typedef struct {
  int64_t code;
  const char *format;
  int swapped;
} irkit_site;

/* The run-time error a call of `fn` left in `status` (status[0]: the failing site's code):
   its message, with the value and the bound, in irkit_last_error(); returns 1. */
static int irkit_report(const char *fn, const irkit_site *sites, int64_t count,
                        const int64_t *status) {
  char message[sizeof irkit_error];
  for (int64_t i = 0; i < count; i++) {
    const irkit_site *s = &sites[i];
    if (s->code != status[0]) continue;
    long long a = s->swapped ? status[2] : status[1], b = s->swapped ? status[1] : status[2];
    snprintf(message, sizeof message, s->format, a, b);
    IRKIT_FAIL("%s: %s", fn, message);
  }
  IRKIT_FAIL("%s: run-time error with unknown code %lld (value %lld, bound %lld)", fn,
             (long long)status[0], (long long)status[1], (long long)status[2]);
}
"""

#: the call of a plain entry point with a status of its own, then the report of an error
_STATUS_CALL = """\
  int64_t irkit_s[3] = {{0, 0, 0}};
  irkit_memref_i64_1d irkit_status = {{irkit_s, irkit_s, 0, {{3}}, {{1}}}};
  {name}({args});
  if (irkit_s[0])
    return irkit_report("{name}", irkit_sites_{name},
                        sizeof irkit_sites_{name} / sizeof irkit_sites_{name}[0], irkit_s);
"""


def _c_string(text: str) -> str:
    """`text` as a C string literal: UTF-8, anything but printable ASCII as octal escapes
    (and `?`, so that no trigraph forms)."""
    out = []
    for byte in text.encode("utf-8"):
        c = chr(byte)
        if c in '"\\?':
            out.append("\\" + c)
        elif 32 <= byte < 127:
            out.append(c)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _site_format(check) -> tuple[str, int]:
    """(printf format, swapped) of one `memory.check`: its location as the diagnostics
    print it (`file:line:col: error: `), then its message with `%lld` for `{value}` and
    `{bound}`, in the order they appear."""
    import re
    from irkit.diagnostics import resolve_file_line_col
    flc = resolve_file_line_col(check.location)
    where = f"{flc[0]}:{flc[1]}:{flc[2]}" if flc else "<unknown>:0:0"
    parts = re.split(r"\{(value|bound)\}", check.message.value)
    names = parts[1::2]
    text = "%lld".join(p.replace("%", "%%") for p in parts[::2])
    return f"{where.replace('%', '%%')}: error: {text}", int(names[:1] == ["bound"])


def _sites(name: str, mod: Operation, fname: str) -> list[str]:
    """The table of function `fname`'s `memory.check` sites (code, message) for its
    `_checked` entry point's report."""
    from irkit.dialects.memory.access import CheckOp
    fn = next(op for op in mod.regions[0].blocks[0].ops if op.name == "func.func"
              and op.properties["sym_name"].value == fname)
    rows = []
    for check in fn.walk():
        if isinstance(check, CheckOp):
            fmt, swapped = _site_format(check)
            rows.append(f"  {{{check.code.value}, {_c_string(fmt)}, {swapped}}},")
    rows = rows or ['  {0, "", 0},']        # C has no empty arrays; code 0 is never reported
    return [f"static const irkit_site irkit_sites_{name}[] = {{", *rows, "};"]


def _run_wrapper(model: str, name: str, args: list[_Arg],
                 variables: list[_Variable]) -> list[str]:
    """`<name>_run`: descriptors over the library's storage of each variable argument (with
    the variable's shape), then the checked call."""
    index = {v.name: i for i, v in enumerate(variables)}
    params = ", ".join(a.param for a in args
                       if a.role not in ("variable", "status")) or "void"
    out = [f"int {name}_run({params}) {{", f"  irkit_ready(&irkit_vars_{model});"]
    call = []
    for a in args:
        if a.role == "status":
            continue
        if a.role != "variable":
            call.append(a.c_name)
            continue
        i = index[a.name]
        store, shape = f"irkit_v_{model}_{i}", variables[i].shape
        strides = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
        arrays = (f", {{{', '.join(map(str, shape))}}}, {{{', '.join(map(str, strides))}}}"
                  if shape else "")
        out.append(f"  {_desc_name(a.type)} irkit_d{i} = {{{store}, {store}, 0{arrays}}};")
        call.append(f"&irkit_d{i}")
    out += [f"  return {name}_checked({', '.join(call)});", "}", ""]
    return out


def c_source(lowered: dict[str, Operation], header: str, fingerprint: str = "",
             target: dict | None = None) -> str:
    """C source of `irkit_last_error`, `irkit_fingerprint` and the init call for a library
    compiled for `target` (`cpu_target`; default this machine), and per model its variables
    (storage, initial bits, API) and per function `<model>_<fn>_checked` and
    `<model>_<fn>_run`."""
    if target is None:
        from irkit.backends.llvm_cpu import host_target
        target = host_target()
    out = [_SOURCE_PRELUDE.format(header=header), _REPORT_SOURCE, _runtime_source(target),
           f'const char *irkit_fingerprint(void) {{ return "{fingerprint}"; }}', ""]
    for model, mod in lowered.items():
        variables = _variables(mod)
        out += [f"/* ---- model {model} ---- */", *_variable_storage(model, variables),
                _MODEL_API.format(m=model)]
        sizes = _output_sizes(mod)
        for fname, args in _functions(mod):
            name = f"{model}_{fname}"
            given = [a for a in args if a.role != "status"]
            status = len(given) < len(args)
            if status:
                out += _sites(name, mod, fname)
            out.append(f"int {name}_checked({', '.join(a.param for a in given) or 'void'}) {{")
            out.append("  if (irkit_check_cpu()) return IRKIT_ERROR_CPU;")
            out += _checks(name, given, sizes.get(fname))
            if status:
                out += _STATUS_CALL.format(name=name, args=", ".join(
                    "&irkit_status" if a.role == "status" else a.c_name
                    for a in args)).splitlines()
            else:
                out.append(f"  {name}({', '.join(a.c_name for a in args)});")
            out += ["  irkit_error[0] = 0;", "  return 0;", "}", ""]
            out += _run_wrapper(model, name, args, variables)
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# The library's init call: the CPU check and the thread count
# ---------------------------------------------------------------------------------------------

#: the header's declarations of the init call and the thread setting
_RUNTIME_DOC = """\
/* Call once, before any other function of this library: checks that this CPU has every
 * instruction set extension the library was compiled for (irkit-compile --cpu=...; the
 * default, native, is the compiling machine's) and returns IRKIT_ERROR_CPU, naming the
 * missing ones in irkit_last_error(), where it does not: the code would die of an illegal
 * instruction. Then sets the thread count as irkit_set_threads(threads) does. Returns 0
 * when both succeed. The _checked and _run entry points make the same CPU check. */
#define IRKIT_ERROR_CPU 2
int irkit_init(int threads);
/* How many threads the parallel loops of this library use from the next call on: 0 (the
 * default) for the OpenMP runtime's choice, the OMP_NUM_THREADS environment variable or
 * else every core; 1 for the calling thread only; n for at most n (a loop with too little
 * work for them uses fewer). One setting per library and process: change it between
 * calls, not during one. Returns 0, or nonzero for threads < 0. */
int irkit_set_threads(int threads);
"""

#: x86 features (LLVM's names) -> where CPUID reports them: (leaf, subleaf, register 0..3
#: for eax..edx, bit), and the XCR0 bits the OS must set (it saves those registers) for
#: their instructions to run: 0x6 for the 256-bit AVX state, 0xe6 for AVX-512's
_CPUID_FEATURES = {
    "sse3": (1, 0, 2, 0, 0), "pclmul": (1, 0, 2, 1, 0), "ssse3": (1, 0, 2, 9, 0),
    "fma": (1, 0, 2, 12, 0x6), "cx16": (1, 0, 2, 13, 0), "sse4.1": (1, 0, 2, 19, 0),
    "sse4.2": (1, 0, 2, 20, 0), "movbe": (1, 0, 2, 22, 0), "popcnt": (1, 0, 2, 23, 0),
    "aes": (1, 0, 2, 25, 0), "xsave": (1, 0, 2, 26, 0), "avx": (1, 0, 2, 28, 0x6),
    "f16c": (1, 0, 2, 29, 0x6), "rdrnd": (1, 0, 2, 30, 0),
    "cx8": (1, 0, 3, 8, 0), "cmov": (1, 0, 3, 15, 0), "mmx": (1, 0, 3, 23, 0),
    "fxsr": (1, 0, 3, 24, 0), "sse": (1, 0, 3, 25, 0), "sse2": (1, 0, 3, 26, 0),
    "fsgsbase": (7, 0, 1, 0, 0), "bmi": (7, 0, 1, 3, 0), "avx2": (7, 0, 1, 5, 0x6),
    "bmi2": (7, 0, 1, 8, 0), "invpcid": (7, 0, 1, 10, 0), "avx512f": (7, 0, 1, 16, 0xe6),
    "avx512dq": (7, 0, 1, 17, 0xe6), "rdseed": (7, 0, 1, 18, 0), "adx": (7, 0, 1, 19, 0),
    "avx512ifma": (7, 0, 1, 21, 0xe6), "clflushopt": (7, 0, 1, 23, 0),
    "clwb": (7, 0, 1, 24, 0), "avx512cd": (7, 0, 1, 28, 0xe6), "sha": (7, 0, 1, 29, 0),
    "avx512bw": (7, 0, 1, 30, 0xe6), "avx512vl": (7, 0, 1, 31, 0xe6),
    "avx512vbmi": (7, 0, 2, 1, 0xe6), "avx512vbmi2": (7, 0, 2, 6, 0xe6),
    "gfni": (7, 0, 2, 8, 0), "vaes": (7, 0, 2, 9, 0x6), "vpclmulqdq": (7, 0, 2, 10, 0x6),
    "avx512vnni": (7, 0, 2, 11, 0xe6), "avx512bitalg": (7, 0, 2, 12, 0xe6),
    "avx512vpopcntdq": (7, 0, 2, 14, 0xe6), "rdpid": (7, 0, 2, 22, 0),
    "avx512vp2intersect": (7, 0, 3, 8, 0xe6), "avx512fp16": (7, 0, 3, 23, 0xe6),
    "avxvnni": (7, 1, 0, 4, 0x6), "avx512bf16": (7, 1, 0, 5, 0xe6),
    "sahf": (0x80000001, 0, 2, 0, 0), "lzcnt": (0x80000001, 0, 2, 5, 0),
    "sse4a": (0x80000001, 0, 2, 6, 0), "prfchw": (0x80000001, 0, 2, 8, 0),
    "xop": (0x80000001, 0, 2, 11, 0x6), "fma4": (0x80000001, 0, 2, 16, 0x6),
    "tbm": (0x80000001, 0, 2, 21, 0), "clzero": (0x80000008, 0, 1, 0, 0),
    "xsaveopt": (0xd, 1, 0, 0, 0), "xsavec": (0xd, 1, 0, 1, 0), "xsaves": (0xd, 1, 0, 3, 0),
}

#: the init call, the thread setting and the CPU check; `{rows}` is the table of features
#: to check, `{cpu}` the CPU the library was compiled for
_RUNTIME_SOURCE = r"""/* The thread count of the parallel loops, defined by the compiled code when it has
   any (`llvm_parallel`): weak, so that it is a null address when it does not. */
extern int irkit_num_threads __attribute__((weak, visibility("hidden")));
/* The power of two scaling the work a team of threads needs (`llvm_parallel`): larger where
   libgomp's threads sleep between regions, whose forks cost more. */
extern long long irkit_team_work_shift __attribute__((weak, visibility("hidden")));

/* Whether libgomp's threads sleep between regions, by the variables it read when it loaded:
   OMP_WAIT_POLICY=passive, or GOMP_SPINCOUNT 0 (llvm_cpu.threads_sleep, the same rule). */
static int irkit_threads_sleep(void) {{
  const char *policy = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
  if (policy) {{
    const char *want = "passive";
    while (isspace((unsigned char)*policy)) policy++;
    while (*want && tolower((unsigned char)*policy) == *want) policy++, want++;
    while (isspace((unsigned char)*policy)) policy++;
    if (!*want && !*policy) return 1;
  }}
  if (!spin) return 0;
  char *end;
  long long rounds = strtoll(spin, &end, 10);
  while (isspace((unsigned char)*end)) end++;
  return end != spin && !*end && rounds == 0;
}}

int irkit_set_threads(int threads) {{
  if (threads < 0)
    IRKIT_FAIL("irkit_set_threads: threads must be 0 (OpenMP's default) or positive, got %d",
               threads);
  if (&irkit_num_threads) irkit_num_threads = threads;
  if (&irkit_team_work_shift)
    irkit_team_work_shift = irkit_threads_sleep() ? {sleeping_shift} : 0;
  irkit_error[0] = 0;
  return 0;
}}

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
/* One feature the code was compiled for: where CPUID reports it, and the register state
   (XCR0 bits) the OS must save for it to be usable. */
typedef struct {{
  const char *name;
  unsigned leaf, subleaf, reg, bit;
  unsigned long long xcr0;
}} irkit_cpu_feature;

static const irkit_cpu_feature irkit_cpu_features[] = {{
{rows}  {{NULL, 0, 0, 0, 0, 0}}
}};

static unsigned long long irkit_xcr0(void) {{
  unsigned a, b, c, d, lo, hi;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0;  /* no OSXSAVE */
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (unsigned long long)hi << 32 | lo;
}}

static int irkit_cpu_has(const irkit_cpu_feature *f) {{
  unsigned r[4];
  if (!__get_cpuid_count(f->leaf, f->subleaf, &r[0], &r[1], &r[2], &r[3])) return 0;
  return (r[f->reg] >> f->bit & 1) && (irkit_xcr0() & f->xcr0) == f->xcr0;
}}
#endif

/* 0: not checked yet; 1: this CPU runs the code; IRKIT_ERROR_CPU: it does not, and why. */
static _Atomic int irkit_cpu_state;
static char irkit_cpu_error[sizeof irkit_error];

static int irkit_check_cpu(void) {{
  if (irkit_cpu_state == 0) {{
    char missing[sizeof irkit_error / 2] = "";
#if defined(__x86_64__) || defined(__i386__)
    for (const irkit_cpu_feature *f = irkit_cpu_features; f->name; f++) {{
      if (irkit_cpu_has(f)) continue;
      if (missing[0]) strncat(missing, ", ", sizeof missing - strlen(missing) - 1);
      strncat(missing, f->name, sizeof missing - strlen(missing) - 1);
    }}
#endif
    snprintf(irkit_cpu_error, sizeof irkit_cpu_error, "this library was compiled for CPU "
             "{cpu}, and this CPU lacks %s: rebuild it with irkit-compile --cpu=native (this "
             "machine) or --cpu=generic", missing);
    irkit_cpu_state = missing[0] ? IRKIT_ERROR_CPU : 1;
  }}
  if (irkit_cpu_state == 1) return 0;
  snprintf(irkit_error, sizeof irkit_error, "%s", irkit_cpu_error);
  return IRKIT_ERROR_CPU;
}}

int irkit_init(int threads) {{
  int rc = irkit_check_cpu();
  return rc ? rc : irkit_set_threads(threads);
}}
"""


def _runtime_source(target: dict) -> str:
    """The C of the init call for a library compiled for `target` (`cpu_target`): the CPU
    check covers the target's features that CPUID reports (`_CPUID_FEATURES`: every x86
    instruction set extension LLVM vectorizes or selects instructions with; others, such as
    `64bit`, need no check) on an x86 target, none on another."""
    x86 = str(target.get("triple", "")).startswith(("x86_64", "i386", "i686"))
    names = [f[1:] for f in str(target.get("features", "")).split(",") if f.startswith("+")]
    rows = "".join(f'  {{"{n}", {leaf:#x}, {sub}, {reg}, {bit}, {xcr0:#x}}},\n'
                   for n in names if x86 and n in _CPUID_FEATURES
                   for leaf, sub, reg, bit, xcr0 in [_CPUID_FEATURES[n]])
    cpu = _c_string(str(target.get("cpu", "?")))[1:-1].replace("%", "%%")
    from irkit.backends.llvm_parallel import SLEEPING_WORK_SHIFT
    return _RUNTIME_SOURCE.format(rows=rows, cpu=cpu, sleeping_shift=SLEEPING_WORK_SHIFT)


def compile_c(source: str, obj_dir: str) -> bytes:
    """The object code of `source`, compiled by the system C compiler in `obj_dir`."""
    import subprocess
    from irkit.backends.llvm_cpu import BackendError, find_c_compiler
    cc = find_c_compiler()
    if cc is None:
        raise BackendError("no C compiler (cc, gcc or clang) found to build the library's "
                           "checked entry points and variables")
    src = os.path.join(obj_dir, "irkit_library.c")
    obj = os.path.join(obj_dir, "irkit_library.o")
    with open(src, "w", encoding="utf-8") as f:
        f.write(source)
    cmd = [cc, "-std=c11", "-O2", "-fPIC", "-c", "-o", obj, src]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BackendError(f"compiling the library's C code failed ({' '.join(cmd)}):\n"
                           f"{proc.stderr.strip()}")
    with open(obj, "rb") as f:
        return f.read()
