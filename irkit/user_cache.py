"""Where irkit keeps, for one user, what it computed once and can reuse in another process:
compiled models (`irkit.runtime.compile_cache`) and the DSL's parser tables
(`irkit.frontend.dsl.syntax`). A module of the core so that every layer can find the folder.

`$IRKIT_CACHE_DIR` when set (set and empty: cache nothing), else `$XDG_CACHE_HOME/irkit`
(the XDG base directory convention), else `~/.cache/irkit`.
"""

from __future__ import annotations

import os


def cache_directory() -> str | None:
    """The cache's folder (not necessarily created yet), or None when `IRKIT_CACHE_DIR` is
    set empty."""
    configured = os.environ.get("IRKIT_CACHE_DIR")
    if configured is not None:
        return configured or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "irkit")
