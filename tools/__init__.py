"""irkit.tools: the command-line entry points (`irkit-opt`, `irkit-compile`)."""

import _thread
import sys
import threading

from irkit import dialects, passes


def register_all() -> None:
    """Make every dialect and every pass of irkit known by name, each module imported when
    first used: what every tool does first, as MLIR's tools call `registerAllDialects` and
    `registerAllPasses` (the parser and the pass manager know only what is registered)."""
    dialects.register_all()
    passes.register_all()


#: seconds from a dropped Ctrl-C to its second delivery (`redeliver_swallowed_interrupts`)
REDELIVERY_DELAY = 0.005


def redeliver_swallowed_interrupts() -> None:
    """Make a Ctrl-C that Python would drop interrupt the program after all.

    Python raises `KeyboardInterrupt` wherever the main thread is when SIGINT arrives.
    Inside a weakref callback or a `__del__` (run by the garbage collector or a dying
    object, in the middle of any code), an exception cannot propagate: Python prints
    "Exception ignored in ..." and goes on, so the Ctrl-C is lost and the tool finishes
    and writes its outputs. Seen once in CI: `irkit-compile` interrupted half a second
    into its passes, the signal landing in a `WeakValueDictionary`'s callback, exited 0.
    Python hands every such dropped exception to `sys.unraisablehook`; for a
    `KeyboardInterrupt` this hook has a timer thread mark SIGINT pending for the main
    thread again (`_thread.interrupt_main`) `REDELIVERY_DELAY` seconds later, once the hook
    and the callback have returned, so that the handler raises in the code the callback
    interrupted. (Marked at once, from the main thread or a thread the hook waits to
    start, the handler runs before the hook's own frame returns, and the exception is
    dropped again; should the timer's mark land in another callback, the hook runs
    again.) Anything else goes to the previous hook."""
    previous = sys.unraisablehook

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            timer = threading.Timer(REDELIVERY_DELAY, _thread.interrupt_main)
            timer.daemon = True
            timer.start()
        else:
            previous(unraisable)
    sys.unraisablehook = hook
