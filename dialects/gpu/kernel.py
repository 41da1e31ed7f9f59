"""Outlined kernels: `gpu.module` (a symbol table of device functions), `gpu.func` (a device
function; a kernel with the `gpu.kernel` unit attribute), `gpu.return`, and `gpu.launch_func`
(the host's launch of a kernel by symbol over a grid).

    gpu.module @kernels {
      gpu.func @scale(%a: memref<?xf32>, %n: index) kernel {
        gpu.return
      }
    }
    gpu.launch_func @kernels::@scale blocks in (%g, %c1, %c1) threads in (%b, %c1, %c1)
        args(%a : memref<?xf32>, %n : index)

As in MLIR 22's generic form, `gpu.func` keeps `sym_name`, `gpu.kernel` and
`workgroup_attributions` in its attribute dictionary (only `function_type`, `arg_attrs` and
`res_attrs` are properties), and `gpu.launch_func` has thirteen operand groups (async
dependencies, grid x y z, block x y z, cluster x y z, dynamic shared memory size, kernel
operands, async object). MLIR wants a `gpu.launch_func`'s closest enclosing `builtin.module`
to carry the unit attribute `gpu.container_module`; the verifier here asks the same.
"""

from __future__ import annotations

from irkit.attributes import StringAttr, SymbolRefAttr, TypeAttr, UnitAttr, format_symbol
from irkit.ir import Block, Value
from irkit.opdef import (
    AnyType, ArrayAttrC, FunctionTypeAttr, HasParent, IsolatedFromAbove, NoTerminator, Op,
    OptOperand, OptProp, Prop, RegionDef, ReturnLike, SingleBlock, Symbol, SymbolNameAttr,
    SymbolRef, SymbolTable, Terminator, VarOperand,
)
from irkit.symbols import lookup_symbol, symbol_name
from irkit.types import I32, INDEX, FunctionType
from irkit.dialects.gpu.base import (
    WORKGROUP_COUNT, attributions, gpu, parse_attributions, print_attributions,
    set_workgroup_count, verify_attributions,
)
from irkit.dialects.gpu.grid import run_grid
from irkit.dialects.gpu.launch import GridLaunch

#: the unit attribute that marks a `gpu.func` as a kernel, and the module attribute MLIR
#: asks of a module whose functions launch kernels by symbol
KERNEL_ATTR = "gpu.kernel"
CONTAINER_MODULE = "gpu.container_module"


@gpu.op
class GPUModuleOp(Op):
    """A symbol table of device functions, compiled for the GPU as one unit.

        gpu.module @kernels {
          gpu.func @k() kernel {
            gpu.return
          }
        }
    """

    name = "gpu.module"
    sym_name = Prop(SymbolNameAttr)
    body = RegionDef(single_block=True)
    traits = (IsolatedFromAbove(), NoTerminator(), SymbolTable(), Symbol(), SingleBlock())

    @classmethod
    def create(cls, name: str, location=None) -> "GPUModuleOp":
        op = cls.build(result_types=[], sym_name=StringAttr(name), location=location)
        op.body.add_block()
        return op

    @property
    def block(self) -> Block:
        return self.body.blocks[0]

    @classmethod
    def parse(cls, p, num_results):
        name = p.parse_symbol_name()
        attrs = p.parse_attr_dict_body() if p.accept("attributes") else {}
        region = p.parse_region()
        if not region.blocks:
            region.add_block()
        return cls.build(result_types=[], attributes=attrs, regions=[region],
                         sym_name=StringAttr(name))

    def print(self, p):
        p.write(" " + format_symbol(self.sym_name.value))
        p.attr_dict(self, elided=("sym_name",), keyword=True)
        p.write(" ")
        p.region(self.body, print_entry_args=False)


@gpu.op
class GPUFuncOp(Op):
    """A device function; with `kernel`, one the host launches (`gpu.launch_func`). Its
    entry block has one argument per input, then its workgroup and private attributions.

        gpu.func @k(%a: memref<?xf32>)
            workgroup(%w : memref<32xf32, #gpu.address_space<workgroup>>) kernel {
          gpu.return
        }
    """

    name = "gpu.func"
    function_type = Prop(FunctionTypeAttr)
    arg_attrs = OptProp(ArrayAttrC)
    res_attrs = OptProp(ArrayAttrC)
    body = RegionDef(single_block=True)
    traits = (IsolatedFromAbove(), HasParent("gpu.module"), SingleBlock())

    @classmethod
    def create(cls, name: str, inputs, kernel: bool = True, location=None) -> "GPUFuncOp":
        """A function with an entry block of `inputs` (no results, no attributions)."""
        attrs = {"sym_name": StringAttr(name)}
        if kernel:
            attrs[KERNEL_ATTR] = UnitAttr()
        op = cls.build(result_types=[], attributes=attrs, location=location,
                       function_type=TypeAttr(FunctionType(inputs, [])))
        set_workgroup_count(op, 0)
        op.body.add_block(Block(inputs))
        return op

    @property
    def type(self) -> FunctionType:
        return self.function_type.value

    @property
    def is_kernel(self) -> bool:
        return KERNEL_ATTR in self.attributes

    @property
    def args(self) -> list:
        """The arguments a caller passes (the attributions follow them)."""
        return self.body.blocks[0].args[:len(self.type.inputs)]

    def verify_(self):
        if not isinstance(self.attributes.get("sym_name"), StringAttr):
            raise self.error("requires string attribute 'sym_name'")
        ftype = self.type
        if self.is_kernel and ftype.results:
            raise self.error("expected void return type for kernel function")
        if not self.body.blocks:
            raise self.error("expects a body (device functions are defined here)")
        args = self.body.blocks[0].args
        if len(args) < len(ftype.inputs):
            raise self.error(f"expected at least {len(ftype.inputs)} arguments to body region")
        for i, (a, t) in enumerate(zip(args, ftype.inputs)):
            if a.type is not t:
                raise self.error(f"expected body region argument #{i} to be of type {t}, got "
                                 f"{a.type}")
        verify_attributions(self, len(ftype.inputs))

    # ----- custom assembly ----------------------------------------------------------------

    @classmethod
    def parse(cls, p, num_results):
        name = p.parse_symbol_name()
        args = p.parse_region_arguments()
        results = p.parse_function_result_types() if p.accept("->") else []
        workgroup = parse_attributions(p, "workgroup")
        private = parse_attributions(p, "private")
        attrs = {"sym_name": StringAttr(name)}
        if p.accept("kernel"):
            attrs[KERNEL_ATTR] = UnitAttr()
        if p.accept("attributes"):
            attrs.update(p.parse_attr_dict_body())
        region = p.parse_region(args + workgroup + private, isolated=True)
        ftype = FunctionType([a[1] for a in args], results)
        props = {k: attrs.pop(k) for k in list(attrs) if k in cls.spec.prop_names}
        op = cls.build(result_types=[], attributes=attrs, regions=[region],
                       function_type=TypeAttr(ftype), **props)
        set_workgroup_count(op, len(workgroup))
        return op

    def print(self, p):
        ftype = self.type
        p.write(f" {format_symbol(symbol_name(self))}(")
        p.write(", ".join(f"{p.value(a)}: {a.type}" for a in self.args) + ")")
        if ftype.results:
            results = ", ".join(map(str, ftype.results))
            p.write(f" -> {results}" if len(ftype.results) == 1 else f" -> ({results})")
        workgroup, private = attributions(self, len(ftype.inputs))
        print_attributions(p, "workgroup", workgroup)
        print_attributions(p, "private", private)
        if self.is_kernel:
            p.write(" kernel")
        p.attr_dict(self, elided=("sym_name", "function_type", KERNEL_ATTR, WORKGROUP_COUNT),
                    keyword=True)
        p.write(" ")
        p.region(self.body, print_entry_args=False)


@gpu.op
class ReturnOp(Op):
    """Ends a `gpu.func`, returning its results (none for a kernel).

        gpu.return
    """

    name = "gpu.return"
    operands_ = VarOperand(AnyType)
    traits = (Terminator(), ReturnLike(), HasParent("gpu.func"))

    def infer_result_types(self):
        return []

    def verify_(self):
        results = self.parent_op.type.results
        if [v.type for v in self.operands] != list(results):
            raise self.error(f"returns {[str(v.type) for v in self.operands]}, but the "
                             f"function's results are {[str(t) for t in results]}")

    @classmethod
    def parse(cls, p, num_results):
        from irkit.structured import parse_optional_values_with_types
        return cls.build(parse_optional_values_with_types(p), result_types=[])

    def print(self, p):
        p.operands_with_types(self.operands)

    def interpret(self, interp, values):
        from irkit.interpreter import Return
        return Return(values)


@gpu.op
class LaunchFuncOp(GridLaunch):
    """Launches the kernel `@module::@func` over a grid: `blocks in` the grid sizes,
    `threads in` the block sizes, `args` its arguments.

        gpu.launch_func @kernels::@k blocks in (%g, %c1, %c1) threads in (%b, %c1, %c1)
            args(%a : memref<?xf32>)
    """

    name = "gpu.launch_func"
    kernel = Prop(SymbolRef)
    kernel_operands = VarOperand(AnyType)
    async_object = OptOperand(AnyType)

    @classmethod
    def create(cls, kernel: SymbolRefAttr, grid: list[Value], block: list[Value],
               args: list[Value], dynamic_shared_memory_size: Value | None = None,
               location=None) -> "LaunchFuncOp":
        return cls.build([], *grid, *block, None, None, None, dynamic_shared_memory_size,
                         list(args), None, result_types=[], kernel=kernel, location=location)

    def kernel_func(self) -> GPUFuncOp | None:
        return lookup_symbol(self, self.kernel)

    def verify_(self):
        self.verify_grid()
        if self.async_object is not None:
            raise self.error("async objects are not supported")
        module = next((a for a in self.ancestors() if a.name == "builtin.module"), None)
        if module is None or CONTAINER_MODULE not in module.attributes:
            raise self.error(f"expected the closest surrounding module to have the "
                             f"'{CONTAINER_MODULE}' attribute")
        if not self.kernel.nested:
            raise self.error(f"expected a nested reference @module::@kernel, got {self.kernel}")
        if not isinstance(lookup_symbol(self, SymbolRefAttr(self.kernel.root)), GPUModuleOp):
            raise self.error(f"kernel module '{self.kernel.root}' is undefined")
        fn = self.kernel_func()
        if not isinstance(fn, GPUFuncOp):
            raise self.error(f"kernel function '{self.kernel}' is undefined")
        if not fn.is_kernel:
            raise self.error(f"kernel function is missing the '{KERNEL_ATTR}' attribute")
        args, inputs = self.kernel_operands, fn.type.inputs
        if len(args) != len(inputs):
            raise self.error(f"got {len(args)} kernel operands but expected {len(inputs)}")
        for i, (v, t) in enumerate(zip(args, inputs)):
            if v.type is not t:
                raise self.error(f"type of function argument {i} does not match: kernel "
                                 f"operand is {v.type}, the kernel takes {t}")

    # ----- custom assembly ----------------------------------------------------------------

    @classmethod
    def parse(cls, p, num_results):
        tk = p.i
        kernel = p.parse_attribute()
        if not isinstance(kernel, SymbolRefAttr):
            raise p.error("expected a kernel symbol (@module::@kernel)", tk)
        p.expect("blocks")
        grid = _parse_sizes(p)
        p.expect("threads")
        block = _parse_sizes(p)
        dynamic = None
        if p.accept("dynamic_shared_memory_size"):
            dynamic = p.resolve(p.parse_operand_ref(), I32)
        args = []
        if p.accept("args"):
            p.expect("(")
            while p.tok != ")":
                ref = p.parse_operand_ref()
                p.expect(":")
                args.append(p.resolve(ref, p.parse_type()))
                if not p.accept(","):
                    break
            p.expect(")")
        op = cls.create(kernel, grid, block, args, dynamic)
        op.attributes.update(p.parse_optional_attr_dict())
        return op

    def print(self, p):
        p.write(f" {self.kernel} blocks in ({', '.join(map(p.value, self.grid_sizes))}) "
                f"threads in ({', '.join(map(p.value, self.block_sizes))})")
        self.print_dynamic_shared_memory(p)
        if self.kernel_operands:
            args = ", ".join(f"{p.value(v)} : {v.type}" for v in self.kernel_operands)
            p.write(f" args({args})")
        p.attr_dict(self, elided=("kernel", "operandSegmentSizes"))

    # ----- semantics ----------------------------------------------------------------------

    def interpret(self, interp, values):
        grid, block, size = self.launch_sizes(values)
        args = values[len(values) - len(self.kernel_operands):]
        fn = self.kernel_func()
        run_grid(interp, self, fn, len(fn.type.inputs), grid, block, lambda t: list(args),
                 None, size)
        return []


def _parse_sizes(p) -> list[Value]:
    """`in (%x, %y, %z)`: three index operands."""
    p.expect("in")
    p.expect("(")
    refs = p.parse_operand_refs()
    p.expect(")")
    if len(refs) != 3:
        raise p.error(f"expected 3 sizes (x, y, z), found {len(refs)}")
    return [p.resolve(r, INDEX) for r in refs]
