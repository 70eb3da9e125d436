// Declarations and entry points: parameters, data sets, train and infer.
#ifndef MODELC_DIALECTS_MDL_ENTRYOPS_TD
#define MODELC_DIALECTS_MDL_ENTRYOPS_TD

include "MdlDialect.td"
include "MdlEnums.td"
include "MdlInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Mdl_ParamOp : Mdl_Op<"param", [Symbol]> {
  let summary = "a trainable parameter, or a buffer (non-trainable state)";
  let description = [{
    Declares a trainable tensor named by its full dotted path, which is also
    its key in safetensors files. `init` says how it is initialised and
    `init_args` gives the initialiser's arguments: none for `zeros`, `ones`
    and `xavier_uniform` (whose fans come from the shape, as PyTorch computes
    them), one for `full` (value), `kaiming_uniform` (fan_in) and
    `truncated_normal` (std), two for `normal` (mean, std) and `uniform`
    (lo, hi).

    With `buffer`, it is a module buffer (PyTorch's `register_buffer`, as
    batch norm's `running_mean`): saved, loaded and checkpointed with the
    parameters under its full name, but never differentiated nor updated by
    the optimizer. It is read with `mdl.load` (so it is never on a gradient
    path) and written with `mdl.store` (by the expansion of the op that
    updates it, in fwd_bwd functions). A buffer may also hold integers
    (`num_batches_tracked` is i64); a parameter is a float tensor.

    ```mlir
    mdl.param @"fc1.weight" : tensor<256x784xf32> = kaiming_uniform(784.0)
    mdl.param buffer @"bn1.running_var" : tensor<16xf32> = ones()
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Mdl_Tensor>:$type,
                       Mdl_InitKind:$init,
                       DenseF64ArrayAttr:$init_args,
                       UnitAttr:$buffer);
  let assemblyFormat = [{
    (`buffer` $buffer^)? $sym_name `:` $type `=` $init `` custom<InitArgs>($init_args) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// How many arguments the initialiser `kind` takes.
    static unsigned getNumInitArgs(InitKind kind);
  }];
}

def Mdl_ParamRefOp : Mdl_Op<"param_ref", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the value of a parameter";
  let description = [{
    Reads the `mdl.param` named `name`; the result type must be the
    parameter's type.

    ```mlir
    %w = mdl.param_ref @"fc1.weight" : tensor<256x784xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let builders = [
    OpBuilder<(ins "ParamOp":$param)>
  ];
}

def Mdl_DataOp : Mdl_Op<"data", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator,
    NoRegionArguments]> {
  let summary = "a data set: a list of per-sample fields";
  let description = [{
    Holds the `mdl.field` ops of a `data` declaration, in declaration order.
    The field types are per sample; a batch prepends the batch dimension.

    ```mlir
    mdl.data @fashion_train {
      mdl.field "image" : tensor<28x28xui8> = idx "train-images-idx3-ubyte.gz"
      mdl.field "label" : tensor<ui8> = idx "train-labels-idx1-ubyte.gz"
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$bodyRegion);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $bodyRegion";
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    // Creates the op with an empty body; add `mdl.field` ops to getBody().
    OpBuilder<(ins "::llvm::StringRef":$symName)>
  ];
  let extraClassDeclaration = [{
    /// The fields in declaration order.
    auto getFields() { return getBody()->getOps<FieldOp>(); }
    /// The types of one batch of `batch` samples: each field's type with
    /// the batch dimension prepended. These are the `mdl.train` block
    /// arguments.
    ::llvm::SmallVector<::mlir::Type> getBatchTypes(int64_t batch);
  }];
}

def Mdl_FieldOp : Mdl_Op<"field", [HasParent<"DataOp">]> {
  let summary = "one per-sample field of a data set";
  let description = [{
    `type` is the shape of one sample. `source` is `idx`, `npy`, `npz` (with
    the member `key`) or `file` (raw little-endian elements, or llm.c token
    shards); `windows` cuts windows of the field's length from a 1-D stream,
    starting every `stride` tokens (default: the length - 1).

    ```mlir
    mdl.field "tokens" : tensor<129xui16> = windows file "data/train.bin"
    mdl.field "chars" : tensor<65xui8> = windows stride 1 file "input.txt"
    mdl.field "x" : tensor<3x32x32xf32> = npz "cifar.npz" key "images"
    ```
  }];
  let arguments = (ins StrAttr:$name,
                       TypeAttrOf<Mdl_Tensor>:$type,
                       Mdl_DataSource:$source,
                       StrAttr:$path,
                       OptionalAttr<StrAttr>:$key,
                       UnitAttr:$windows, OptionalAttr<I64Attr>:$stride);
  let assemblyFormat = [{
    $name `:` $type `=` (`windows` $windows^)? (`stride` $stride^)? $source
    $path
    (`key` $key^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Mdl_TrainOp : Mdl_Op<"train", [
    Symbol, IsolatedFromAbove, SingleBlock,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "a training entry point";
  let description = [{
    One step of the forward computation of a `train` declaration. `data`
    names the `mdl.data` set; the block arguments are one batch of its
    fields, in field order, with the batch dimension `settings.batch`
    prepended. The body yields the loss (a floating-point scalar) and then
    each metric (scalars), named by `outputs` (`"loss"` first). `settings`
    holds the declaration's settings (`batch`, `epochs`, optimizer, ...).

    ```mlir
    mdl.train @fashion data @fashion_train outputs ["loss", "accuracy"]
        settings {batch = 128 : i64, epochs = 5 : i64} {
    ^bb0(%image: tensor<128x28x28xui8>, %label: tensor<128xui8>):
      ...
      mdl.yield %loss, %acc : tensor<f32>, tensor<f32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       FlatSymbolRefAttr:$data,
                       StrArrayAttr:$outputs,
                       DictionaryAttr:$settings);
  let regions = (region SizedRegion<1>:$bodyRegion);
  let assemblyFormat = [{
    $sym_name `data` $data `outputs` $outputs `settings` $settings
    attr-dict-with-keyword $bodyRegion
  }];
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    // Creates the body block with one argument per type in `argTypes`.
    OpBuilder<(ins "::llvm::StringRef":$symName, "::llvm::StringRef":$data,
                   "::llvm::ArrayRef<::llvm::StringRef>":$outputs,
                   "::mlir::DictionaryAttr":$settings,
                   "::mlir::TypeRange":$argTypes)>,
    // As above, the block arguments being `data`'s batch types for the
    // batch size in `settings`.
    OpBuilder<(ins "::llvm::StringRef":$symName, "DataOp":$data,
                   "::llvm::ArrayRef<::llvm::StringRef>":$outputs,
                   "::mlir::DictionaryAttr":$settings)>
  ];
  let extraClassDeclaration = [{
    /// The name of the batch size in `settings`.
    static constexpr ::llvm::StringLiteral getBatchSettingName() {
      return ::llvm::StringLiteral("batch");
    }
    /// The batch size from `settings`, or nullopt when it is missing.
    std::optional<int64_t> getBatchSize();
  }];
}

def Mdl_InferOp : Mdl_Op<"infer", [
    Symbol, IsolatedFromAbove, SingleBlock,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "an inference entry point";
  let description = [{
    The block arguments are the declared inputs, named by `inputs`; the body
    yields the outputs, named by `outputs`. Every input and output has the
    batch as its leading dimension, the same for all of them.

    ```mlir
    mdl.infer @classify inputs ["image"] outputs ["label"] {
    ^bb0(%image: tensor<128x28x28xui8>):
      ...
      mdl.yield %label : tensor<128xi64>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       StrArrayAttr:$inputs,
                       StrArrayAttr:$outputs);
  let regions = (region SizedRegion<1>:$bodyRegion);
  let assemblyFormat = [{
    $sym_name `inputs` $inputs `outputs` $outputs attr-dict-with-keyword
    $bodyRegion
  }];
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    // Creates the body block with one argument per input.
    OpBuilder<(ins "::llvm::StringRef":$symName,
                   "::llvm::ArrayRef<::llvm::StringRef>":$inputs,
                   "::mlir::TypeRange":$inputTypes,
                   "::llvm::ArrayRef<::llvm::StringRef>":$outputs)>
  ];
}

def Mdl_YieldOp : Mdl_Op<"yield", [
    Pure, Terminator, ReturnLike, ParentOneOf<["TrainOp", "InferOp"]>]> {
  let summary = "returns the outputs of a train or infer body";
  let arguments = (ins Variadic<Mdl_Tensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Mdl_ConstantOp : Mdl_Op<"constant", [
    ConstantLike, Pure, AllTypesMatch<["value", "result"]>,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "a constant tensor";
  let description = [{
    ```mlir
    %c = mdl.constant dense<2.550000e+02> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let builders = [
    // A tensor of `type` with every element equal to `value` (converted to
    // the element type; for i1, nonzero is true).
    OpBuilder<(ins "::mlir::RankedTensorType":$type, "double":$value)>
  ];
}

#endif // MODELC_DIALECTS_MDL_ENTRYOPS_TD
