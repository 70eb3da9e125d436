// The ops of the mdlrt dialect.
#ifndef MODELC_DIALECTS_MDLRT_MDLRTOPS_TD
#define MODELC_DIALECTS_MDLRT_MDLRTOPS_TD

include "MdlrtDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Mdlrt_BufferOp : Mdlrt_Op<"buffer", [Pure]> {
  let summary = "the memory of a persistent buffer or parameter";
  let description = [{
    The memref holding the `mdl.buffer` or `mdl.param` named `name`, whose
    tensor type has the memref's shape and element type. Every use in every
    function denotes the same memory.

    ```mlir
    %w = mdlrt.buffer @"fc1.weight" : memref<256x784xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Mdlrt_LaunchConstantOp : Mdlrt_Op<"launch_constant", [Pure]> {
  let summary = "a constant that kernels take as an argument";
  let description = [{
    An i64 constant that, unlike `arith.constant`, --mdl-outline-kernels
    does not copy into the kernels that use it: each takes it as an i64
    argument, so that kernels differing only in it (the salts of a model's
    dropout sites) are one kernel (docs/codegen/kernels.md). It has no
    folder, so canonicalization neither folds it into its users nor merges
    it with an `arith.constant` of the same value; outside kernels the CPU
    lowering turns it into one.

    ```mlir
    %salt = mdlrt.launch_constant 7046029254386353131
    ```
  }];
  let arguments = (ins I64Attr:$value);
  let results = (outs I64:$result);
  let assemblyFormat = "$value attr-dict";
}

// A matrix or a batch of matrices with unit innermost stride (any other
// strides): what a row-major BLAS call can address with a leading dimension
// and a batch stride.
def Mdlrt_GemmOperand : MemRefRankOf<[F32, F64, BF16, F16], [2, 3]>;

def Mdlrt_GemmOp : Mdlrt_Op<"gemm"> {
  let summary = "C = alpha * op(A) * op(B) + beta * C, batched, row-major";
  let description = [{
    A matrix product that the target turns into a library call (OpenBLAS on
    the CPU). op(X) is X, or X transposed when `transpose_x` is set; op(A)
    is M x K, op(B) is K x N and C is M x N. When C has rank 3 its leading
    dimension is the batch: a rank-3 A or B has the same batch size, a
    rank-2 one is used for every batch. The innermost stride of each
    operand must be 1; the row and batch strides can be anything. With
    `beta = 0` the old contents of C are not read (as in BLAS).

    A and B have one element type. C has it too, or is f32 when A and B are
    bf16 or f16: their exact values multiplied and accumulated in f32 (the
    tensor-core contract; cuBLASLt's 16-bit A/B with f32 C and compute).

    ```mlir
    mdlrt.gemm %x, %w, %y alpha = 1.000000e+00 beta = 0.000000e+00 transpose_b
        : memref<128x784xf32>, memref<256x784xf32>, memref<128x256xf32>
    mdlrt.gemm %x, %w, %y alpha = 1.000000e+00 beta = 0.000000e+00 transpose_b
        : memref<128x784xbf16>, memref<256x784xbf16>, memref<128x256xf32>
    ```
  }];
  let arguments = (ins Arg<Mdlrt_GemmOperand, "A", [MemRead]>:$a,
                       Arg<Mdlrt_GemmOperand, "B", [MemRead]>:$b,
                       Arg<Mdlrt_GemmOperand, "C", [MemRead, MemWrite]>:$c,
                       F64Attr:$alpha, F64Attr:$beta,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let assemblyFormat = [{
    $a `,` $b `,` $c `alpha` `=` $alpha `beta` `=` $beta
    (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)? attr-dict
    `:` type($a) `,` type($b) `,` type($c)
  }];
  let hasVerifier = 1;
}

def Mdlrt_AllReduceOp : Mdlrt_Op<"all_reduce"> {
  let summary = "one bucket of gradients averaged over the data-parallel ranks";
  let description = [{
    The lowering of `mdl.all_reduce` (docs/passes/data-parallel.md): on the
    last micro-batch of an optimizer step each buffer becomes its mean over
    the ranks; on the other micro-batches, and with one rank, nothing
    changes. The buffers travel together as one collective (a bucket); they
    have one element type, f32 or f64. `bucket` numbers the buckets of a function
    in the order they are issued. The rank count and the micro-batch are
    the runtime's: the CPU calls modelc_all_reduce_* (ProgramABI.h), the GPU
    program has an AllReduce step.

    ```mlir
    mdlrt.all_reduce %b, %w bucket 0 : memref<10xf32>, memref<10x256xf32>
    ```
  }];
  let arguments = (ins Arg<Variadic<AnyStaticShapeMemRef>, "the bucket",
                           [MemRead, MemWrite]>:$buffers,
                       I64Attr:$bucket);
  let assemblyFormat = [{
    $buffers `bucket` $bucket attr-dict `:` type($buffers)
  }];
  let hasVerifier = 1;
}

#endif // MODELC_DIALECTS_MDLRT_MDLRTOPS_TD
