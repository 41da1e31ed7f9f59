"""Schedule choices by measurement, kept between processes: the tuning records and the
`blis.configs` attribute that carries them into the pipeline. The tuner that measures them
is `irkit.tools.autotune` (`irkit-compile --autotune`).

The BLIS schedule of each contraction (passes/linalg_matmul_blis.py) takes its sizes from a
cost model: the register tile from the target's vector registers and lanes, weighted by how
much of it falls inside static sizes; the cache blocks from the cache sizes
(`irkit.passes.blis.nest.schedule`). The model cannot see everything that decides the time:
how a packed panel shares the caches with the epilogue's operands, a skinny N against the
tile, the other kernels of a step, the machine. The tuner measures instead, as TVM's and
IREE's tuners do, and the compiler takes its choice where it has one.

Where the choice lives. In the IR: the model module's `blis.configs` attribute, an array of
dictionaries `{ordinal = 1 : i64, mr = 4 : i64, nr = 32 : i64, kc = 128 : i64}`, each the
sizes that override the cost model's for the contraction `linalg-matmul-blis` finds
`ordinal`-th in its walk of the module (the pass documents the attribute; `irkit-opt` runs it
on IR that carries one). The JIT (`load_model(engine="jit")`) and `irkit-compile` look up a
tuning record for the model they compile and set the attribute before the pipeline runs;
the compile cache's key includes it, so a new record compiles anew.

Records: `tuning.json` in the user's cache folder (`irkit.user_cache`; `IRKIT_CACHE_DIR`
moves it, set empty: no records), keyed by a SHA-256 digest of the source text, the target
(triple, CPU name, features) and irkit's code (version and `compile_cache.code_fingerprint`,
so that an edited pass, whose walk may number the contractions differently, is not given
another code's sizes), a record per model of the source: the configs, the sizes and threads
they were measured with, and the times. Written through a temporary file and `os.replace`,
so a reader sees the old file or the new one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import TYPE_CHECKING

from irkit.target import SCHEDULE_ATTRIBUTE, SCHEDULE_KNOBS
from irkit.user_cache import cache_directory
from irkit.version import VERSION

if TYPE_CHECKING:
    from irkit.ir import Operation

#: the module attribute `linalg-matmul-blis` reads (module docstring), the sizes a config
#: may set: one home, the target description's
ATTRIBUTE, KNOBS = SCHEDULE_ATTRIBUTE, SCHEDULE_KNOBS
#: the records' file in the cache folder, and its format
RECORDS = "tuning.json"
FORMAT = "irkit-tuning-1"


# ---------------------------------------------------------------------------------------------
# The configs in the IR
# ---------------------------------------------------------------------------------------------


def set_configs(module: Operation, configs: list[dict]) -> None:
    """Give `module` the `blis.configs` attribute for `configs` (each `{"ordinal": i, knob:
    size, ...}`); none: the attribute removed."""
    from irkit.attributes import ArrayAttr, DictionaryAttr, IntegerAttr
    from irkit.types import I64
    if not configs:
        module.attributes.pop(ATTRIBUTE, None)
        return
    module.attributes[ATTRIBUTE] = ArrayAttr([
        DictionaryAttr({k: IntegerAttr(int(v), I64) for k, v in sorted(c.items())})
        for c in configs])


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------


def record_key(source: str, cpu: str = "native") -> str:
    """The key of a source's records (module docstring): source, target and irkit's code."""
    from irkit.backends.llvm_cpu import cpu_target
    from irkit.runtime.compile_cache import code_fingerprint
    fields = {"format": FORMAT, "source": hashlib.sha256(source.encode("utf-8")).hexdigest(),
              "target": cpu_target(cpu), "irkit": VERSION, "irkit_code": code_fingerprint()}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()


def _records_path() -> str | None:
    folder = cache_directory()
    return None if folder is None else os.path.join(folder, RECORDS)


def load_records() -> dict:
    """Every source's records (key -> {model: record}); none where the file is missing or
    unreadable."""
    path = _records_path()
    if path is None or not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    records = data.get("records")
    return records if isinstance(records, dict) else {}


def lookup(source: str, cpu: str = "native") -> dict[str, list[dict]]:
    """The configs recorded for the models of `source` on this target (model -> configs;
    a model without a record is absent: the cost model decides for it). A malformed record
    is ignored whole, never half applied."""
    records = load_records()
    models = records.get(record_key(source, cpu)) if records else None
    if not isinstance(models, dict):
        return {}
    out = {}
    for name, record in models.items():
        configs = record.get("configs") if isinstance(record, dict) else None
        if isinstance(configs, list) and configs and all(_valid(c) for c in configs):
            out[name] = configs
    return out


def apply(models: dict, tuned: dict[str, list[dict]]) -> None:
    """Set the recorded configs (`lookup`) on the model modules `models` (name -> module)."""
    for name, module in models.items():
        if name in tuned:
            set_configs(module, tuned[name])


def _valid(config) -> bool:
    return (isinstance(config, dict) and isinstance(config.get("ordinal"), int)
            and all(k == "ordinal" or (k in KNOBS and isinstance(v, int) and v > 0)
                    for k, v in config.items()))


def store(source: str, model: str, record: dict, cpu: str = "native") -> str | None:
    """Write `record` for `model` of `source` (replacing an older one); the file's path, or
    None where there is no cache folder."""
    path = _records_path()
    if path is None:
        return None
    records = load_records()
    key = record_key(source, cpu)
    models = records.get(key) if isinstance(records.get(key), dict) else {}
    records[key] = {**models, model: record}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tuning-", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"format": FORMAT, "records": records}, fh, indent=1, sort_keys=True)
    os.replace(tmp, path)
    return path


__all__ = ["ATTRIBUTE", "KNOBS", "RECORDS", "set_configs", "lookup", "apply", "store",
           "load_records", "record_key"]
