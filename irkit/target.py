"""What the loop transformations need to know about the CPU they compile for.

A target here is a small description, not a code generator (tinygrad's renderers declare
vector width and registers the same way): the width of a vector register in bits and how
many there are. The vectorizer sizes its vectors from it (`lanes`: 16 f32 in a 512-bit
register, 8 in a 256-bit one), and a register-blocking schedule may size its tiles from the
register count.

It lives in the core, below the passes, because a pass must be able to read it without
importing a backend (layering: passes are below backends). `host()` reads the features LLVM
detects on this machine (llvmlite's `get_host_cpu_features`, the same detection the CPU
backend builds its target machine from), so code vectorized for the host and code compiled
for it agree on which registers exist. `from_features` makes one from any feature set, for
a `--cpu` other than the host's.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """A CPU's vector registers: `vector_bits` wide, `vector_registers` of them."""

    name: str
    vector_bits: int
    vector_registers: int

    def lanes(self, element_bytes: int) -> int:
        """How many elements of `element_bytes` bytes fill one vector register (at least 1)."""
        return max(1, self.vector_bits // (8 * element_bytes))


#: (feature, bits, registers), widest first: the first feature a CPU has decides
_VECTOR_ISAS = (
    ("avx512f", 512, 32),
    ("avx", 256, 16),
    ("neon", 128, 32),
    ("sse2", 128, 16),
)
#: a CPU without any of them: scalar code, one lane
SCALAR = Target("scalar", 0, 0)


def from_features(name: str, features: dict[str, bool]) -> Target:
    """The target of a CPU with `features` (LLVM's names: `avx512f`, `avx`, `neon`, ...)."""
    for feature, bits, registers in _VECTOR_ISAS:
        if features.get(feature):
            return Target(name, bits, registers)
    return SCALAR


@functools.cache
def host() -> Target:
    """This machine's target, as LLVM detects it."""
    import llvmlite.binding as llvm
    return from_features(llvm.get_host_cpu_name(), dict(llvm.get_host_cpu_features()))
