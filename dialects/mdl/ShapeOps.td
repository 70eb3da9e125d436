// Shape ops: reshape, transpose, concat, split, broadcast_to, arange, slice.
#ifndef MODELC_DIALECTS_MDL_SHAPEOPS_TD
#define MODELC_DIALECTS_MDL_SHAPEOPS_TD

include "MdlDialect.td"
include "MdlInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Mdl_ReshapeOp : Mdl_Op<"reshape", [
    Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "the same elements in row-major order under a new shape";
  let description = [{
    ```mlir
    %r = mdl.reshape %x : tensor<128x28x28xf32> -> tensor<128x784xf32>
    ```
  }];
  let arguments = (ins Mdl_Tensor:$input);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$shape),
    [{
      build($_builder, $_state,
            ::llvm::cast<::mlir::RankedTensorType>(input.getType())
                .clone(shape),
            input);
    }]>
  ];
}

def Mdl_TransposeOp : Mdl_Op<"transpose", [
    Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "permutes the axes";
  let description = [{
    Result axis `i` is operand axis `perm[i]`.

    ```mlir
    %t = mdl.transpose %x perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Mdl_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = [{
    $input `perm` `=` $perm attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  // An identity permutation, or a transpose undoing another, folds away;
  // the transpose of a matrix product is the product of the transposes in
  // the other order (which the GEMM reads transposed: no copy).
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$perm)>
  ];
}

def Mdl_ConcatOp : Mdl_Op<"concat", [
    Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "joins tensors along an axis";
  let description = [{
    All operands have the same rank and agree on every axis but `axis`.

    ```mlir
    %c = mdl.concat %a, %b axis = 1 : tensor<4x2xf32>, tensor<4x6xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Mdl_Tensor>:$inputs, Mdl_I64Attr:$axis);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::ValueRange":$inputs, "int64_t":$axis)>
  ];
}

def Mdl_SplitOp : Mdl_Op<"split", [
    Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "cuts a tensor into equal parts along an axis";
  let description = [{
    One result per part (as `torch.chunk` when the size divides evenly); the
    axis size must be divisible by the number of results.

    ```mlir
    %q, %k, %v = mdl.split %x axis = 2 : tensor<8x64x192xf32> -> tensor<8x64x64xf32>, tensor<8x64x64xf32>, tensor<8x64x64xf32>
    ```
  }];
  let arguments = (ins Mdl_Tensor:$input, Mdl_I64Attr:$axis);
  let results = (outs Variadic<Mdl_Tensor>:$results);
  let assemblyFormat = [{
    $input `axis` `=` $axis attr-dict `:` type($input) `->` type($results)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$axis,
                   "unsigned":$numParts)>
  ];
}

def Mdl_BroadcastToOp : Mdl_Op<"broadcast_to", [
    Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "broadcasts to the result shape with NumPy's rules";
  let description = [{
    ```mlir
    %b = mdl.broadcast_to %x : tensor<10xf32> -> tensor<128x10xf32>
    ```
  }];
  let arguments = (ins Mdl_Tensor:$input);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mdl_ArangeOp : Mdl_Op<"arange", [Pure]> {
  let summary = "the integers 0 .. n-1";
  let description = [{
    `n` is the result's only dimension; i32 as the language's `arange`, or
    i64 where n passes 2^31 (the causal mask of a long attention).

    ```mlir
    %i = mdl.arange : tensor<64xi32>
    ```
  }];
  let results = (outs RankedTensorOf<[I32, I64],
      [HasStaticShapePred, HasAnyRankOfPred<[1]>], "static 1-d tensor">:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let builders = [
    OpBuilder<(ins "int64_t":$size), [{
      build($_builder, $_state,
            ::mlir::RankedTensorType::get({size}, $_builder.getI32Type()));
    }]>
  ];
}

def Mdl_SliceOp : Mdl_Op<"slice", [
    Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "a strided box of a tensor";
  let description = [{
    Along each axis `i` takes the indices `starts[i]`, `starts[i] +
    strides[i]`, ... below `limits[i]`. All three lists have the operand's
    rank and are normalised: `0 <= start <= limit <= size`, `stride >= 1`.

    ```mlir
    %s = mdl.slice %x starts = [0, 0] limits = [4, 8] strides = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Mdl_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$strides);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = [{
    $input `starts` `=` $starts `limits` `=` $limits `strides` `=` $strides
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input,
                   "::llvm::ArrayRef<int64_t>":$starts,
                   "::llvm::ArrayRef<int64_t>":$limits,
                   "::llvm::ArrayRef<int64_t>":$strides)>
  ];
}

#endif // MODELC_DIALECTS_MDL_SHAPEOPS_TD
