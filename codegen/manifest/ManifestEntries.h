// The manifest's train and infer entries, from the settings of the mdl.train
// and mdl.infer ops (used by ManifestWriter.cpp).
#ifndef MODELC_CODEGEN_MANIFEST_MANIFESTENTRIES_H
#define MODELC_CODEGEN_MANIFEST_MANIFESTENTRIES_H

#include "mlir/IR/BuiltinOps.h"

#include "manifest_generated.h"

namespace modelc {

template <typename T>
using FlatTables =
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<T>>>;

/// One TrainEntry per mdl.train, in module order.
mlir::FailureOr<FlatTables<manifest::TrainEntry>>
writeTrainEntries(flatbuffers::FlatBufferBuilder &fbb, mlir::ModuleOp module);

/// One InferEntry per mdl.infer, in module order.
mlir::FailureOr<FlatTables<manifest::InferEntry>>
writeInferEntries(flatbuffers::FlatBufferBuilder &fbb, mlir::ModuleOp module);

} // namespace modelc

#endif // MODELC_CODEGEN_MANIFEST_MANIFESTENTRIES_H
