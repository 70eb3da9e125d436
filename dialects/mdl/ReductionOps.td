// Reductions over axes, argmax, and the softmax family.
#ifndef MODELC_DIALECTS_MDL_REDUCTIONOPS_TD
#define MODELC_DIALECTS_MDL_REDUCTIONOPS_TD

include "MdlDialect.td"
include "MdlInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Reduces `axes` (sorted, distinct, non-negative); with `keepdim` the
// reduced axes stay as size 1, else they are removed.
class Mdl_ReduceOp<string mnemonic, Type tensorType, string opSummary>
    : Mdl_Op<mnemonic, [
        Pure, SameOperandsAndResultElementType,
        DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = opSummary;
  let description = [{
    ```mlir
    %s = mdl.sum %x axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
    %m = mdl.max %x axes = [0, 1] keepdim : tensor<4x8xf32> -> tensor<1x1xf32>
    ```
  }];
  let arguments = (ins tensorType:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdim);
  let results = (outs tensorType:$result);
  let assemblyFormat = [{
    $input `axes` `=` $axes (`keepdim` $keepdim^)? attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::mdl::verifyReduceOp(getOperation(), getAxes(),
                                         getKeepdim());
    }
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$axes,
                   CArg<"bool", "false">:$keepdim), [{
      build($_builder, $_state,
            inferReduceType(input.getType(), axes, keepdim), input, axes,
            keepdim);
    }]>
  ];
}

def Mdl_SumOp : Mdl_ReduceOp<"sum", Mdl_NumericTensor, "sum over axes">;
def Mdl_MeanOp : Mdl_ReduceOp<"mean", Mdl_FloatTensor, "mean over axes">;
def Mdl_MaxOp : Mdl_ReduceOp<"max", Mdl_NumericTensor, "maximum over axes">;
def Mdl_MinOp : Mdl_ReduceOp<"min", Mdl_NumericTensor, "minimum over axes">;

def Mdl_ArgmaxOp : Mdl_Op<"argmax", [Pure]> {
  let summary = "index of the maximum along an axis";
  let description = [{
    The first index of the maximum along `axis`, as `i64`; the axis is
    removed unless `keepdim`.

    ```mlir
    %i = mdl.argmax %x axis = 1 : tensor<128x10xf32> -> tensor<128xi64>
    ```
  }];
  let arguments = (ins Mdl_NumericTensor:$input, Mdl_I64Attr:$axis,
                       UnitAttr:$keepdim);
  let results = (outs Mdl_I64Tensor:$result);
  let assemblyFormat = [{
    $input `axis` `=` $axis (`keepdim` $keepdim^)? attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$axis,
                   CArg<"bool", "false">:$keepdim)>
  ];
}

// Normalises along `axis`; the result has the operand's type.
class Mdl_SoftmaxLikeOp<string mnemonic, string opSummary>
    : Mdl_Op<mnemonic, [
        Pure, SameOperandsAndResultType,
        DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = opSummary;
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_I64Attr:$axis);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::mdl::verifyAxis(getOperation(), getAxis(),
                                     getInput().getType().getRank());
    }
  }];
}

def Mdl_SoftmaxOp : Mdl_SoftmaxLikeOp<"softmax", "softmax along an axis">;
def Mdl_LogSoftmaxOp : Mdl_SoftmaxLikeOp<"log_softmax",
                                         "log of the softmax along an axis">;

#endif // MODELC_DIALECTS_MDL_REDUCTIONOPS_TD
