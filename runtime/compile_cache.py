"""The persistent compile cache: what compiling a model file produced, kept between processes.

Compiling a model takes seconds (the DSL front end, the pass pipeline, LLVM's optimizer and
code generator); loading what it produced takes milliseconds. The JIT (`irkit.load_model(...,
engine="jit")`) and `irkit-compile -o model.so` (and `--emit=obj`) look here first:

    compiled = cached_compile(text, "m.irk", "*", compile_all, jit=True,
                              options={"opt_level": 2, "cpu": "native"})

An entry is one `CompiledModels` (`irkit.runtime.compiled`): the object files with the external
symbols it calls, and per model the text of its graph module as the DSL wrote it, of its
graph-stage module (shape functions), of its lowered module and of that module's interface
(signatures and argument roles only) — a library's whole, the JIT's per entry lowered so
far — and the initial values of the variables drawn at random (`keep_drawn_values`). A
JIT runner made from it parses the graph-stage module (the entries' inputs, the variables,
the outputs' shapes), an entry's interface at its first call, and loads the object with
MCJIT, so a warm start skips the DSL, the passes and LLVM's compiling altogether (and
`numpy.random`, 7 ms of the example MLP's warm start). Text, JSON and raw arrays, not
pickles: an entry never runs code when read.

Algorithm:

1. Where: `$IRKIT_CACHE_DIR` when set (set and empty: no cache), else `$XDG_CACHE_HOME/irkit`,
   else `~/.cache/irkit` (`irkit.user_cache.cache_directory`). `cache=False` (`load_model`)
   and `--no-cache` (`irkit-compile`) bypass it.
2. Key (`request_fields`, hashed by `entry_key`): everything that decides the result. The
   source text (DSL) and the file name its locations name; which models (`"*"`: all); the
   pipeline table's passes; the kind of object code (in process or position-independent)
   and the compile options (opt level, CPU); the target (triple, CPU name, features);
   irkit's version and a fingerprint of its code (`code_fingerprint`: the name, size and
   modification time of every source file, so that an edited pass in a development tree
   is never served stale code built before the edit); llvmlite's and LLVM's versions;
   numpy's (its generators draw the initial values the entry keeps).
3. Look up `<dir>/<key>.irkc`. One file per entry: a magic line, a header line (the JSON
   part's length and a SHA-256 digest of the rest), the JSON part (the request's fields,
   the compile options, per object code its entry (null: a library's, every function),
   externals and object files' lengths, the models' texts, the kept values' names,
   dtypes, shapes and lengths), the object files (one per partition the backend compiled
   side by side, `llvm_partition`) one after another, then the kept values' bytes. An
   entry that is truncated, altered (digest), of another format (`FORMAT`: older entries
   are simply not found), or whose fields are not the request's (a renamed file, a hash
   collision) is ignored as a miss and rewritten by the compile that follows.
4. On a miss, compile and write the entry: into a temporary file beside it, then
   `os.replace`, which is atomic, so a reader sees the old entry or the new one, never
   half of one. The JIT lowers and compiles each entry of a model on its first call
   (`CompiledModels.entry_object`) and writes the entry again with it, so an entry holds
   the lowered modules and code of every function any process has called; a process that
   calls another lowers it from the graph-stage module. Processes that compile the same
   model at once each write a whole entry and the last rename wins (an entry's code lost
   that way is compiled again when next called); no lock is needed. A cache that cannot be
   written (read-only, disk full) costs a warning, never the compile.
5. Size: a hit refreshes its entry's modification time; a store that takes the folder's
   entries over `MAX_BYTES` removes the least recently used ones down to three quarters of
   it, and temporaries a killed process left an hour ago (`_evict`). A reader that opened
   an entry before it was removed still reads it whole (POSIX keeps an open file's data).

`stats` counts hits, misses, stores and rejected (corrupt or stale) entries in this process.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import tempfile
import warnings
from collections import Counter
from typing import Callable

import numpy as np

from irkit.passes import pipeline
from irkit.runtime.compiled import CompiledModels, EntryModules, IRText, ModelCode
from irkit.user_cache import cache_directory
from irkit.version import VERSION

#: the entry format; a change of layout changes it, and old entries are simply not found
FORMAT = "irkit-compile-cache-5"
_MAGIC = FORMAT.encode("ascii") + b"\n"
_SUFFIX = ".irkc"

#: hits, misses, stores and rejected entries in this process (tests and benchmarks read it)
stats: Counter = Counter()
#: the most bytes of entries the folder keeps (an example model's entry: 0.3-1.5 MB)
MAX_BYTES = 1 << 30
#: how old a temporary must be to be taken for a killed writer's (seconds)
_STALE_TMP_S = 3600
#: the most bytes of drawn initial values an entry keeps (`keep_drawn_values`); a model with
#: more has the rest drawn again at each load, as without the cache
MAX_VALUE_BYTES = 16 << 20
#: initializers whose values are made faster than read back: never kept
_CHEAP_INITIALIZERS = ("zeros", "ones", "constant")

#: the packages whose code decides what a compile produces (docs/layout.md's layers)
_PACKAGES = ("irkit", "irkit.frontend", "irkit.dialects", "irkit.passes", "irkit.backends",
             "irkit.exporters", "irkit.runtime")


_fingerprint: str | None = None


def code_fingerprint() -> str:
    """A digest of irkit's source files (relative name, size, modification time), computed
    once per process: about 200 `stat`s, a millisecond. Name and time rather than the
    contents: a file rewritten with the same bytes only costs a recompile."""
    global _fingerprint
    if _fingerprint is None:
        import importlib.util
        roots: list[str] = []
        for name in _PACKAGES:
            spec = importlib.util.find_spec(name)
            for root in (spec.submodule_search_locations or []) if spec else []:
                root = os.path.realpath(root)
                if not any(root == r or root.startswith(r + os.sep) for r in roots):
                    roots = [r for r in roots if not r.startswith(root + os.sep)] + [root]
        h = hashlib.sha256()
        for root in sorted(roots):
            _hash_sources(h, root, "")
        _fingerprint = h.hexdigest()
    return _fingerprint


def _hash_sources(h, folder: str, rel: str) -> None:
    """Feed `h` a line `relative/name.py:size:mtime_ns` per source file under `folder`
    (`rel`: its path below the root), top-down, names sorted, without `__pycache__` and
    without descending into linked folders (what `os.walk` visits: the same digest at half
    its cost, the `stat` of `os.scandir`'s entries and no `relpath`)."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:         # unreadable: skipped, as `os.walk` skips it
        return
    lines, subfolders = [], []
    for e in entries:
        if e.is_dir():
            if e.name != "__pycache__" and not e.is_symlink():
                subfolders.append(e)
        elif e.name.endswith((".py", ".lark")):
            st = e.stat()
            lines.append(f"{rel}{e.name}:{st.st_size}:{st.st_mtime_ns}\n")
    h.update("".join(lines).encode())
    for d in subfolders:
        _hash_sources(h, d.path, f"{rel}{d.name}{os.sep}")


def request_fields(source: str, filename: str, selection: str, *, jit: bool,
                   options: dict) -> dict:
    """What decides a compile's result (the module docstring's step 2), as JSON values;
    `options` are the compile's (`opt_level`, `cpu`: the target, "native" if not given)."""
    import llvmlite
    import llvmlite.binding as llvm
    from irkit.backends.llvm_cpu import cpu_target
    return {"format": FORMAT,
            "source": hashlib.sha256(source.encode("utf-8")).hexdigest(),
            "filename": filename, "models": selection,
            "pipeline": [[s.name, s.passes] for s in pipeline.STAGES],
            "graph_stage": pipeline.GRAPH_STAGE,
            "object": "in-process" if jit else "position-independent",
            "options": options, "target": cpu_target(options.get("cpu", "native")),
            "irkit": VERSION, "irkit_code": code_fingerprint(),
            "llvmlite": llvmlite.__version__,
            "llvm": ".".join(str(v) for v in llvm.llvm_version_info),
            "numpy": np.__version__}


def entry_key(fields: dict) -> str:
    """The entry's name: a SHA-256 digest of the request's fields."""
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()


def cached_compile(source: str, filename: str, selection: str,
                   build: Callable[[], CompiledModels], *, jit: bool, options: dict,
                   cache: bool = True, make_pm: Callable | None = None) -> CompiledModels:
    """The entry for this request when the cache has a sound one; else `build()`'s result,
    written to the cache. `selection` names the models `build` compiles (a model's name, or
    "*" for every model of the source); `jit` and `options` are what it compiles with, and
    `make_pm` the pass managers it lowers with when not the default (`CompiledModels
    .make_pm`: an entry found lowers with them what no process has called yet).
    `cache=False`, or no cache directory, just builds."""
    directory = cache_directory() if cache else None
    if directory is None:
        return build()
    fields = request_fields(source, filename, selection, jit=jit, options=options)
    path = os.path.join(directory, entry_key(fields) + _SUFFIX)
    found = _read(path, fields)
    if found is not None:
        stats["hits"] += 1
        try:
            os.utime(path)          # recently used: the last to be evicted
        except OSError:
            pass
        found.stored = lambda c: _store(directory, path, fields, c)
        found.make_pm = make_pm
        return found
    stats["misses"] += 1
    compiled = build()
    keep_drawn_values(compiled)
    _store(directory, path, fields, compiled)
    return compiled


def _store(directory: str, path: str, fields: dict, compiled: CompiledModels) -> None:
    """Write `compiled` as the entry at `path`, and again each time the JIT compiles one of
    its entries (`CompiledModels.stored`): an entry holds what was compiled so far, and a
    warm start compiles only the entries no process has called yet. A cache that cannot be
    written warns once, and is not written again."""
    compiled.stored = None
    try:
        _write(path, _encode(fields, compiled))
        stats["stores"] += 1
        _evict(directory)
    except OSError as e:
        warnings.warn(f"irkit: cannot write the compile cache entry {path}: {e.strerror}",
                      RuntimeWarning, stacklevel=3)
        return
    compiled.stored = lambda c: _store(directory, path, fields, c)


def keep_drawn_values(compiled: CompiledModels) -> None:
    """Give each model of in-process code (`jit`) its variables' initial values that are
    drawn at random (`ModelCode.initial_values`, at most `MAX_VALUE_BYTES` in all): the
    entry keeps them, and the engine made now takes them instead of drawing them again.
    Values of a dtype that its `str` does not name again (an extension type) are not
    kept."""
    if not compiled.jit:
        return
    from irkit.dialects.graph import variable_specs
    total = 0
    for mc in compiled.models.values():
        module = mc.variables_module()
        attr = module.attributes.get("graph.variables")
        drawn = {e.value["name"].value for e in (attr.value if attr is not None else [])
                 if e.value["initializer"].value not in _CHEAP_INITIALIZERS}
        kept = {}
        for name, _, dtype, value in variable_specs(module, mc.initial_values):
            if name in drawn and np.dtype(dtype.str) == dtype and \
                    total + value.nbytes <= MAX_VALUE_BYTES:
                kept[name] = value
                total += value.nbytes
        mc.initial_values = kept or None


def _evict(directory: str) -> None:
    """Keep the folder's entries under `MAX_BYTES`: past it, remove the least recently used
    down to three quarters of it; and remove temporaries older than `_STALE_TMP_S`."""
    import time
    entries, total, now = [], 0, time.time()
    for entry in os.scandir(directory):
        try:
            st = entry.stat()
            if entry.name.startswith(".tmp-") and now - st.st_mtime > _STALE_TMP_S:
                os.unlink(entry.path)
            elif entry.name.endswith(_SUFFIX) and not entry.name.startswith("."):
                entries.append((st.st_mtime, st.st_size, entry.path))
                total += st.st_size
        except OSError:             # removed meanwhile by another process
            continue
    if total <= MAX_BYTES:
        return
    for _, size, path in sorted(entries):
        if total <= MAX_BYTES * 3 // 4:
            break
        try:
            os.unlink(path)
        except OSError:
            pass
        total -= size


# ---------------------------------------------------------------------------------------------
# The entry file
# ---------------------------------------------------------------------------------------------


def _encode(fields: dict, compiled: CompiledModels) -> bytes:
    """An entry's bytes (the module docstring's step 3)."""
    codes = ({None: compiled.code} if compiled.code is not None else {}) | compiled.entry_code
    objects = [obj for code in codes.values() for obj in code.objects]
    values = [(model, name, np.ascontiguousarray(value))
              for model, mc in compiled.models.items()
              for name, value in (mc.initial_values or {}).items()]
    part = {"fields": fields, "jit": compiled.jit, "options": compiled.options,
            "code": [[entry, list(code.externals), [len(obj) for obj in code.objects]]
                     for entry, code in codes.items()],
            "models": {name: {"prefix": mc.prefix, "module": mc.module.text,
                              "graph": mc.graph.text,
                              "lowered": mc.lowered.text if mc.lowered else None,
                              "interface": mc.interface.text if mc.interface else None,
                              "entries": {e: [m.lowered.text, m.interface.text]
                                          for e, m in mc.entries.items()}}
                       for name, mc in compiled.models.items()},
            "values": [[model, name, v.dtype.str, list(v.shape), v.nbytes]
                       for model, name, v in values]}
    head = json.dumps(part).encode("utf-8")
    body = head + b"".join(objects) + b"".join(v.tobytes() for _, _, v in values)
    header = f"{len(head)} {hashlib.sha256(body).hexdigest()}\n"
    return _MAGIC + header.encode("ascii") + body


def _text(text: str | None) -> IRText | None:
    return IRText(text=text) if text is not None else None


def _read(path: str, fields: dict) -> CompiledModels | None:
    """The entry at `path` if there is one and it is sound and for `fields`, else None (a
    missing entry is a miss; an unsound one is counted in `stats["rejected"]`)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    compiled = _decode(data, fields)
    if compiled is None:
        stats["rejected"] += 1
    return compiled


def _decode(data: bytes, fields: dict) -> CompiledModels | None:
    from irkit.backends.llvm_cpu import ObjectCode
    if not data.startswith(_MAGIC):
        return None
    end = data.find(b"\n", len(_MAGIC))
    if end < 0:
        return None
    try:
        length, digest = data[len(_MAGIC):end].decode("ascii").split(" ")
        length = int(length)
        body = data[end + 1:]
        if hashlib.sha256(body).hexdigest() != digest or length > len(body):
            return None
        part = json.loads(body[:length].decode("utf-8"))
        if part["fields"] != fields:
            return None
        models = {name: ModelCode(name, m["prefix"], IRText(text=m["module"]),
                                  IRText(text=m["graph"]), _text(m["lowered"]),
                                  _text(m["interface"]),
                                  entries={e: EntryModules(IRText(text=low), IRText(text=face))
                                           for e, (low, face) in m["entries"].items()})
                  for name, m in part["models"].items()}
        values = part["values"]
        sizes = [size for _, _, lengths in part["code"] for size in lengths]
        ends = list(itertools.accumulate(sizes + [v[4] for v in values], initial=length))
        if ends[-1] != len(body):
            return None
        codes, k = {}, 0
        for entry, externals, lengths in part["code"]:
            codes[entry] = ObjectCode(tuple(bytes(body[a:b]) for a, b in
                                            zip(ends[k:k + len(lengths)],
                                                ends[k + 1:k + len(lengths) + 1])),
                                      tuple(externals), {})
            k += len(lengths)
        n = len(sizes)
        for (model, name, dtype, shape, size), start in zip(values, ends[n:]):
            dtype = np.dtype(dtype)     # read-only views of the entry, copied when used
            array = np.frombuffer(body, dtype, size // dtype.itemsize, start).reshape(shape)
            if array.nbytes != size:
                return None
            mc = models[model]
            mc.initial_values = {**(mc.initial_values or {}), name: array}
        code = codes.pop(None, None)
        return CompiledModels(code, models, bool(part["jit"]), codes, dict(part["options"]))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _write(path: str, data: bytes) -> None:
    """`data` into `path` atomically: a temporary beside it, renamed over it."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
