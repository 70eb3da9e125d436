// The mdl dialect: its definition, base op class and type constraints.
#ifndef MODELC_DIALECTS_MDL_MDLDIALECT_TD
#define MODELC_DIALECTS_MDL_MDLDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Mdl_Dialect : Dialect {
  let name = "mdl";
  let summary = "Tensor-level model operations on static shapes";
  let description = [{
    The IR that the modelc frontend emits and every later pass consumes. All
    values are ranked tensors with static shapes; a scalar is a rank-0 tensor.
    Parameters are module-level `mdl.param` symbols, data sets are `mdl.data`
    symbols, and the entry points are `mdl.train` and `mdl.infer`. See
    docs/dialect.md.
  }];
  let cppNamespace = "::mlir::mdl";
  let hasConstantMaterializer = 1;
  // Checks the `mdl.param` attribute on function arguments.
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The argument attribute naming the parameter bound to a function
    /// argument, relative to the function's scope.
    static constexpr ::llvm::StringLiteral getParamArgAttrName() {
      return ::llvm::StringLiteral("mdl.param");
    }
    /// The attribute of an entry or a data set whose symbol differs from the
    /// name the program gave it, which a parameter has: that name.
    static constexpr ::llvm::StringLiteral getUserNameAttrName() {
      return ::llvm::StringLiteral("mdl.name");
    }
    /// The name the program gave an entry or a data set: its mdl.name when
    /// it has one, its symbol otherwise.
    static ::llvm::StringRef getUserName(::mlir::Operation *op);
  }];
}

class Mdl_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mdl_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Element types: f32 f16 bf16 f64, i32 i64, ui8 ui16 and i1 (bool).
//===----------------------------------------------------------------------===//

def Mdl_FloatElement : AnyTypeOf<[F16, BF16, F32, F64], "floating-point">;
def Mdl_IntElement : AnyTypeOf<[I32, I64, UI8, UI16], "integer">;
def Mdl_NumericElement
    : AnyTypeOf<[Mdl_FloatElement, Mdl_IntElement], "numeric">;
def Mdl_AnyElement : AnyTypeOf<[Mdl_NumericElement, I1], "mdl element">;

class Mdl_TensorOf<list<Type> allowed>
    : RankedTensorOf<allowed, [HasStaticShapePred], "statically shaped tensor">;

def Mdl_Tensor : Mdl_TensorOf<[Mdl_AnyElement]>;
def Mdl_NumericTensor : Mdl_TensorOf<[Mdl_NumericElement]>;
def Mdl_FloatTensor : Mdl_TensorOf<[Mdl_FloatElement]>;
def Mdl_IntTensor : Mdl_TensorOf<[Mdl_IntElement]>;
def Mdl_BoolTensor : Mdl_TensorOf<[I1]>;
def Mdl_I64Tensor : Mdl_TensorOf<[I64]>;

// Scalars are rank-0 tensors.
def Mdl_FloatScalar
    : RankedTensorOf<[Mdl_FloatElement], [HasAnyRankOfPred<[0]>], "0-d tensor">;
def Mdl_F32Scalar : RankedTensorOf<[F32], [HasAnyRankOfPred<[0]>], "0-d tensor">;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

// A signless 64-bit integer read back as a signed int64_t (I64Attr gives
// uint64_t, which is wrong for axes and for `ignore_index = -100`).
def Mdl_I64Attr : SignlessIntegerAttrBase<I64, "64-bit integer attribute"> {
  let returnType = "int64_t";
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

#endif // MODELC_DIALECTS_MDL_MDLDIALECT_TD
