"""irkit.frontend: what turns a model written by a person into graph IR.

- `dsl/` — the model language (`.irk`) and its lowering to the graph dialect;
- `ad_engine.py` — the autodiff engine: reverse and forward mode over a scope of graph ops,
  applying each op's rules (the rule API itself is the core's `irkit.ad_rules`);
- `optimizers.py` — SGD, momentum and Adam as graph ops, their state as variables.

It sits above the dialects (it builds their ops) and below the passes (the `autodiff` pass
runs the engine).
"""
