// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// The gpu dialect's verifier, one rule a chunk: ids, barriers and dynamic shared memory only
// inside kernels, x/y/z dimensions, attributions in their address spaces, and launch_func
// against the kernel it names.

func.func @thread_id_on_host() -> index {
  // expected-error @+1 {{'gpu.thread_id' op must be inside a 'gpu.launch' or a 'gpu.func'}}
  %t = gpu.thread_id x
  return %t : index
}

// -----

func.func @barrier_on_host() {
  // expected-error @+1 {{'gpu.barrier' op must be inside a 'gpu.launch' or a 'gpu.func'}}
  gpu.barrier
  return
}

// -----

gpu.module @m {
  gpu.func @k() kernel {
    // expected-error @+1 {{attribute 'dimension'}}
    %t = "gpu.block_id"() <{dimension = #gpu<dim w>}> : () -> index
    gpu.return
  }
}

// -----

gpu.module @m {
  gpu.func @k() kernel {
    // expected-error @+1 {{expected a dimension (x, y or z), got 'w'}}
    %t = gpu.thread_id w
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{expected workgroup attribution to be a memref in address space #gpu.address_space<workgroup>, got memref<4xf32>}}
  gpu.func @k() workgroup(%w : memref<4xf32>) kernel {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{expected private attribution to have a static shape and the identity layout}}
  gpu.func @k(%n: index) private(%p : memref<?xf32, #gpu.address_space<private>>) kernel {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{expected void return type for kernel function}}
  gpu.func @k(%x: f32) -> f32 kernel {
    gpu.return %x : f32
  }
}

// -----

func.func @k() {
  // expected-error @+1 {{'gpu.func' op expects parent op 'gpu.module'}}
  "gpu.func"() <{function_type = () -> ()}> ({
    "gpu.return"() : () -> ()
  }) {gpu.kernel, sym_name = "k", workgroup_attributions = 0 : i64} : () -> ()
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{'gpu.launch_func' op expected the closest surrounding module to have the 'gpu.container_module' attribute}}
  gpu.launch_func @m::@k blocks in (%n, %n, %n) threads in (%n, %n, %n)
  return
}
gpu.module @m {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @f(%n: index) {
    // expected-error @+1 {{kernel function '@m::@missing' is undefined}}
    gpu.launch_func @m::@missing blocks in (%n, %n, %n) threads in (%n, %n, %n)
    return
  }
  gpu.module @m {
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @f(%n: index) {
    // expected-error @+1 {{kernel function is missing the 'gpu.kernel' attribute}}
    gpu.launch_func @m::@helper blocks in (%n, %n, %n) threads in (%n, %n, %n)
    return
  }
  gpu.module @m {
    gpu.func @helper() {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @f(%n: index) {
    // expected-error @+1 {{got 0 kernel operands but expected 1}}
    gpu.launch_func @m::@k blocks in (%n, %n, %n) threads in (%n, %n, %n)
    return
  }
  gpu.module @m {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @f(%n: index, %b: memref<8xf32>) {
    // expected-error @+1 {{type of function argument 0 does not match: kernel operand is memref<8xf32>, the kernel takes memref<4xf32>}}
    gpu.launch_func @m::@k blocks in (%n, %n, %n) threads in (%n, %n, %n) args(%b : memref<8xf32>)
    return
  }
  gpu.module @m {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

func.func @launch_without_ids(%n: index) {
  // expected-error @+1 {{expects the body to start with 12 index arguments}}
  "gpu.launch"(%n, %n, %n, %n, %n, %n) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%a: index):
    "gpu.terminator"() : () -> ()
  }) {workgroup_attributions = 0 : i64} : (index, index, index, index, index, index) -> ()
  return
}

// -----

gpu.module @m {
  gpu.func @k() kernel {
    // expected-error @+1 {{expects a result of type memref<?xi8, #gpu.address_space<workgroup>>, got memref<?xi8>}}
    %s = gpu.dynamic_shared_memory : memref<?xi8>
    gpu.return
  }
}

// -----

func.func @copy(%a: memref<4xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'gpu.memcpy' op arguments have incompatible shape}}
  gpu.memcpy %a, %b : memref<4xf32>, memref<8xf32>
  return
}
