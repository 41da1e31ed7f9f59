"""gpu-kernel-outlining: each `gpu.launch` body becomes a kernel function in a `gpu.module`,
launched by symbol (MLIR's pass of the same name).

A kernel is compiled apart from the host code, so the body of an inline launch moves into a
`gpu.func ... kernel` whose arguments are what the body used from above, and the launch
becomes `gpu.launch_func` with those values as its operands. Constants are cloned into the
kernel instead (as MLIR sinks them): a kernel argument per constant would cost a parameter
and hide the value from the device compiler. The launch's block and thread ids and sizes
become `gpu.block_id`, `gpu.thread_id`, `gpu.grid_dim` and `gpu.block_dim`; its workgroup and
private attributions become the kernel's.

One `gpu.module @kernels` per module of functions (a model's module) holds every kernel of
its functions -- one PTX module per model for a backend to load -- named
`@<function>_kernel_<k>` in launch order; the module gets `gpu.container_module`, which MLIR
asks of a module that launches kernels by symbol.
"""

from __future__ import annotations

from irkit.ad_rules import captured_values
from irkit.attributes import SymbolRefAttr, UnitAttr
from irkit.builder import Builder
from irkit.ir import Operation
from irkit.opdef import ConstantLike, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.symbols import symbol_name
from irkit.dialects.func import FuncOp
from irkit.dialects.gpu import (
    CONTAINER_MODULE, DIMS, BlockDimOp, BlockIdOp, GPUFuncOp, GPUModuleOp, GridDimOp,
    LaunchFuncOp, LaunchOp, ReturnOp, TerminatorOp, ThreadIdOp, attributions,
    set_workgroup_count,
)
from irkit.dialects.gpu.launch import NUM_IDS

#: the ops a launch's twelve id arguments become, in the order of the arguments
_ID_OPS = (BlockIdOp, ThreadIdOp, GridDimOp, BlockDimOp)
KERNEL_MODULE = "kernels"


@register_pass
class GpuKernelOutlining(Pass):
    """Outline every `gpu.launch` into a kernel of its module's `gpu.module @kernels`.

    Algorithm:
      1. For each function, in order, each `gpu.launch` in it (its `k`-th): collect the
         values its body uses from above, in first-use order; constants among them are
         cloned into the body, the others are the kernel's arguments.
      2. Create `gpu.func @<function>_kernel_<k>(arguments) kernel` in the `gpu.module`
         of the function's module (created on first need, the module marked
         `gpu.container_module`), with the launch's attributions after its arguments.
      3. Move the body in: each id argument that is used becomes the matching id op at the
         kernel's top, each captured value the kernel's argument, `gpu.terminator`
         becomes `gpu.return`.
      4. Replace the launch with `gpu.launch_func` of the same grid, block and dynamic
         shared memory size, passing the arguments.
    """

    name = "gpu-kernel-outlining"

    def run(self, root: Operation) -> None:
        for fn in [o for o in root.walk() if isinstance(o, FuncOp)]:
            launches = [o for o in fn.walk() if isinstance(o, LaunchOp)]
            for launch in launches:
                _outline(launch, _kernel_module(fn), f"{symbol_name(fn)}_kernel")


def _kernel_module(fn: FuncOp) -> GPUModuleOp:
    """The `gpu.module @kernels` of the module holding `fn`, created on first need."""
    module = fn.parent_op
    block = module.regions[0].blocks[0]
    found = next((o for o in block.ops if isinstance(o, GPUModuleOp)
                  and o.sym_name.value == KERNEL_MODULE), None)
    if found is None:
        found = GPUModuleOp.create(KERNEL_MODULE, location=module.location)
        block.append(found)
        module.attributes[CONTAINER_MODULE] = UnitAttr()
    return found


def _unique_name(kernels: GPUModuleOp, prefix: str) -> str:
    taken = {symbol_name(o) for o in kernels.block.ops}
    k = 0
    while f"{prefix}_{k}" in taken:
        k += 1
    return f"{prefix}_{k}"


def _outline(launch: LaunchOp, kernels: GPUModuleOp, prefix: str) -> None:
    captured = captured_values(launch)
    constants = [v for v in captured if v.defining_op() is not None
                 and has_trait(v.defining_op(), ConstantLike) and not v.owner.operands]
    args = [v for v in captured if v not in constants]
    kernel = GPUFuncOp.create(_unique_name(kernels, prefix), [v.type for v in args],
                              location=launch.location)
    kernels.block.append(kernel)
    entry = kernel.body.blocks[0]
    workgroup, private = attributions(launch, NUM_IDS)
    for v in workgroup + private:
        v.replace_all_uses_with(entry.add_argument(v.type, v.location))
    set_workgroup_count(kernel, len(workgroup))
    body = launch.body.blocks[0]
    b = Builder.at_end(entry)
    for k, arg in enumerate(launch.ids):
        if arg.has_uses():
            op = _ID_OPS[k // 3].create(DIMS[k % 3], location=launch.location)
            arg.replace_all_uses_with(b.insert(op).result)
    def inside(use) -> bool:            # a use in the body (not the launch's own sizes)
        return use.owner is not launch and launch.is_ancestor_of(use.owner)

    for v in constants:
        v.replace_uses_if(b.insert(v.defining_op().clone()).results[0], inside)
    for v, a in zip(args, kernel.args):
        v.replace_uses_if(a, inside)
    for op in list(body.ops):
        if isinstance(op, TerminatorOp):
            b.create(ReturnOp, [], result_types=[], location=op.location)
            op.erase()
        else:
            entry.append(op.detach())
    call = LaunchFuncOp.create(
        SymbolRefAttr(symbol_name(kernels), [symbol_name(kernel)]), launch.grid_sizes,
        launch.block_sizes, args, launch.dynamic_shared_memory_size, location=launch.location)
    launch.parent.insert_before(launch, call)
    launch.erase()

