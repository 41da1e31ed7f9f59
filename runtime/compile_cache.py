"""The persistent compile cache: what compiling a model file produced, kept between processes.

Compiling a model takes seconds (the DSL front end, the pass pipeline, LLVM's optimizer and
code generator); loading what it produced takes milliseconds. The JIT (`irkit.load_model(...,
engine="jit")`) and `irkit-compile -o model.so` (and `--emit=obj`) look here first:

    compiled = cached_compile(text, "m.irk", "*", compile_all, jit=True,
                              options={"opt_level": 2, "cpu": "native"})

An entry is one `CompiledModels` (`irkit.runtime.compiled`): the object files with the external
symbols it calls, and per model the text of its graph module as the DSL wrote it, of its
graph-stage module (shape functions), of its lowered module and of that module's interface
(signatures and argument roles only). A runner made from it parses only the interface and
loads the object with MCJIT, so a warm start skips the DSL, the passes and LLVM altogether.
Text and JSON, not pickles: an entry never runs code when read.

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
   is never served stale code built before the edit); llvmlite's and LLVM's versions.
3. Look up `<dir>/<key>.irkc`. One file per entry: a magic line, a header line (the JSON
   part's length and a SHA-256 digest of the rest), the JSON part (the request's fields,
   the externals, the object files' lengths, the models' texts), the object files (one per
   partition the backend compiled side by side, `llvm_partition`) one after another. An
   entry that is truncated, altered (digest), of another format, or whose fields are not
   the request's (a renamed file, a hash collision) is ignored as a miss and rewritten by
   the compile that follows.
4. On a miss, compile and write the entry: into a temporary file beside it, then
   `os.replace`, which is atomic, so a reader sees the old entry or the new one, never
   half of one. Processes that compile the same model at once each write a whole entry
   and the last rename wins; no lock is needed. A cache that cannot be written (read-only,
   disk full) costs a warning, never the compile.
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

from irkit.passes import pipeline
from irkit.runtime.compiled import CompiledModels, IRText, ModelCode
from irkit.user_cache import cache_directory
from irkit.version import VERSION

#: the entry format; a change of layout changes it, and old entries are simply not found
FORMAT = "irkit-compile-cache-2"
_MAGIC = FORMAT.encode("ascii") + b"\n"
_SUFFIX = ".irkc"

#: hits, misses, stores and rejected entries in this process (tests and benchmarks read it)
stats: Counter = Counter()
#: the most bytes of entries the folder keeps (an example model's entry: 0.3-1.5 MB)
MAX_BYTES = 1 << 30
#: how old a temporary must be to be taken for a killed writer's (seconds)
_STALE_TMP_S = 3600

#: the packages whose code decides what a compile produces (docs/layout.md's layers)
_PACKAGES = ("irkit", "irkit.frontend", "irkit.dialects", "irkit.passes", "irkit.backends",
             "irkit.exporters", "irkit.runtime")


_fingerprint: str | None = None


def code_fingerprint() -> str:
    """A digest of irkit's source files (relative name, size, modification time), computed
    once per process: about 150 `stat`s, under a millisecond. Name and time rather than the
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
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for f in sorted(files):
                    if f.endswith((".py", ".lark")):
                        st = os.stat(os.path.join(folder, f))
                        h.update(f"{os.path.relpath(os.path.join(folder, f), root)}:"
                                 f"{st.st_size}:{st.st_mtime_ns}\n".encode())
        _fingerprint = h.hexdigest()
    return _fingerprint


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
            "llvm": ".".join(str(v) for v in llvm.llvm_version_info)}


def entry_key(fields: dict) -> str:
    """The entry's name: a SHA-256 digest of the request's fields."""
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()


def cached_compile(source: str, filename: str, selection: str,
                   build: Callable[[], CompiledModels], *, jit: bool, options: dict,
                   cache: bool = True) -> CompiledModels:
    """The entry for this request when the cache has a sound one; else `build()`'s result,
    written to the cache. `selection` names the models `build` compiles (a model's name, or
    "*" for every model of the source); `jit` and `options` are what it compiles with.
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
        return found
    stats["misses"] += 1
    compiled = build()
    try:
        _write(path, _encode(fields, compiled))
        stats["stores"] += 1
        _evict(directory)
    except OSError as e:
        warnings.warn(f"irkit: cannot write the compile cache entry {path}: {e.strerror}",
                      RuntimeWarning, stacklevel=2)
    return compiled


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
    objects = compiled.code.objects
    part = {"fields": fields, "jit": compiled.jit, "externals": list(compiled.code.externals),
            "objects": [len(obj) for obj in objects],
            "models": {name: {"prefix": mc.prefix, "module": mc.module.text,
                              "graph": mc.graph.text, "lowered": mc.lowered.text,
                              "interface": mc.interface.text}
                       for name, mc in compiled.models.items()}}
    head = json.dumps(part).encode("utf-8")
    body = head + b"".join(objects)
    header = f"{len(head)} {hashlib.sha256(body).hexdigest()}\n"
    return _MAGIC + header.encode("ascii") + body


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
                                  IRText(text=m["graph"]), IRText(text=m["lowered"]),
                                  IRText(text=m["interface"]))
                  for name, m in part["models"].items()}
        ends = list(itertools.accumulate(part["objects"], initial=length))
        if ends[-1] != len(body):
            return None
        code = ObjectCode(tuple(bytes(body[a:b]) for a, b in zip(ends, ends[1:])),
                          tuple(part["externals"]), {})
        return CompiledModels(code, models, bool(part["jit"]))
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
