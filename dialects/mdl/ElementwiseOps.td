// Elementwise ops: NumPy-broadcasting binary ops, unary ops, where, cast.
#ifndef MODELC_DIALECTS_MDL_ELEMENTWISEOPS_TD
#define MODELC_DIALECTS_MDL_ELEMENTWISEOPS_TD

include "MdlDialect.td"
include "MdlEnums.td"
include "MdlInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// An op whose operands broadcast with NumPy's rules to the result shape.
class Mdl_BroadcastingOp<string mnemonic, list<Trait> traits = []>
    : Mdl_Op<mnemonic, !listconcat([Pure], traits)> {
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::mdl::verifyBroadcastingOp(getOperation());
    }
  }];
}

class Mdl_BinaryOp<string mnemonic, Type tensorType, string opSummary,
                   list<Trait> traits = []>
    : Mdl_BroadcastingOp<mnemonic, !listconcat(
          [SameOperandsAndResultElementType], traits)> {
  let summary = opSummary;
  let description = [{
    Applies the operation elementwise after broadcasting both operands (NumPy
    rules) to the result shape.

    ```mlir
    %r = mdl.add %a, %b : tensor<128x10xf32>, tensor<10xf32> -> tensor<128x10xf32>
    ```
  }];
  let arguments = (ins tensorType:$lhs, tensorType:$rhs);
  let results = (outs tensorType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let builders = [
    // The result type is the operands' broadcast.
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      build($_builder, $_state, inferBroadcastType({lhs, rhs}), lhs, rhs);
    }]>
  ];
}

// A binary op through which gradients flow (to float operands); the
// vector-Jacobian products are in ElementwiseVJP.cpp.
class Mdl_DifferentiableBinaryOp<string mnemonic, string opSummary>
    : Mdl_BinaryOp<mnemonic, Mdl_NumericTensor, opSummary, [
        DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]>;

def Mdl_AddOp : Mdl_DifferentiableBinaryOp<"add", "elementwise addition">;
def Mdl_SubOp : Mdl_DifferentiableBinaryOp<"sub", "elementwise subtraction">;
def Mdl_MulOp : Mdl_DifferentiableBinaryOp<"mul", "elementwise product">;
def Mdl_DivOp : Mdl_DifferentiableBinaryOp<"div", "elementwise division">;
def Mdl_RemOp : Mdl_DifferentiableBinaryOp<"rem",
    "elementwise remainder with the sign of the divisor (torch.remainder)">;
def Mdl_PowOp : Mdl_DifferentiableBinaryOp<"pow", "elementwise power">;
def Mdl_MaximumOp : Mdl_DifferentiableBinaryOp<"maximum",
                                               "elementwise maximum">;
def Mdl_MinimumOp : Mdl_DifferentiableBinaryOp<"minimum",
                                               "elementwise minimum">;
def Mdl_AndOp : Mdl_BinaryOp<"and", Mdl_BoolTensor, "elementwise logical and">;
def Mdl_OrOp : Mdl_BinaryOp<"or", Mdl_BoolTensor, "elementwise logical or">;

def Mdl_CompareOp : Mdl_BroadcastingOp<"compare", [SameOperandsElementType]> {
  let summary = "elementwise comparison";
  let description = [{
    Compares the broadcast operands with `predicate` (`eq ne lt le gt ge`);
    the result is `i1` with the broadcast shape.

    ```mlir
    %m = mdl.compare lt, %a, %b : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>
    ```
  }];
  let arguments = (ins Mdl_CmpPredicate:$predicate,
                       Mdl_Tensor:$lhs, Mdl_Tensor:$rhs);
  let results = (outs Mdl_BoolTensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->`
    type($result)
  }];
  let builders = [
    // The result is i1 with the operands' broadcast shape.
    OpBuilder<(ins "CmpPredicate":$predicate, "::mlir::Value":$lhs,
                   "::mlir::Value":$rhs), [{
      build($_builder, $_state,
            inferBroadcastType({lhs, rhs}, $_builder.getI1Type()),
            predicate, lhs, rhs);
    }]>
  ];
}

def Mdl_WhereOp : Mdl_BroadcastingOp<"where", [
    AllElementTypesMatch<["on_true", "on_false", "result"]>,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "elementwise selection";
  let description = [{
    `on_true` where `condition` holds, else `on_false`; the three operands
    broadcast to the result shape.

    ```mlir
    %r = mdl.where %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Mdl_BoolTensor:$condition,
                       Mdl_Tensor:$on_true, Mdl_Tensor:$on_false);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,`
    type($on_true) `,` type($on_false) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$condition, "::mlir::Value":$onTrue,
                   "::mlir::Value":$onFalse), [{
      build($_builder, $_state,
            inferBroadcastType({condition, onTrue, onFalse},
                               getElementTypeOrSelf(onTrue.getType())),
            condition, onTrue, onFalse);
    }]>
  ];
}

// A unary elementwise op; the result has the operand's type.
class Mdl_UnaryOp<string mnemonic, Type tensorType, string opSummary,
                  list<Trait> traits = []>
    : Mdl_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType], traits)> {
  let summary = opSummary;
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

// A unary op through which gradients flow (ElementwiseVJP.cpp).
class Mdl_DifferentiableUnaryOp<string mnemonic, Type tensorType,
                                string opSummary>
    : Mdl_UnaryOp<mnemonic, tensorType, opSummary, [
        DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]>;

def Mdl_NegOp : Mdl_DifferentiableUnaryOp<"neg", Mdl_NumericTensor,
                                          "elementwise negation">;
def Mdl_AbsOp : Mdl_DifferentiableUnaryOp<"abs", Mdl_NumericTensor,
                                          "elementwise |x|">;
def Mdl_ReluOp : Mdl_DifferentiableUnaryOp<"relu", Mdl_NumericTensor,
                                           "max(x, 0)">;
def Mdl_ExpOp : Mdl_DifferentiableUnaryOp<"exp", Mdl_FloatTensor,
                                          "elementwise e^x">;
def Mdl_LogOp : Mdl_DifferentiableUnaryOp<"log", Mdl_FloatTensor,
                                          "elementwise natural logarithm">;
def Mdl_SqrtOp : Mdl_DifferentiableUnaryOp<"sqrt", Mdl_FloatTensor,
                                           "elementwise square root">;
def Mdl_RsqrtOp : Mdl_DifferentiableUnaryOp<"rsqrt", Mdl_FloatTensor,
                                            "1 / sqrt(x)">;
def Mdl_TanhOp : Mdl_DifferentiableUnaryOp<"tanh", Mdl_FloatTensor,
                                           "hyperbolic tangent">;
def Mdl_SigmoidOp : Mdl_DifferentiableUnaryOp<"sigmoid", Mdl_FloatTensor,
                                              "1 / (1 + e^-x)">;
def Mdl_SiluOp : Mdl_DifferentiableUnaryOp<"silu", Mdl_FloatTensor,
                                           "x * sigmoid(x)">;
def Mdl_NotOp : Mdl_UnaryOp<"not", Mdl_BoolTensor, "elementwise logical not">;

def Mdl_GeluOp : Mdl_Op<"gelu", [
    Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate` is `"none"` (the erf form) or `"tanh"` (GPT-2's), as in
    `torch.nn.functional.gelu`.

    ```mlir
    %y = mdl.gelu %x {approximate = "tanh"} : tensor<8x3072xf32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mdl_CastOp : Mdl_Op<"cast", [
    Pure, SameOperandsAndResultShape,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Converts each element as PyTorch's `Tensor.to(dtype)` does: floats to
    integers truncate toward zero, to `i1` is `x != 0`.

    ```mlir
    %f = mdl.cast %x : tensor<128x28x28xui8> -> tensor<128x28x28xf32>
    ```
  }];
  let arguments = (ins Mdl_Tensor:$input);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Type":$elementType), [{
      build($_builder, $_state,
            ::llvm::cast<::mlir::RankedTensorType>(input.getType())
                .clone(elementType),
            input);
    }]>
  ];
}

#endif // MODELC_DIALECTS_MDL_ELEMENTWISEOPS_TD
