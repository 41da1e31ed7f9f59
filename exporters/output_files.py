"""Output files that appear together or not at all.

    with OutputFiles() as out:
        so, h = out.path("build/m.so"), out.path("build/m.h")
        ...write `so` and `h`...
        out.commit()            # both renamed into place; before this, neither exists

A tool that writes several files (a library, its header and its metadata; or one `-o` file)
must never leave a partial or mismatched set behind: not when a step fails, not when the
user presses Ctrl-C. Each output is therefore written to a temporary file in its
destination's directory (so that the final `os.replace` is a rename within one file system,
atomic), and the temporaries are renamed into place only when every one is complete. Leaving
the `with` block without `commit()` (an error, `KeyboardInterrupt`) removes them all.

Errors are `OSError`s whose `filename` is the destination the user named, never a
temporary's name: `cannot write 'out/x.so.json': Is a directory`.
"""

from __future__ import annotations

import errno
import os
import secrets


class OutputFiles:
    """A set of destinations, each with a temporary beside it; see the module docstring."""

    def __init__(self) -> None:
        self._files: list[tuple[str, str]] = []       # (destination, temporary)

    def path(self, dest: str | os.PathLike) -> str:
        """A new, empty temporary file next to `dest` to write `dest`'s contents to. Fails
        at once (before any work is spent) when `dest` is a directory or its directory
        cannot be written."""
        dest = os.fspath(dest)
        if os.path.isdir(dest):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), dest)
        head, tail = os.path.split(dest)
        tmp = os.path.join(head, f".{tail}.{secrets.token_hex(4)}.tmp")
        try:
            # Created with the mode a plain `open` would give (0666 less the umask), not
            # mkstemp's 0600: the file is renamed, not copied, into place.
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except OSError as e:
            raise type(e)(e.errno, e.strerror, dest) from None
        self._files.append((dest, tmp))
        return tmp

    def commit(self) -> None:
        """Rename every temporary into place. Should a rename fail (or Ctrl-C arrive between
        two), the outputs already renamed by this call are removed again, so that no
        mismatched set is left."""
        done = []
        try:
            for dest, tmp in self._files:
                os.replace(tmp, dest)
                done.append(dest)
        except BaseException as e:
            for d in done:
                _remove(d)
            if isinstance(e, OSError):
                raise type(e)(e.errno, e.strerror, dest) from None
            raise
        self._files = []

    def discard(self) -> None:
        """Remove every temporary not yet committed."""
        for _, tmp in self._files:
            _remove(tmp)
        self._files = []

    def __enter__(self) -> OutputFiles:
        return self

    def __exit__(self, *exc) -> None:
        self.discard()


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
