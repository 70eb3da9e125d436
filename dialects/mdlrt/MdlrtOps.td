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

#endif // MODELC_DIALECTS_MDLRT_MDLRTOPS_TD
