// The mdlrt dialect: what codegen lowers the mdl dialect to on the way to
// host code — named arena buffers and library calls — on memrefs.
#ifndef MODELC_DIALECTS_MDLRT_MDLRTDIALECT_TD
#define MODELC_DIALECTS_MDLRT_MDLRTDIALECT_TD

include "mlir/IR/OpBase.td"

def Mdlrt_Dialect : Dialect {
  let name = "mdlrt";
  let summary = "Arena buffers and library calls of a compiled program";
  let description = [{
    Ops between bufferization and the target: `mdlrt.buffer` is the memref
    of a persistent `mdl.buffer` or `mdl.param` (the memory plan turns it
    into a view of the arena) and `mdlrt.gemm` a batched matrix product that
    the target turns into a library call (OpenBLAS on the CPU, cuBLASLt on
    the GPU). See docs/pipeline.md.
  }];
  let cppNamespace = "::mlir::mdlrt";
}

class Mdlrt_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mdlrt_Dialect, mnemonic, traits>;

#endif // MODELC_DIALECTS_MDLRT_MDLRTDIALECT_TD
