// Interfaces of the mdl dialect: DifferentiableOpInterface, which the
// autodiff pass (passes/Autodiff.cpp) uses to build the backward pass.
#ifndef MODELC_DIALECTS_MDL_MDLINTERFACES_TD
#define MODELC_DIALECTS_MDL_MDLINTERFACES_TD

include "mlir/IR/OpBase.td"

def Mdl_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::mdl";
  let description = [{
    An op whose vector-Jacobian product can be built from mdl ops. Given the
    adjoints of the op's results (a null Value where a result has none, i.e.
    its adjoint is zero; at least one is not null), `buildVJP` creates, at
    the builder's insertion point, ops computing the adjoint of each operand,
    and returns one Value per operand: null where no gradient flows (integer
    and bool operands, labels, indices). Every returned adjoint has exactly
    its operand's type: gradients of broadcast operands are already summed
    back to the operand's shape. It may build adjoints that the caller does
    not need (those of operands that do not depend on a parameter); they are
    pure ops, which the caller erases when unused. The implementations are
    in the *VJP.cpp files, one per op family; docs/passes/autodiff.md gives
    the formulas and their sources.
  }];
  let methods = [
    InterfaceMethod<
      "Builds the adjoints of the operands from the adjoints of the results.",
      "::llvm::SmallVector<::mlir::Value>", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultAdjoints)>
  ];
}

#endif // MODELC_DIALECTS_MDL_MDLINTERFACES_TD
