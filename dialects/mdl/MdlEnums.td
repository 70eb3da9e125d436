// Enumerations of the mdl dialect, printed as bare keywords.
#ifndef MODELC_DIALECTS_MDL_MDLENUMS_TD
#define MODELC_DIALECTS_MDL_MDLENUMS_TD

include "mlir/IR/EnumAttr.td"

def Mdl_CmpPredicate : I32EnumAttr<"CmpPredicate", "comparison predicate", [
    I32EnumAttrCase<"eq", 0>,
    I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>,
    I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>,
    I32EnumAttrCase<"ge", 5>
  ]> {
  let cppNamespace = "::mlir::mdl";
}

// The initialisers of `param` declarations (spec section 6).
def Mdl_InitKind : I32EnumAttr<"InitKind", "parameter initialiser", [
    I32EnumAttrCase<"zeros", 0>,
    I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"full", 2>,
    I32EnumAttrCase<"normal", 3>,
    I32EnumAttrCase<"uniform", 4>,
    I32EnumAttrCase<"kaiming_uniform", 5>,
    I32EnumAttrCase<"xavier_uniform", 6>,
    I32EnumAttrCase<"truncated_normal", 7>
  ]> {
  let cppNamespace = "::mlir::mdl";
}

// Where the samples of a data field come from (spec section 7).
def Mdl_DataSource : I32EnumAttr<"DataSource", "data field source", [
    I32EnumAttrCase<"idx", 0>,
    I32EnumAttrCase<"npy", 1>,
    I32EnumAttrCase<"npz", 2>,
    I32EnumAttrCase<"file", 3>
  ]> {
  let cppNamespace = "::mlir::mdl";
}

#endif // MODELC_DIALECTS_MDL_MDLENUMS_TD
