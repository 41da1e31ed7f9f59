"""The parts of linalg-matmul-blis (passes/linalg_matmul_blis.py): `contraction` matches a
structured op as a contraction over batch, M, N and K groups of loop dims and rewrites its
temporary accumulator; `epilogue` finds the elementwise members of its fusion.group that
can run at the micro-kernel's final store and emits them there; `nest` builds the blocked,
packed, register-blocked loop nest."""
