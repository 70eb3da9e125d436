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

def Mdlrt_AttentionPassOp : Mdlrt_Op<"attention_pass", [
    AttrSizedOperandSegments, RecursiveMemoryEffects, NoTerminator,
    SingleBlock]> {
  let summary = "one pass of the fused attention, with its portable loops";
  let description = [{
    One pass of mdl.attention_forward / attention_backward on memory
    (docs/codegen/attention.md), a kernel's work: `kind` is `forward`
    (ins q, k, v [, mask]; outs O, lse), `query_grad` (ins q, k, v, dO,
    lse, D [, mask]; outs dq) or `key_value_grad` (the same ins; outs dk,
    dv), with the op's `causal`, `scale`, `dropout` and, when it drops, the
    dropout key. The region computes the pass with loops that every target
    can run (one scf.parallel over the rows); a target may run the same
    function another way from the operands instead (the GPU's tensor-core
    kernels, docs/codegen/gpu.md). Its memory effects are its region's.
    A memref.cast operand to a less static layout folds into the op.

    ```mlir
    mdlrt.attention_pass forward causal scale = 1.250000e-01 ins(%q, %k, %v : ...) outs(%o, %lse : ...) {
      scf.parallel ... { ... }
    }
    ```
  }];
  let arguments = (ins StrAttr:$kind, UnitAttr:$causal, F64Attr:$scale,
                       DefaultValuedAttr<F64Attr, "0.0">:$dropout,
                       UnitAttr:$has_mask,
                       Variadic<AnyStaticShapeMemRef>:$inputs,
                       Variadic<AnyStaticShapeMemRef>:$outputs,
                       Optional<I64>:$dropout_key);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind (`causal` $causal^)? `scale` `=` $scale (`dropout` `=` $dropout^)?
    (`mask` $has_mask^)? (`key` `(` $dropout_key^ `)`)? `ins` `(` $inputs `:`
    type($inputs) `)` `outs` `(` $outputs `:` type($outputs) `)` $body
    attr-dict
  }];
  let hasVerifier = 1;
  // Operands that are memref.casts to a less static layout read their
  // source instead, as linalg ops do.
  let hasFolder = 1;
}

def Mdlrt_RowScatterAddOp : Mdlrt_Op<"row_scatter_add", [
    RecursiveMemoryEffects, NoTerminator, SingleBlock]> {
  let summary = "a table's rows summed from source rows by id, with its "
                "portable loops";
  let description = [{
    The work of mdl.embedding_grad's kernel (docs/codegen/lower-to-linalg-nn.md):
    `table` ([V, D], f32 or f64) becomes zero, then for each position i in
    order, table[clamp(ids[i], 0, V - 1)] += source[i] (source's [n, D]
    rows extended to the table's type). `unsigned` reads the ids (an
    integer [n]) as unsigned. The region computes it with loops that every
    target can run (a pass over the positions, a row each); a target may
    run the same function another way from the operands (the GPU: a thread
    per column of a range of rows, docs/codegen/gpu.md). Every way adds an
    element's terms in position order, so all give the same bits. Its
    memory effects are its region's. A memref.cast operand to a less static
    layout folds into the op.

    ```mlir
    mdlrt.row_scatter_add ins(%ids, %dy : memref<64xi64, strided<[?], offset: ?>>, memref<64x32xbf16, strided<[?, 1], offset: ?>>) outs(%table : memref<100x32xf32>) {
      scf.for ... { ... }
    }
    ```
  }];
  let arguments = (ins UnitAttr:$unsigned_ids,
                       MemRefRankOf<[AnySignlessInteger], [1]>:$ids,
                       MemRefRankOf<[AnyFloat], [2]>:$source,
                       MemRefRankOf<[F32, F64], [2]>:$table);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`unsigned` $unsigned_ids^)? `ins` `(` $ids `,` $source `:` type($ids)
    `,` type($source) `)` `outs` `(` $table `:` type($table) `)` $body
    attr-dict
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
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
