// Named persistent tensors of a compiled program (gradients, optimizer
// state, inputs, outputs, hyperparameters) and the loads and stores that
// the program's functions do on them and on parameters. See docs/pipeline.md.
#ifndef MODELC_DIALECTS_MDL_BUFFEROPS_TD
#define MODELC_DIALECTS_MDL_BUFFEROPS_TD

include "MdlDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Mdl_BufferOp : Mdl_Op<"buffer", [Symbol]> {
  let summary = "a named persistent tensor in the program's arena";
  let description = [{
    Declares a tensor that lives for the whole run, written and read by the
    program's functions and by the runtime. `role` is one of `grad`, `state`,
    `input`, `output`, `hyper`; `phase` one of `shared`, `train`, `eval`,
    `infer`; `key` is its name for people and files (a parameter name, a
    checkpoint name such as `m.fc1.weight`, a field, metric or setting name);
    `entry` the entry it belongs to ("" for gradients). Codegen adds
    `offset`, its byte offset in the arena.

    ```mlir
    mdl.buffer @"grad:fc1.weight" : tensor<256x784xf32> {entry = "", key = "fc1.weight", phase = "shared", role = "grad"}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Mdl_Tensor>:$type,
                       StrAttr:$role, StrAttr:$phase, StrAttr:$key,
                       StrAttr:$entry);
  let assemblyFormat = "$sym_name `:` $type attr-dict";
  let hasVerifier = 1;
}

def Mdl_FlatViewOp : Mdl_Op<"flat_view", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "parameters or buffers of one element type, seen as one 1-d tensor";
  let description = [{
    Declares that the memory plan lays `members` (each an `mdl.param` or
    `mdl.buffer` of the view's element type) out back to back, each at the
    arena's alignment (64 bytes) from the previous one's end, and names the
    whole range as a 1-d tensor: `type` has exactly the elements of that
    range, the members' and the padding between them. The padding is zero
    (the runtime zeroes the arena and only the view's own stores reach it),
    so an elementwise step that maps zeros to zeros, or a sum, sees only the
    members. `mdl.load` and `mdl.store` take the view like a buffer; a
    function uses the view or its members, never both. The optimizer's
    multi-tensor update is one step over such views
    (docs/passes/expand-optimizer.md). Codegen adds `offset`.

    ```mlir
    mdl.flat_view @"t:flat:param.f32.0" : tensor<80xf32> of [@fc1.weight, @fc1.bias]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Mdl_Tensor>:$type,
                       FlatSymbolRefArrayAttr:$members);
  let assemblyFormat = "$sym_name `:` $type `of` $members attr-dict";
  let extraClassDeclaration = [{
    /// The byte alignment of each member from the previous one's end: the
    /// memory plan's (codegen/memory/PlanMemory.cpp).
    static constexpr uint64_t kMemberAlignment = 64;
    /// Each of `members`' element offset in a view of them, and (last) the
    /// view's element count.
    static ::llvm::SmallVector<int64_t>
    layout(::llvm::ArrayRef<::mlir::RankedTensorType> members);
  }];
}

def Mdl_LoadOp : Mdl_Op<"load", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead]>]> {
  let summary = "the current value of a buffer or parameter";
  let description = [{
    Reads the `mdl.buffer`, `mdl.param` or `mdl.flat_view` named `name` (its
    type must be the result type). Within a function every load of a symbol comes before any
    `mdl.store` to it.

    ```mlir
    %g = mdl.load @"grad:fc1.weight" : tensor<256x784xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Mdl_StoreOp : Mdl_Op<"store", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite]>]> {
  let summary = "overwrite a buffer or parameter";
  let description = [{
    Writes `value` into the `mdl.buffer`, `mdl.param` or `mdl.flat_view`
    named `name`, whose type must be the value's.

    ```mlir
    mdl.store %g, @"grad:fc1.weight" : tensor<256x784xf32>
    ```
  }];
  let arguments = (ins Mdl_Tensor:$value, FlatSymbolRefAttr:$name);
  let assemblyFormat = "$value `,` $name attr-dict `:` type($value)";
}

def Mdl_UpdateBufferOp : Mdl_Op<"update_buffer", [
    AllTypesMatch<["buffer", "value"]>, MemoryEffects<[MemWrite]>]> {
  let summary = "the value a module buffer takes in training";
  let description = [{
    `buffer` is a module buffer's value as the function read it (an
    `mdl.load` of an `mdl.param buffer`). In a fwd_bwd function
    `--mdl-decompose` stores `value` to that buffer (once per micro-batch,
    as batch norm's running statistics; what the step read stays the old
    value); in the other functions (eval, infer) it does nothing, as a
    PyTorch module updates its buffers only when `training`.

    ```mlir
    mdl.update_buffer %state, %h_n : tensor<2x20x200xf32>
    ```
  }];
  let arguments = (ins Mdl_Tensor:$buffer, Mdl_Tensor:$value);
  let assemblyFormat = "$buffer `,` $value attr-dict `:` type($value)";
}

def Mdl_AllReduceOp : Mdl_Op<"all_reduce", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "average gradient buffers over the data-parallel ranks";
  let description = [{
    One bucket of gradients (--mdl-shard-data-parallel,
    docs/passes/data-parallel.md): on the last micro-batch of an optimizer
    step, each `mdl.buffer` named in `names` becomes its mean over the
    data-parallel ranks (with one rank, itself); on the other micro-batches
    of the step it does nothing. The number of ranks is a run-time value.
    The buffers are `grad` buffers of one element type, f32 or f64; `bucket`
    numbers the buckets of a function in the order they are issued.

    ```mlir
    mdl.all_reduce [@"grad:fc2.bias", @"grad:fc2.weight"] bucket 0
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$names, I64Attr:$bucket);
  let assemblyFormat = "$names `bucket` $bucket attr-dict";
}

def Mdl_DropoutMaskOp : Mdl_Op<"dropout_mask", [Pure]> {
  let summary = "a random dropout mask: 0 or 1 / (1 - p) per element";
  let description = [{
    Each element is 0 with probability `p` and `1 / (1 - p)` otherwise,
    drawn from a counter-based hash of `seed` (the run's seed), `counter`
    (`rng_counter`, new for every micro-batch), `id` (unique per dropout in
    the program) and the element's linear index, so the mask is the same
    wherever it is recomputed and on every target. Both operands are 0-d
    f64 tensors (hyper buffers).

    ```mlir
    %m = mdl.dropout_mask %seed, %counter p = 1.000000e-01 id = 3 : tensor<f64>, tensor<f64> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F64]>:$seed,
                       RankedTensorOf<[F64]>:$counter, F64Attr:$p,
                       Mdl_I64Attr:$id);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $seed `,` $counter `p` `=` $p `id` `=` $id attr-dict `:` type($seed) `,`
    type($counter) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // MODELC_DIALECTS_MDL_BUFFEROPS_TD
