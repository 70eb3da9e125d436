// Linear algebra and neural-network ops: matmul, convolution, pooling,
// normalisation, embedding, dropout, attention and the losses.
#ifndef MODELC_DIALECTS_MDL_NNOPS_TD
#define MODELC_DIALECTS_MDL_NNOPS_TD

include "MdlDialect.td"
include "MdlInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Mdl_MatmulOp : Mdl_Op<"matmul", [
    Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "matrix product with torch.matmul's rules";
  let description = [{
    Two 1-D operands give their dot product (a scalar). A 1-D `lhs` is
    treated as a row `[1, k]` and a 1-D `rhs` as a column `[k, 1]`, and the
    added axis is removed from the result. Otherwise the last two axes are
    multiplied (`[.., n, k] x [.., k, m] -> [.., n, m]`) and the leading
    (batch) axes broadcast with NumPy's rules.

    ```mlir
    %y = mdl.matmul %x, %w : tensor<8x128x784xf32>, tensor<784x256xf32> -> tensor<8x128x256xf32>
    ```
  }];
  let arguments = (ins Mdl_NumericTensor:$lhs, Mdl_NumericTensor:$rhs);
  let results = (outs Mdl_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs)>
  ];
}

def Mdl_Conv2dOp : Mdl_Op<"conv2d", [
    Pure, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "2-D convolution, NCHW input and OIHW weight";
  let description = [{
    `input` is `[N, C, H, W]`, `weight` `[O, C / groups, kH, kW]`, the
    optional `bias` `[O]`; the result is `[N, O, Ho, Wo]` with
    `Ho = (H + 2 * padding[0] - dilation[0] * (kH - 1) - 1) / stride[0] + 1`
    (likewise `Wo`), as `torch.nn.functional.conv2d`.

    ```mlir
    %y = mdl.conv2d %x, %w, %b stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 1 : tensor<8x1x28x28xf32>, tensor<6x1x5x5xf32>, tensor<6xf32> -> tensor<8x6x28x28xf32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$weight,
                       Optional<Mdl_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, Mdl_I64Attr:$groups);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `stride` `=` $stride `padding` `=`
    $padding `dilation` `=` $dilation `groups` `=` $groups attr-dict `:`
    type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    // `bias` may be null.
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight,
                   "::mlir::Value":$bias, "::llvm::ArrayRef<int64_t>":$stride,
                   "::llvm::ArrayRef<int64_t>":$padding,
                   "::llvm::ArrayRef<int64_t>":$dilation, "int64_t":$groups)>
  ];
}

// A composite op: --mdl-decompose expands it (docs/passes/decompose.md).
def Mdl_ConvTranspose2dOp : Mdl_Op<"conv_transpose2d", [
    Pure, SameOperandsAndResultElementType]> {
  let summary = "2-D transposed convolution, NCHW input and IOHW weight";
  let description = [{
    As `torch.nn.functional.conv_transpose2d`: `input` is `[N, C, H, W]`,
    `weight` `[C, O / groups, kH, kW]`, the optional `bias` `[O]`; the
    result is `[N, O, Ho, Wo]` with `Ho = (H - 1) * stride[0] - 2 *
    padding[0] + dilation[0] * (kH - 1) + output_padding[0] + 1`, where the
    output padding (`0 <= output_padding < stride`; torch also allows it
    below the dilation) is carried by the result type: the result is the
    input of a `mdl.conv2d` whose output has the input's shape, and this op
    is that convolution's gradient with respect to its input.

    ```mlir
    %y = mdl.conv_transpose2d %x, %w, %b stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<8x16x7x7xf32>, tensor<16x8x4x4xf32>, tensor<8xf32> -> tensor<8x8x14x14xf32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$weight,
                       Optional<Mdl_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, Mdl_I64Attr:$groups);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `stride` `=` $stride `padding` `=`
    $padding `dilation` `=` $dilation `groups` `=` $groups attr-dict `:`
    type($input) `,` type($weight) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

// 2-D pooling over NCHW windows, as torch.nn.functional's (floor mode).
class Mdl_Pool2dOp<string mnemonic, Type tensorType, string opSummary>
    : Mdl_Op<mnemonic, [
        Pure, SameOperandsAndResultElementType,
        DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = opSummary;
  let description = [{
    `input` is `[N, C, H, W]`, the result `[N, C, Ho, Wo]` with
    `Ho = (H + 2 * padding[0] - kernel[0]) / stride[0] + 1` (likewise `Wo`);
    `padding` is at most half the kernel.

    ```mlir
    %p = mdl.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<8x6x28x28xf32> -> tensor<8x6x14x14xf32>
    ```
  }];
  let arguments = (ins tensorType:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding);
  let results = (outs tensorType:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::mdl::verifyPool2dOp(getOperation(), getKernel(),
                                         getStride(), getPadding());
    }
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$kernel,
                   "::llvm::ArrayRef<int64_t>":$stride,
                   "::llvm::ArrayRef<int64_t>":$padding), [{
      build($_builder, $_state,
            inferPool2dType(input.getType(), kernel, stride, padding), input,
            kernel, stride, padding);
    }]>
  ];
}

def Mdl_MaxPool2dOp : Mdl_Pool2dOp<"max_pool2d", Mdl_NumericTensor,
                                   "2-D max pooling">;
// Padding counts as zeros in the average, as with PyTorch's default
// count_include_pad = True.
def Mdl_AvgPool2dOp : Mdl_Pool2dOp<"avg_pool2d", Mdl_FloatTensor,
                                   "2-D average pooling">;

def Mdl_LayerNormOp : Mdl_Op<"layer_norm", [
    Pure, SameOperandsAndResultElementType,
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "layer normalisation over the last axis";
  let description = [{
    `(x - mean) / sqrt(var + eps) * weight + bias` along the last axis, with
    the biased variance; `weight` and `bias` have the last axis' size.

    ```mlir
    %y = mdl.layer_norm %x, %w, %b eps = 1.000000e-05 : tensor<8x64x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<8x64x768xf32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$weight,
                       Mdl_FloatTensor:$bias,
                       DefaultValuedAttr<F64Attr, "1e-5">:$eps);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias `eps` `=` $eps attr-dict `:` type($input) `,`
    type($weight) `,` type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

// A composite op: --mdl-decompose expands it (docs/passes/decompose.md).
def Mdl_RmsNormOp : Mdl_Op<"rms_norm", [
    Pure, SameOperandsAndResultElementType,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "root-mean-square normalisation over the last axis";
  let description = [{
    `x * rsqrt(mean(x^2) + eps) * weight` along the last axis, as PyTorch's
    `rms_norm` over the last axis; the optional `weight` has the last
    axis' size.

    ```mlir
    %y = mdl.rms_norm %x, %w eps = 1.1920928955078125E-7 : tensor<8x64x768xf32>, tensor<768xf32> -> tensor<8x64x768xf32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input,
                       Optional<Mdl_FloatTensor>:$weight, F64Attr:$eps);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $weight^)? `eps` `=` $eps attr-dict `:` type($input)
    (`,` type($weight)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

// A composite op: --mdl-decompose expands it (docs/passes/decompose.md).
// Not Pure: in a fwd_bwd function it updates the running statistics.
def Mdl_BatchNormOp : Mdl_Op<"batch_norm", [
    AllTypesMatch<["input", "result"]>,
    AllTypesMatch<["weight", "bias", "running_mean", "running_var"]>]> {
  let summary = "batch normalisation over the channel axis (axis 1)";
  let description = [{
    `torch.nn.functional.batch_norm` on `[n, c, ...]`. In a fwd_bwd
    function (training) the input is normalised with the mean and the
    biased variance of the batch over every axis but 1, and the running
    statistics, which must be `mdl.load`s of buffers (`mdl.param buffer`),
    are updated by `(1 - momentum) * running + momentum * batch` with the
    unbiased variance, and `num_batches_tracked` (optional) by 1. Elsewhere
    (eval, infer) it normalises with the running statistics and changes
    nothing. `weight`, `bias` and the statistics are `[c]`.

    ```mlir
    %y = mdl.batch_norm %x, %w, %b running %rm, %rv tracked %n momentum = 1.000000e-01 eps = 1.000000e-05 : tensor<8x16x28x28xf32>, tensor<16xf32>, tensor<i64> -> tensor<8x16x28x28xf32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$weight,
                       Mdl_FloatTensor:$bias, Mdl_FloatTensor:$running_mean,
                       Mdl_FloatTensor:$running_var,
                       Optional<Mdl_IntTensor>:$num_batches_tracked,
                       F64Attr:$momentum, F64Attr:$eps);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias `running` $running_mean `,` $running_var
    (`tracked` $num_batches_tracked^)? `momentum` `=` $momentum `eps` `=` $eps
    attr-dict `:` type($input) `,` type($weight)
    (`,` type($num_batches_tracked)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mdl_EmbeddingOp : Mdl_Op<"embedding", [
    Pure, AllElementTypesMatch<["table", "result"]>,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "rows of a table selected by integer ids";
  let description = [{
    `table` is `[V, D]`; the result is `ids.shape + [D]`.

    ```mlir
    %e = mdl.embedding %ids, %wte : tensor<8x64xi32>, tensor<50257x768xf32> -> tensor<8x64x768xf32>
    ```
  }];
  let arguments = (ins Mdl_IntTensor:$ids, Mdl_FloatTensor:$table);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $table attr-dict `:` type($ids) `,` type($table) `->`
    type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$ids, "::mlir::Value":$table)>
  ];
}

// The recurrence of torch.nn.LSTM, one layer and one direction, as a loop
// over time (never unrolled: its size does not grow with the sequence).
def Mdl_LstmScanOp : Mdl_Op<"lstm_scan", [
    Pure,
    AllElementTypesMatch<["input", "weight_hh", "h0", "c0", "hidden", "cell",
                          "gates"]>,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "the time loop of one LSTM layer";
  let description = [{
    `input` is `[b, t, 4h]`, the input projection `x W_ih^T + b_ih + b_hh`
    of every step with torch.nn.LSTM's gate order (i, f, g, o);
    `weight_hh` is `[4h, h]`, `h0` and `c0` are `[b, h]`. For each step s:

        pre = input[:, s] + hidden[:, s] W_hh^T
        i, f, o = sigmoid(pre_i), sigmoid(pre_f), sigmoid(pre_o)
        g = tanh(pre_g)
        cell[:, s + 1] = f * cell[:, s] + i * g
        hidden[:, s + 1] = o * tanh(cell[:, s + 1])

    with `hidden[:, 0] = h0` and `cell[:, 0] = c0`, so `hidden` and `cell`
    are `[b, t + 1, h]`. `gates` (`[b, t, 4h]`) keeps the activated gates
    for `mdl.lstm_scan_grad`; it has no adjoint of its own. f32 or f64
    (automatic mixed precision runs it in f32).

    ```mlir
    %h, %c, %g = mdl.lstm_scan %xw, %w_hh, %h0, %c0 : (tensor<4x16x32xf32>, tensor<32x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x17x8xf32>, tensor<4x17x8xf32>, tensor<4x16x32xf32>)
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$weight_hh,
                       Mdl_FloatTensor:$h0, Mdl_FloatTensor:$c0);
  let results = (outs Mdl_FloatTensor:$hidden, Mdl_FloatTensor:$cell,
                      Mdl_FloatTensor:$gates);
  let assemblyFormat = [{
    $input `,` $weight_hh `,` $h0 `,` $c0 attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

// The recurrence of torch.nn.GRU, one layer and one direction, as a loop
// over time.
def Mdl_GruScanOp : Mdl_Op<"gru_scan", [
    Pure,
    AllElementTypesMatch<["input", "weight_hh", "bias_hh", "h0", "hidden",
                          "gates", "recurrent_n"]>,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "the time loop of one GRU layer";
  let description = [{
    `input` is `[b, t, 3h]`, the input projection `x W_ih^T + b_ih` of
    every step with torch.nn.GRU's gate order (r, z, n); `weight_hh` is
    `[3h, h]`, `bias_hh` `[3h]`, `h0` `[b, h]`. For each step s, with
    `hw = hidden[:, s] W_hh^T + b_hh`:

        r = sigmoid(input_r + hw_r), z = sigmoid(input_z + hw_z)
        n = tanh(input_n + r * hw_n)
        hidden[:, s + 1] = n + z * (hidden[:, s] - n)

    with `hidden[:, 0] = h0` (`[b, t + 1, h]`). `gates` (`[b, t, 3h]`, the
    activated r, z, n) and `recurrent_n` (`[b, t, h]`, each step's `hw_n`)
    are kept for `mdl.gru_scan_grad`; they have no adjoint of their own.
    f32 or f64 (automatic mixed precision runs it in f32).

    ```mlir
    %h, %g, %n = mdl.gru_scan %xw, %w_hh, %b_hh, %h0 : (tensor<4x16x24xf32>, tensor<24x8xf32>, tensor<24xf32>, tensor<4x8xf32>) -> (tensor<4x17x8xf32>, tensor<4x16x24xf32>, tensor<4x16x8xf32>)
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$weight_hh,
                       Mdl_FloatTensor:$bias_hh, Mdl_FloatTensor:$h0);
  let results = (outs Mdl_FloatTensor:$hidden, Mdl_FloatTensor:$gates,
                      Mdl_FloatTensor:$recurrent_n);
  let assemblyFormat = [{
    $input `,` $weight_hh `,` $bias_hh `,` $h0 attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

// Not Pure: two dropouts of one value draw different masks, so they must
// not be merged.
def Mdl_DropoutOp : Mdl_Op<"dropout", [SameOperandsAndResultType]> {
  let summary = "zeroes elements with probability p while training";
  let description = [{
    While training, each element is zeroed with probability `p` and the
    others are scaled by `1 / (1 - p)`; outside training it is the identity.

    ```mlir
    %d = mdl.dropout %x p = 1.000000e-01 : tensor<8x64x768xf32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input, F64Attr:$p);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = "$input `p` `=` $p attr-dict `:` type($result)";
  let hasVerifier = 1;
}

// Not Pure: with a dropout, two attentions of the same operands draw
// different masks, so they must not be merged (as mdl.dropout).
def Mdl_AttentionOp : Mdl_Op<"attention", [AllElementTypesMatch<["query", "key", "value", "result"]>]> {
  let summary = "scaled dot-product attention";
  let description = [{
    `dropout(softmax(q @ k^T * scale [masked])) @ v` as PyTorch's
    `scaled_dot_product_attention`: `query` `[b, h, t, d]`, `key`
    `[b, h, s, d]`, `value` `[b, h, s, dv]`, result `[b, h, t, dv]`. With
    `causal`, query `i` sees keys `0 ..= i`; with a boolean `mask`
    broadcastable to `[b, h, t, s]`, only the keys where it is true (both
    when both are given). `dropout` applies to the attention weights while
    training.

    ```mlir
    %o = mdl.attention %q, %k, %v causal scale = 1.250000e-01 : tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32> -> tensor<8x12x64x64xf32>
    %p = mdl.attention %q, %k, %v mask %m scale = 1.250000e-01 dropout = 1.000000e-01 : tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>, tensor<8x1x1x64xi1> -> tensor<8x12x64x64xf32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$query, Mdl_FloatTensor:$key,
                       Mdl_FloatTensor:$value,
                       Optional<Mdl_BoolTensor>:$mask, UnitAttr:$causal,
                       F64Attr:$scale,
                       DefaultValuedAttr<F64Attr, "0.0">:$dropout);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? (`causal` $causal^)? `scale`
    `=` $scale (`dropout` `=` $dropout^)? attr-dict `:` type($query) `,`
    type($key) `,` type($value) (`,` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    // Without `scale`, it is 1 / sqrt(d).
    OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, "bool":$causal,
                   CArg<"std::optional<double>", "std::nullopt">:$scale)>
  ];
}

// Pure: the dropout (if any) is a function of its seed and counter
// operands and its `dropout_id`, as mdl.dropout_mask is.
def Mdl_AttentionForwardOp : Mdl_Op<"attention_forward", [
    Pure, AttrSizedOperandSegments,
    AllElementTypesMatch<["query", "key", "value", "result"]>,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "fused scaled dot-product attention, with its log-sum-exp";
  let description = [{
    `mdl.attention` as one fused computation (--mdl-decompose makes it):
    `result` is `dropout(softmax(q @ k^T * scale [masked])) @ v` and `lse`
    (`[b, h, t]`, f32 for 16-bit and f32 inputs, else the inputs' type) is
    each query's log-sum-exp of its scaled visible scores, `m + log(l)`,
    which is all the backward needs besides the result to recompute the
    probabilities (FlashAttention-2). The softmax statistics and the
    products accumulate in the wider of f32 and the inputs' type; with
    16-bit inputs, the probabilities are rounded to the inputs' type before
    they multiply `v`. With `seed` and `counter` (0-d f64, the hyper
    buffers), the probabilities are dropped with probability `dropout` by
    mdl.dropout_mask's hash with `dropout_id` as its id, over the scores'
    shape `[b, h, t, s]`; without them, `dropout` must be 0. A query that
    sees no key gives NaN, as softmax of nothing but -inf does.

    ```mlir
    %o, %lse = mdl.attention_forward %q, %k, %v causal scale = 1.250000e-01 : tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32> -> tensor<8x12x64x64xf32>, tensor<8x12x64xf32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$query, Mdl_FloatTensor:$key,
                       Mdl_FloatTensor:$value,
                       Optional<Mdl_BoolTensor>:$mask,
                       Optional<RankedTensorOf<[F64]>>:$seed,
                       Optional<RankedTensorOf<[F64]>>:$counter,
                       UnitAttr:$causal, F64Attr:$scale,
                       DefaultValuedAttr<F64Attr, "0.0">:$dropout,
                       DefaultValuedAttr<Mdl_I64Attr, "0">:$dropout_id);
  let results = (outs Mdl_FloatTensor:$result, Mdl_FloatTensor:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^ `:` type($mask))?
    (`rng` `(` $seed^ `,` $counter `:` type($seed) `,` type($counter) `)`)? (`causal` $causal^)? `scale` `=`
    $scale (`dropout` `=` $dropout^)? (`id` `=` $dropout_id^)? attr-dict `:`
    type($query) `,` type($key) `,` type($value) `->` type($result) `,`
    type($lse)
  }];
  let hasVerifier = 1;
}

def Mdl_CrossEntropyOp : Mdl_Op<"cross_entropy", [
    Pure, DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "softmax cross-entropy, mean over non-ignored positions";
  let description = [{
    The class axis is the last axis of `logits`; `labels` has the logits'
    shape without it. Positions whose label is `ignore_index` do not count.

    ```mlir
    %l = mdl.cross_entropy %logits, %labels ignore_index = -100 : tensor<128x10xf32>, tensor<128xi32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$logits, Mdl_IntTensor:$labels,
                       DefaultValuedAttr<Mdl_I64Attr, "-100">:$ignore_index);
  // f32 from the frontend; f64 only under --mdl-widen-to-f64.
  let results = (outs Mdl_FloatScalar:$result);
  let assemblyFormat = [{
    $logits `,` $labels `ignore_index` `=` $ignore_index attr-dict `:`
    type($logits) `,` type($labels) `->` type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$logits, "::mlir::Value":$labels,
                   CArg<"int64_t", "-100">:$ignoreIndex), [{
      build($_builder, $_state,
            ::mlir::RankedTensorType::get({}, $_builder.getF32Type()), logits,
            labels, ignoreIndex);
    }]>
  ];
}

// A composite op: --mdl-decompose expands it (docs/passes/decompose.md).
def Mdl_NllLossOp : Mdl_Op<"nll_loss", [Pure]> {
  let summary = "negative log-likelihood, mean over non-ignored positions";
  let description = [{
    `-mean(log_probs[..., label])` over the positions whose label is not
    `ignore_index`, as PyTorch's `nll_loss`; the class axis is the last
    axis of `log_probs`, `labels` has their shape without it. With
    `label_smoothing` ε, `(1 - ε) * nll + ε / C * mean(-sum(log_probs, -1))`
    over the same positions, as PyTorch's `cross_entropy(label_smoothing)`
    computes it after its log_softmax. The result is f32 (f64 for f64
    log-probabilities).

    ```mlir
    %l = mdl.nll_loss %lp, %y ignore_index = -100 label_smoothing = 0.000000e+00 : tensor<128x10xf32>, tensor<128xi32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$log_probs, Mdl_IntTensor:$labels,
                       Mdl_I64Attr:$ignore_index, F64Attr:$label_smoothing);
  let results = (outs Mdl_FloatScalar:$result);
  let assemblyFormat = [{
    $log_probs `,` $labels `ignore_index` `=` $ignore_index `label_smoothing`
    `=` $label_smoothing attr-dict `:` type($log_probs) `,` type($labels) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

// A composite op: --mdl-decompose expands it (docs/passes/decompose.md).
def Mdl_BceWithLogitsOp : Mdl_Op<"bce_with_logits", [
    Pure, SameOperandsElementType, AllElementTypesMatch<["input", "result"]>]> {
  let summary = "binary cross-entropy on logits, mean over all elements";
  let description = [{
    `mean((1 - t) * x - w * log_sigmoid(x))` with `w = (pos_weight - 1) * t
    + 1` (1 without `pos_weight`), as PyTorch's
    `binary_cross_entropy_with_logits`; `target` has the input's shape,
    the optional `pos_weight` the last axis' size.

    ```mlir
    %l = mdl.bce_with_logits %x, %t : tensor<128x5xf32>, tensor<128x5xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$target,
                       Optional<Mdl_FloatTensor>:$pos_weight);
  let results = (outs Mdl_FloatScalar:$result);
  let assemblyFormat = [{
    $input `,` $target (`,` $pos_weight^)? attr-dict `:` type($input) `,`
    type($target) (`,` type($pos_weight)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mdl_MseLossOp : Mdl_Op<"mse_loss", [
    Pure, SameTypeOperands, AllElementTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "mean squared error";
  let description = [{
    ```mlir
    %l = mdl.mse_loss %y, %t : tensor<128x1xf32>, tensor<128x1xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$target);
  let results = (outs Mdl_FloatScalar:$result);
  let assemblyFormat = [{
    $input `,` $target attr-dict `:` type($input) `,` type($target) `->`
    type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$target), [{
      build($_builder, $_state,
            ::mlir::RankedTensorType::get({},
                getElementTypeOrSelf(input.getType())), input, target);
    }]>
  ];
}

def Mdl_AccuracyOp : Mdl_Op<"accuracy", [Pure]> {
  let summary = "fraction of positions whose argmax equals the label";
  let description = [{
    A metric, not differentiable. Shapes as for `mdl.cross_entropy`.

    ```mlir
    %a = mdl.accuracy %logits, %labels : tensor<128x10xf32>, tensor<128xui8> -> tensor<f32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$logits, Mdl_IntTensor:$labels);
  // f32 from the frontend; f64 only under --mdl-widen-to-f64.
  let results = (outs Mdl_FloatScalar:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->`
    type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$logits, "::mlir::Value":$labels), [{
      build($_builder, $_state,
            ::mlir::RankedTensorType::get({}, $_builder.getF32Type()), logits,
            labels);
    }]>
  ];
}

#endif // MODELC_DIALECTS_MDL_NNOPS_TD
