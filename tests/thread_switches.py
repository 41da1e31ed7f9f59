"""Running test work on several Python threads that switch as often as Python allows.

Compiled code runs without the GIL and Python code around it switches threads every few
milliseconds by default; a tiny switch interval makes a thread give way between almost
any two bytecodes, so a state shared by mistake between calls from several threads (a
descriptor buffer, a status array) is hit within a few hundred calls.
"""

from __future__ import annotations

import sys
import threading


def run_switching(work, args: list[tuple]) -> None:
    """`work(*a)` for each `a` of `args`, each on its own thread, all at once, the switch
    interval at 1 us meanwhile; returns when every thread has ended."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=a) for a in args]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
