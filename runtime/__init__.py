"""irkit.runtime: running models from Python.

- `model.py` — `Model` (`forward`, `train_step`, `variables`), `load_model` (a `.irk` file)
  and `load` (a shared library);
- `engines.py` — the engines behind one interface: the interpreter, code compiled in
  process (JIT), a loaded library;
- `compiled.py` — lowering by the pipeline table and calling compiled functions
  (`CompiledRunner`); `shapes.py` — symbolic output shapes; `inputs.py` — input checks;
- `compile_cache.py` — the persistent compile cache the JIT and `irkit-compile` share.

It sits above the exporters (it loads what they write) and below the tools.
"""
