"""Read an IR file, verify it, run its functions in the interpreter, print it back.

    python examples/run_example.py examples/softmax.mlir

This is the project's main job until the compiler stages land: it shows the parser, the
verifier, the reference interpreter (checked against numpy) and both printed forms.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import irkit
from irkit.diagnostics import IRError


def main(path: str) -> int:
    text = open(path, encoding="utf-8").read()
    t0 = time.perf_counter()
    try:
        module = irkit.parse_module(text, path)
    except IRError as e:
        print(e.render(), file=sys.stderr)
        return 1
    t1 = time.perf_counter()
    print(f"parsed and verified {path} in {(t1 - t0) * 1e3:.1f} ms")
    print("--- custom form ---")
    print(irkit.print_op(module), end="")

    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = irkit.interpret(module, "sigmoid", x, np.ones_like(x))
    expect = 1 / (1 + np.exp(-x))
    print("--- interpreter ---")
    print(f"sigmoid(x) for x of shape {x.shape}: max |irkit - numpy| = "
          f"{float(np.abs(y - expect).max()):.2e}")
    s = irkit.interpret(module, "scalar", 0.5, -1.25)
    print(f"scalar(0.5, -1.25) = {float(s):.6f} (numpy: "
          f"{float(max(0.5, -1.25) * 2 + np.tanh(np.float32(1.75))):.6f})")

    generic = irkit.print_op(module, generic=True)
    again = irkit.print_op(irkit.parse_module(generic, "<generic>"), generic=True)
    print("--- generic form (first lines) ---")
    print("\n".join(generic.splitlines()[:4]))
    print(f"generic print -> parse -> print is a fixpoint: {generic == again}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "examples/softmax.mlir"))
