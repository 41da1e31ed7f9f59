"""The `gpu` dialect's home: the dialect object, the dimension attribute (`#gpu<dim x>`), the
address spaces (`#gpu.address_space<workgroup>`, `<private>`), and the attribution lists that
`gpu.launch` and `gpu.func` share (their custom syntax and their verification).

An attribution is memory a kernel declares rather than receives: a `workgroup` attribution is
one buffer per block, shared by the block's threads (CUDA's `__shared__`, NVVM address space
3); a `private` attribution is one buffer per thread (NVVM address space 5). They are entry
block arguments after the op's own (the 12 ids of a launch, the arguments of a function):
first the workgroup ones, counted by the `workgroup_attributions` attribute, then the private
ones, to the end of the list, as MLIR lays them out.
"""

from __future__ import annotations

from irkit.attributes import IntegerAttr, OpaqueAttr
from irkit.ir import Operation
from irkit.opdef import Dialect, attr_constraint
from irkit.types import I64, MemRefType

gpu = Dialect("gpu", "GPU kernels, launches over grids of blocks and threads, shared memory.")

#: the three dimensions of a grid or a block, in the order launches list them
DIMS = ("x", "y", "z")

#: memory shared by the threads of a block, and memory of one thread
WORKGROUP = OpaqueAttr("gpu.address_space<workgroup>")
PRIVATE = OpaqueAttr("gpu.address_space<private>")

#: the attribute that counts a launch's or a function's workgroup attributions
WORKGROUP_COUNT = "workgroup_attributions"

DimAttr = attr_constraint(OpaqueAttr, "GPU dimension (#gpu<dim x>, y or z)",
                          lambda a: a.body in {f"gpu<dim {d}>" for d in DIMS})


def dim_attr(dim: str) -> OpaqueAttr:
    """`#gpu<dim x>` for `dim` = "x" (or "y", "z")."""
    return OpaqueAttr(f"gpu<dim {dim}>")


def dim_index(attr: OpaqueAttr) -> int:
    """0, 1 or 2 for `#gpu<dim x>`, `y`, `z`."""
    return DIMS.index(attr.body[len("gpu<dim "):-1])


def in_address_space(t, space: OpaqueAttr) -> bool:
    return isinstance(t, MemRefType) and t.memory_space == space


# ---------------------------------------------------------------------------------------------
# Attributions: counting, verifying, parsing, printing
# ---------------------------------------------------------------------------------------------


def workgroup_count(op: Operation) -> int:
    a = op.attributes.get(WORKGROUP_COUNT)
    return a.value if isinstance(a, IntegerAttr) else 0


def set_workgroup_count(op: Operation, n: int) -> None:
    op.attributes[WORKGROUP_COUNT] = IntegerAttr(n, I64)


def attributions(op: Operation, leading: int) -> tuple[list, list]:
    """(workgroup, private) block arguments of `op`'s body after its `leading` own ones."""
    args = op.regions[0].blocks[0].args[leading:] if op.regions[0].blocks else []
    n = workgroup_count(op)
    return list(args[:n]), list(args[n:])


def verify_attributions(op, leading: int) -> None:
    """The body has at least `leading` arguments, then workgroup buffers in the workgroup
    address space, then private ones in the private space, each of a static shape."""
    block = op.regions[0].blocks[0]
    n = workgroup_count(op)
    if n < 0 or leading + n > len(block.args):
        raise op.error(f"expects at least {leading + max(n, 0)} body arguments ({leading} and "
                       f"{n} workgroup attributions), got {len(block.args)}")
    workgroup, private = attributions(op, leading)
    for kind, values, space in (("workgroup", workgroup, WORKGROUP),
                                ("private", private, PRIVATE)):
        for v in values:
            if not in_address_space(v.type, space):
                raise op.error(f"expected {kind} attribution to be a memref in address space "
                               f"{space}, got {v.type}")
            if None in v.type.shape or v.type.layout is not None:
                raise op.error(f"expected {kind} attribution to have a static shape and the "
                               f"identity layout, got {v.type}")


def parse_attributions(p, keyword: str) -> list:
    """`keyword(%a : T, ...)` when present: (name, type, loc, token) entries for the body."""
    return p.parse_region_arguments() if p.accept(keyword) else []


def print_attributions(p, keyword: str, values) -> None:
    if values:
        items = ", ".join(f"{p.value(v)} : {v.type}" for v in values)
        p.write(f" {keyword}({items})")
