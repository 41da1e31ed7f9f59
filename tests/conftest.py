"""Makes `tests/` importable (pytest puts a conftest's folder on `sys.path`), so tests in
every subfolder share helpers such as `shared_corpus`; and sets hypothesis's profiles.

Profiles:

- `ci` (the default): `derandomize=True`, so every run draws the same examples and a failure
  reproduces on the next run; no deadline (compile times vary on shared machines);
  `print_blob=True`, so a failure prints the `@reproduce_failure` line. `--hypothesis-seed=N`
  switches derandomization off for that run (hypothesis ignores the seed under
  `derandomize`), to explore other examples reproducibly: `pytest ... --hypothesis-seed=7`.
- `fuzz`: random seeds, 1,000 examples where a test sets none, and every explicit
  `@settings(max_examples=k)` scaled to `FUZZ_SCALE * k` (an explicit setting overrides a
  profile field by field, so the profile alone would leave those at k). Select it with
  `IRKIT_HYPOTHESIS_PROFILE=fuzz pytest tests/property` (hypothesis's own convention of a
  profile chosen by the test runner; it configures the test run, not irkit) or with
  `--hypothesis-profile=fuzz`.

The suite uses the toolkit as the tools do: every dialect and pass of irkit known by name
(`irkit.tools.register_all`), since the parser and the pass manager know only what is
registered.

The persistent compile cache (`irkit.runtime.compile_cache`) is off for the suite
(`IRKIT_CACHE_DIR` set empty, which subprocesses inherit): the suite never writes to the
user's `~/.cache`, every test compiles what it tests whatever ran before it (tests that time
or interrupt a compile, or count the passes it runs, would otherwise depend on the order),
and a cold compile goes through the same object-code loading as a warm one, so the loading
is tested everywhere. The cache's own tests (tests/unit/test_compile_cache.py) point it at
their `tmp_path`. And the compiles of the runtime verify the IR after every pass, not only
after every row of the pipeline table as users' do (`VERIFY_EACH_PASS`), so that a pass
that breaks the IR is caught even where a later pass happens to mend it.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, is_hypothesis_test, settings

from irkit.runtime import compiled
from irkit.tools import register_all

register_all()
os.environ["IRKIT_CACHE_DIR"] = ""
compiled.VERIFY_EACH_PASS = True

FUZZ_SCALE = 10
FUZZ_EXAMPLES = 1000

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("ci-seeded", settings.get_profile("ci"), derandomize=False)
settings.register_profile("fuzz", derandomize=False, deadline=None, print_blob=True,
                          max_examples=FUZZ_EXAMPLES,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.load_profile(os.environ.get("IRKIT_HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config) -> None:
    # Runs before the test modules are imported, so their `settings(...)` inherit this.
    if config.getoption("hypothesis_seed", None) is not None and \
            settings.get_current_profile_name() == "ci":
        settings.load_profile("ci-seeded")


def pytest_collection_modifyitems(items) -> None:
    """Under `fuzz`, scale each hypothesis test's explicit `max_examples` by FUZZ_SCALE."""
    if settings.get_current_profile_name() != "fuzz":
        return
    done = set()
    for item in items:
        fn = getattr(item, "obj", None)
        if fn is None or id(fn) in done or not is_hypothesis_test(fn):
            continue
        done.add(id(fn))
        own = fn._hypothesis_internal_use_settings
        if own.max_examples < FUZZ_EXAMPLES:       # set by the test, not the profile's
            fn._hypothesis_internal_use_settings = settings(
                own, max_examples=own.max_examples * FUZZ_SCALE)
