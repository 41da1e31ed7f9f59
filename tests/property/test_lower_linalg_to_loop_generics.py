"""lower-linalg-to-loop on random `linalg.generic` ops over memrefs: the interpreter before
(linalg's semantics) and after (the loop nest) leave every buffer with the same bits, with
and without `loop.parallel`; a sample is also compiled by the LLVM backend.

Generated ops: 0 to 4 loops, each parallel or reduction, of sizes 0 to 3, each operand axis
static or `?`; input maps are projections of the loops in any order (a 0-d input included),
output maps every parallel loop and some reduction loops in any order (so that no two
parallel points write one element, which would leave the result undefined); bodies of
`add`, `mul` and `max` (float or integer) over the arguments and `linalg.index` values,
each output yielding one of them or one folded into its own element.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tests.unit.test_lower_linalg_to_loop import lower, run, same_bits
from irkit.parser import parse_module

_OPS = {"f32": ("arith.addf", "arith.mulf", "arith.maximumf"),
        "i32": ("arith.addi", "arith.muli", "arith.maxsi")}


def _memref(shape, dynamic, element: str) -> str:
    dims = ["?" if dyn else str(n) for n, dyn in zip(shape, dynamic)]
    return f"memref<{'x'.join(dims + [element])}>"


@st.composite
def generics(draw):
    """(source of @f, its argument arrays)."""
    n = draw(st.integers(0, 4))
    iterators = draw(st.lists(st.sampled_from(["parallel", "reduction"]), min_size=n,
                              max_size=n))
    par = [d for d in range(n) if iterators[d] == "parallel"]
    red = [d for d in range(n) if iterators[d] == "reduction"]
    sizes = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    element = draw(st.sampled_from(sorted(_OPS)))
    n_in, n_out = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    ins = [draw(st.permutations(draw(st.lists(st.sampled_from(range(n)), unique=True))))
           if n else [] for _ in range(n_in)]
    missing = [d for d in red if not any(d in m for m in ins)]
    ins[0] = list(ins[0]) + missing             # every loop's range comes from some operand
    outs = [draw(st.permutations(par + (draw(st.lists(st.sampled_from(red), unique=True))
                                        if red else []))) for _ in range(n_out)]
    maps = [list(m) for m in ins + outs]
    dynamic = [draw(st.lists(st.booleans(), min_size=len(m), max_size=len(m))) for m in maps]
    types = [_memref([sizes[d] for d in m], dyn, element) for m, dyn in zip(maps, dynamic)]

    args = [f"%a{i}" for i in range(len(maps))]
    bb = [f"%x{i}" for i in range(len(maps))]
    values, body = list(bb), []
    for d in draw(st.lists(st.sampled_from(range(n)), max_size=2)) if n else []:
        k = len(body)
        body.append(f"%k{k} = linalg.index {d} : index")
        body.append(f"%i{k} = arith.index_cast %k{k} : index to i32")
        if element == "f32":
            body.append(f"%f{k} = arith.sitofp %i{k} : i32 to f32")
            values.append(f"%f{k}")
        else:
            values.append(f"%i{k}")
    for j in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(_OPS[element]))
        a, b = draw(st.sampled_from(values)), draw(st.sampled_from(values))
        body.append(f"%v{j} = {op} {a}, {b} : {element}")
        values.append(f"%v{j}")
    yields = []
    for k in range(n_out):
        v = draw(st.sampled_from(values))
        if draw(st.booleans()):                 # folded into the output's element
            acc = bb[n_in + k]
            a, b = (acc, v) if draw(st.booleans()) else (v, acc)
            body.append(f"%y{k} = {draw(st.sampled_from(_OPS[element]))} {a}, {b} : {element}")
            v = f"%y{k}"
        yields.append(v)

    def affine(m):
        return f"affine_map<({', '.join(f'd{d}' for d in range(n))}) -> " \
               f"({', '.join(f'd{d}' for d in m)})>"

    src = f"""
func.func @f({', '.join(f'{a}: {t}' for a, t in zip(args, types))}) {{
  linalg.generic {{indexing_maps = [{', '.join(affine(m) for m in maps)}],
                  iterator_types = [{', '.join(f'"{it}"' for it in iterators)}]}}
      ins({', '.join(args[:n_in])} : {', '.join(types[:n_in])})
      outs({', '.join(args[n_in:])} : {', '.join(types[n_in:])}) {{
  ^bb0({', '.join(f'{x}: {element}' for x in bb)}):
    {chr(10).join('    ' + line for line in body).strip()}
    linalg.yield {', '.join(yields)} : {', '.join([element] * n_out)}
  }}
  return
}}"""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    arrays = []
    for m in maps:
        shape = tuple(sizes[d] for d in m)
        if element == "f32":
            arrays.append(rng.normal(size=shape).astype(np.float32))
        else:
            arrays.append(rng.integers(-9, 10, size=shape).astype(np.int32))
    return src, arrays


@settings(max_examples=300, deadline=None)
@given(generics(), st.booleans())
def test_random_generic_keeps_the_interpreters_bits(case, parallel):
    src, arrays = case
    want = run(parse_module(src), "f", arrays)
    got = run(lower(src, parallel=parallel), "f", arrays)
    for i, (g, w) in enumerate(zip(got, want)):
        same_bits(g, w, f"argument #{i} of\n{src}")


@settings(max_examples=40, deadline=None)
@given(generics())
def test_random_generic_compiles_to_the_interpreters_bits(case):
    """The LLVM backend runs the loops as the interpreter does (no flag lets it contract or
    reassociate), so even float results agree to the bit."""
    pytest.importorskip("llvmlite")
    from irkit.backends.llvm_cpu import compile_module
    src, arrays = case
    lowered = lower(src)
    want = run(lowered, "f", arrays)
    got = [a.copy() for a in arrays]
    compile_module(lowered).f(*got)
    for i, (g, w) in enumerate(zip(got, want)):
        same_bits(g, w, f"argument #{i} of\n{lowered}")
