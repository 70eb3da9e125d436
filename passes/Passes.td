// The target-neutral passes on the mdl dialect (docs/pipeline.md), one per
// file, each with a lit test of the same name under test/Passes/.
#ifndef MODELC_PASSES_PASSES_TD
#define MODELC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def MdlInlineCalls : Pass<"mdl-inline-calls", "mlir::ModuleOp"> {
  let summary = "Inline every block call into the entries and erase the blocks";
  let description = [{
    Inlines each `func.call` (recursively: blocks call blocks) into the
    `mdl.train` and `mdl.infer` bodies, then erases the private block
    functions. Afterwards no `func.call` is left.

    Before: `%y = func.call @mlp(%x, %w) ...` in `mdl.train @t`.
    After: the ops of `@mlp` in its place, with `%w` for its parameter
    argument; `@mlp` erased.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def MdlBuildEntryFunctions : Pass<"mdl-build-entry-functions", "mlir::ModuleOp"> {
  let summary = "Give every entry its functions and buffers";
  let description = [{
    For each `mdl.train @T`: `mdl.buffer` declarations for its inputs,
    outputs and hyperparameters and the functions `@"T.fwd_bwd"` (marked
    `mdl.autodiff`) and `@"T.eval"` (when it evaluates); for each
    `mdl.infer @I`: `@"I.infer"`. The entry ops stay as declarations. See
    docs/pipeline.md, stage 1.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def MdlDecompose : Pass<"mdl-decompose", "mlir::ModuleOp"> {
  let summary = "Expand composite ops into simpler mdl ops";
  let description = [{
    Each composite op (`isComposite` in passes/Passes.h) becomes the mdl
    ops its PyTorch reference is written with (docs/passes/decompose.md),
    e.g. `mdl.attention` matmuls, a causal mask (`where`) and a softmax;
    `mdl.dropout` becomes `input * mdl.dropout_mask` in `fwd_bwd` functions
    (with a unique `id` per dropout and the `seed`/`rng_counter` hypers) and
    its input elsewhere; `mdl.update_buffer` and batch norm's running
    statistics become stores to their buffers in `fwd_bwd` only.
  }];
}

def MdlInsertAmpCasts : Pass<"mdl-insert-amp-casts", "mlir::ModuleOp"> {
  let summary = "Mixed precision as torch.autocast, for precision = bf16 | f16";
  let description = [{
    In the `fwd_bwd` and `eval` functions of each train entry whose
    `precision` setting is `bf16` or `f16`: matmul and conv2d (and attention,
    decomposed into them) take 16-bit operands, their f32 operands and
    parameters cast; exp, log, pow, rsqrt, softmax, log_softmax, layer_norm,
    the losses, sum, mean and accuracy take f32 operands; every other op
    runs in the widest float type of its non-scalar operands (0-d values
    and dropout masks take part weakly, as Python scalars do in PyTorch).
    Values stored to buffers are cast to the buffer's type. Runs after
    --mdl-decompose and before --mdl-autodiff, so the backward pass follows
    the casts. docs/passes/amp.md.
  }];
}

def MdlAutodiff : Pass<"mdl-autodiff", "mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation of the fwd_bwd functions";
  let description = [{
    For each function marked `mdl.autodiff = {loss = @SYM, scale = F}`,
    appends the backward pass built from each op's
    DifferentiableOpInterface and, for every parameter the loss depends on,
    `store(load(@"grad:P") + scale * dLoss/dP, @"grad:P")`, declaring the
    `grad:P` buffers. Tied parameters (several `param_ref`s of one symbol)
    sum their gradients. Removes the marker.
  }];
}

def MdlExpandOptimizer : Pass<"mdl-expand-optimizer", "mlir::ModuleOp"> {
  let summary = "Build each train entry's update function";
  let description = [{
    Adds `@"T.update"`: the learning rate of step s from the schedule, the
    global gradient norm and clipping, and the sgd/adam/adamw update of
    every parameter with its state buffers, exactly as torch.optim; then
    zeroes the gradients. The step covers the parameters of one element type
    and parameter group at once, through `mdl.flat_view`s of the
    parameters, gradients and state (the multi-tensor update), unless
    `flat-views` is false or another entry's views hold a parameter. See
    docs/passes/expand-optimizer.md.
  }];
  let options = [
    Option<"flatViews", "flat-views", "bool", /*default=*/"true",
           "Step the parameters of one element type and group through flat views (false: each parameter on its own, as torch's foreach=False)">
  ];
}

def MdlShardDataParallel : Pass<"mdl-shard-data-parallel", "mlir::ModuleOp"> {
  let summary = "Average the gradients over data-parallel ranks, in buckets";
  let description = [{
    In each train entry's `fwd_bwd` function (after --mdl-autodiff), groups
    the gradient buffers into buckets of at most `bucket-mb` megabytes in
    the order the backward finishes them, and puts one `mdl.all_reduce`
    for each bucket right after the last store that finishes it, so that a
    bucket's communication can start while the backward of earlier layers
    runs. See docs/passes/data-parallel.md.
  }];
  let options = [
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "The most bytes of a bucket, in MB (10^6 bytes), as DDP's bucket_cap_mb">
  ];
}

def MdlWidenToF64 : Pass<"mdl-widen-to-f64", "mlir::ModuleOp"> {
  let summary = "Compute in f64 where the program computes in f32 (testing)";
  let description = [{
    Rewrites every f32 tensor of the program functions, parameters and
    non-input buffers to f64, and casts f32 inputs to f64 where they are
    loaded, so that gradient checks against finite differences can ask for
    a relative error of 1e-6. `modelc --widen-f64` runs it after
    --mdl-decompose; it is a testing aid, not a precision setting.
  }];
}

#endif // MODELC_PASSES_PASSES_TD
