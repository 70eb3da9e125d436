// --mdl-lower-to-linalg errors: an mdl op in a function without a lowering
// is named; a load after a store to the same symbol breaks the contract the
// lowering relies on (docs/pipeline.md).
// RUN: modelc-opt %s --mdl-lower-to-linalg --split-input-file --verify-diagnostics

// mdl.dropout must have been decomposed by --mdl-decompose.
mdl.buffer @a : tensor<4xf32> {entry = "T", key = "a", phase = "train", role = "input"}
mdl.buffer @b : tensor<4xf32> {entry = "T", key = "b", phase = "train", role = "output"}
func.func @not_decomposed() {
  %x = mdl.load @a : tensor<4xf32>
  // expected-error @below {{no lowering to linalg for 'mdl.dropout' (in function 'not_decomposed')}}
  %y = mdl.dropout %x p = 1.000000e-01 : tensor<4xf32>
  mdl.store %y, @b : tensor<4xf32>
  return
}

// -----

mdl.buffer @a : tensor<4xf32> {entry = "T", key = "a", phase = "train", role = "state"}
func.func @load_after_store() {
  %x = mdl.load @a : tensor<4xf32>
  %n = mdl.neg %x : tensor<4xf32>
  mdl.store %n, @a : tensor<4xf32>
  // expected-error @below {{reads @a after a store to it in the same function}}
  %y = mdl.load @a : tensor<4xf32>
  %z = mdl.neg %y : tensor<4xf32>
  mdl.store %z, @a : tensor<4xf32>
  return
}
