// Ops that only the autodiff pass creates: the parts of vector-Jacobian
// products that have no compact form in the other mdl ops.
#ifndef MODELC_DIALECTS_MDL_GRADOPS_TD
#define MODELC_DIALECTS_MDL_GRADOPS_TD

include "MdlDialect.td"
include "MdlInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Also the expansion of mdl.conv_transpose2d, so it is differentiable.
def Mdl_Conv2dGradInputOp : Mdl_Op<"conv2d_grad_input", [
    Pure, DeclareOpInterfaceMethods<Mdl_DifferentiableOpInterface>]> {
  let summary = "gradient of conv2d with respect to its input";
  let description = [{
    Given the result adjoint `grad` `[N, O, Ho, Wo]` and the `weight`
    `[O, C / groups, kH, kW]` of a `mdl.conv2d` with these attributes, the
    adjoint of its input, whose type is the result type (a transposed
    convolution; rows and columns that the forward never read get zeros).
  }];
  let arguments = (ins Mdl_FloatTensor:$grad, Mdl_FloatTensor:$weight,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, Mdl_I64Attr:$groups);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $weight `stride` `=` $stride `padding` `=` $padding
    `dilation` `=` $dilation `groups` `=` $groups attr-dict `:`
    type($grad) `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mdl_Conv2dGradWeightOp : Mdl_Op<"conv2d_grad_weight", [Pure]> {
  let summary = "gradient of conv2d with respect to its weight";
  let description = [{
    Given the forward `input` `[N, C, H, W]` and the result adjoint `grad`
    `[N, O, Ho, Wo]` of a `mdl.conv2d` with these attributes, the adjoint of
    its weight `[O, C / groups, kH, kW]` (the result type).
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$grad,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, Mdl_I64Attr:$groups);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad `stride` `=` $stride `padding` `=` $padding
    `dilation` `=` $dilation `groups` `=` $groups attr-dict `:`
    type($input) `,` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mdl_MaxPool2dGradOp : Mdl_Op<"max_pool2d_grad", [Pure]> {
  let summary = "gradient of max_pool2d with respect to its input";
  let description = [{
    Routes each element of `grad` (the result adjoint) to the position of
    the maximum of its window in `input` (the first one in row-major order
    on ties, as PyTorch); positions that are the maximum of several windows
    get the sum. The result has `input`'s type.
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$grad,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad `kernel` `=` $kernel `stride` `=` $stride `padding` `=`
    $padding attr-dict `:` type($input) `,` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mdl_AvgPool2dGradOp : Mdl_Op<"avg_pool2d_grad", [Pure]> {
  let summary = "gradient of avg_pool2d with respect to its input";
  let description = [{
    Spreads each element of `grad` evenly over its window (divisor
    `kernel[0] * kernel[1]`, padding counted, as `count_include_pad`);
    the result type is the forward input's.
  }];
  let arguments = (ins Mdl_FloatTensor:$grad, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `kernel` `=` $kernel `stride` `=` $stride `padding` `=` $padding
    attr-dict `:` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mdl_EmbeddingGradOp : Mdl_Op<"embedding_grad", [Pure]> {
  let summary = "gradient of embedding with respect to its table";
  let description = [{
    Scatter-adds the rows of `grad` (`ids`'s shape + `[dim]`) into a zero
    table of the result type `[num, dim]`, row `ids[i]` receiving
    `grad[i]`.
  }];
  let arguments = (ins Mdl_IntTensor:$ids, Mdl_FloatTensor:$grad);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $grad attr-dict `:` type($ids) `,` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mdl_GeluGradOp : Mdl_Op<"gelu_grad", [Pure, SameOperandsAndResultType]> {
  let summary = "gradient of gelu: grad * gelu'(input)";
  let description = [{
    `approximate` as in `mdl.gelu`.
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$grad,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mdl_LayerNormGradOp : Mdl_Op<"layer_norm_grad", [
    Pure, AllTypesMatch<["input", "grad", "input_grad"]>,
    AllTypesMatch<["weight", "weight_grad", "bias_grad"]>]> {
  let summary = "gradient of layer_norm, in one op";
  let description = [{
    Given the input `x` `[rows.., n]`, the `weight` `[n]` and the result
    adjoint `grad` of a `mdl.layer_norm` with this `eps`, the adjoints of
    its input, weight and bias, with the statistics recomputed from `x`:
    `mean = sum(x) / n`, `rstd = 1 / sqrt(sum((x - mean)^2) / n + eps)`,
    `xhat = (x - mean) * rstd`, `dxhat = grad * weight`, and
    `input_grad = rstd * (dxhat - sum(dxhat) / n - xhat * sum(dxhat * xhat) / n)`
    (sums over the last axis), `weight_grad = sum(grad * xhat)` and
    `bias_grad = sum(grad)` over the rows. One op, so that each target
    lowers it as a few passes over the rows (docs/codegen/lower-to-linalg-nn.md).

    ```mlir
    %dx, %dw, %db = mdl.layer_norm_grad %x, %w, %g eps = 1.000000e-05 : tensor<8x64x768xf32>, tensor<768xf32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$input, Mdl_FloatTensor:$weight,
                       Mdl_FloatTensor:$grad, F64Attr:$eps);
  let results = (outs Mdl_FloatTensor:$input_grad,
                      Mdl_FloatTensor:$weight_grad,
                      Mdl_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $input `,` $weight `,` $grad `eps` `=` $eps attr-dict `:` type($input) `,`
    type($weight)
  }];
  let hasVerifier = 1;
}

def Mdl_CrossEntropyGradOp : Mdl_Op<"cross_entropy_grad", [Pure]> {
  let summary = "gradient of cross_entropy with respect to the logits";
  let description = [{
    `(softmax(logits) - one_hot(labels)) * grad / count` row by row, where
    `grad` is the 0-d adjoint of the loss and `count` the number of labels
    not equal to `ignore_index`; rows with an ignored label get zeros. The
    result has `logits`'s type.
  }];
  let arguments = (ins Mdl_FloatTensor:$logits, Mdl_IntTensor:$labels,
                       Mdl_FloatScalar:$grad, Mdl_I64Attr:$ignore_index);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $grad `ignore_index` `=` $ignore_index attr-dict
    `:` type($logits) `,` type($labels) `,` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mdl_SliceGradOp : Mdl_Op<"slice_grad", [Pure, SameOperandsAndResultElementType]> {
  let summary = "gradient of slice: the adjoint placed in a zero tensor";
  let description = [{
    The result (the forward input's type) is zero except at the positions
    the `mdl.slice` with these attributes read, which hold `grad`.
  }];
  let arguments = (ins Mdl_FloatTensor:$grad, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$strides);
  let results = (outs Mdl_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `starts` `=` $starts `limits` `=` $limits `strides` `=` $strides
    attr-dict `:` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mdl_LstmScanGradOp : Mdl_Op<"lstm_scan_grad", [
    Pure,
    AllElementTypesMatch<["hidden_grad", "cell_grad", "gates", "cell",
                          "weight_hh", "input_grad", "h0_grad", "c0_grad"]>]> {
  let summary = "gradient of lstm_scan, as a loop backwards over time";
  let description = [{
    From the adjoints of `mdl.lstm_scan`'s `hidden` and `cell`
    (`[b, t + 1, h]`) and its saved `gates` and `cell`, steps s = t - 1
    down to 0 (PyTorch's `_thnn_fused_lstm_cell_backward`, step by step):

        dh = hidden_grad[:, s + 1] + (carried from step s + 1)
        dc = cell_grad[:, s + 1] + (carried) + dh * o * (1 - tanh(c)^2)
        input_grad[:, s] = (dc * g * i (1 - i), dc * cell[:, s] * f (1 - f),
                            dc * i * (1 - g^2), dh * tanh(c) * o (1 - o))
        carried: dh = input_grad[:, s] W_hh, dc = dc * f

    where c = cell[:, s + 1]. `h0_grad` and `c0_grad` add the carried
    values to the adjoints at step 0. The gradient of `weight_hh` is a
    matrix product outside the loop (the VJP builds it).

    ```mlir
    %dx, %dh0, %dc0 = mdl.lstm_scan_grad %dh, %dc, %g, %c, %w_hh : (tensor<4x17x8xf32>, tensor<4x17x8xf32>, tensor<4x16x32xf32>, tensor<4x17x8xf32>, tensor<32x8xf32>) -> (tensor<4x16x32xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$hidden_grad,
                       Mdl_FloatTensor:$cell_grad, Mdl_FloatTensor:$gates,
                       Mdl_FloatTensor:$cell, Mdl_FloatTensor:$weight_hh);
  let results = (outs Mdl_FloatTensor:$input_grad, Mdl_FloatTensor:$h0_grad,
                      Mdl_FloatTensor:$c0_grad);
  let assemblyFormat = [{
    $hidden_grad `,` $cell_grad `,` $gates `,` $cell `,` $weight_hh attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mdl_GruScanGradOp : Mdl_Op<"gru_scan_grad", [
    Pure,
    AllElementTypesMatch<["hidden_grad", "gates", "recurrent_n", "hidden",
                          "weight_hh", "input_grad", "recurrent_grad",
                          "h0_grad"]>]> {
  let summary = "gradient of gru_scan, as a loop backwards over time";
  let description = [{
    From the adjoint of `mdl.gru_scan`'s `hidden` (`[b, t + 1, h]`) and its
    saved `gates`, `recurrent_n` and `hidden`, steps s = t - 1 down to 0
    (PyTorch's `_thnn_fused_gru_cell_backward`, step by step), with
    `dh = hidden_grad[:, s + 1] + (carried from step s + 1)` and
    `h = hidden[:, s]`:

        dpre_n = dh (1 - z) (1 - n^2)
        dpre_r = dpre_n hw_n r (1 - r),  dpre_z = dh (h - n) z (1 - z)
        input_grad[:, s] = (dpre_r, dpre_z, dpre_n)
        recurrent_grad[:, s] = (dpre_r, dpre_z, dpre_n r)
        carried: dh z + recurrent_grad[:, s] W_hh

    `h0_grad` adds the carried value to `hidden_grad[:, 0]`. The gradients
    of `weight_hh` and `bias_hh` are a matrix product and a sum of
    `recurrent_grad` outside the loop (the VJP builds them).

    ```mlir
    %dx, %dhw, %dh0 = mdl.gru_scan_grad %dh, %g, %n, %h, %w_hh : (tensor<4x17x8xf32>, tensor<4x16x24xf32>, tensor<4x16x8xf32>, tensor<4x17x8xf32>, tensor<24x8xf32>) -> (tensor<4x16x24xf32>, tensor<4x16x24xf32>, tensor<4x8xf32>)
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$hidden_grad, Mdl_FloatTensor:$gates,
                       Mdl_FloatTensor:$recurrent_n, Mdl_FloatTensor:$hidden,
                       Mdl_FloatTensor:$weight_hh);
  let results = (outs Mdl_FloatTensor:$input_grad,
                      Mdl_FloatTensor:$recurrent_grad,
                      Mdl_FloatTensor:$h0_grad);
  let assemblyFormat = [{
    $hidden_grad `,` $gates `,` $recurrent_n `,` $hidden `,` $weight_hh
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}


def Mdl_AttentionBackwardOp : Mdl_Op<"attention_backward", [
    Pure, AttrSizedOperandSegments,
    AllElementTypesMatch<["query", "key", "value", "output", "output_grad",
                          "query_grad", "key_grad", "value_grad"]>]> {
  let summary = "gradient of attention_forward, probabilities recomputed";
  let description = [{
    From `mdl.attention_forward`'s operands, its `output` O, the adjoint
    `output_grad` dO and its `lse` L, the adjoints of query, key and value
    without any `[t, s]` tensor (FlashAttention-2's backward): with
    `D_i = dO_i . O_i`, for each visible pair (i, j)

        p_ij = exp(scale q_i . k_j - L_i),  z_ij = the dropout factor
        dV_j += p_ij z_ij dO_i
        dS_ij = p_ij (z_ij dO_i . v_j - D_i)
        dQ_i += scale dS_ij k_j,  dK_j += scale dS_ij q_i

    The mask, causal, scale and dropout operands and attributes are the
    forward's, so the same pairs are visible and the same are dropped.

    ```mlir
    %dq, %dk, %dv = mdl.attention_backward %q, %k, %v, %o, %do, %lse causal scale = 1.250000e-01 : tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>, tensor<8x12x64xf32> -> tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>
    ```
  }];
  let arguments = (ins Mdl_FloatTensor:$query, Mdl_FloatTensor:$key,
                       Mdl_FloatTensor:$value, Mdl_FloatTensor:$output,
                       Mdl_FloatTensor:$output_grad, Mdl_FloatTensor:$lse,
                       Optional<Mdl_BoolTensor>:$mask,
                       Optional<RankedTensorOf<[F64]>>:$seed,
                       Optional<RankedTensorOf<[F64]>>:$counter,
                       UnitAttr:$causal, F64Attr:$scale,
                       DefaultValuedAttr<F64Attr, "0.0">:$dropout,
                       DefaultValuedAttr<Mdl_I64Attr, "0">:$dropout_id);
  let results = (outs Mdl_FloatTensor:$query_grad, Mdl_FloatTensor:$key_grad,
                      Mdl_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $output_grad `,` $lse
    (`mask` $mask^ `:` type($mask))? (`rng` `(` $seed^ `,` $counter `:` type($seed) `,` type($counter) `)`)?
    (`causal` $causal^)? `scale` `=` $scale (`dropout` `=` $dropout^)?
    (`id` `=` $dropout_id^)? attr-dict `:` type($query) `,` type($key) `,`
    type($value) `,` type($output) `,` type($output_grad) `,` type($lse) `->`
    type($query_grad) `,` type($key_grad) `,` type($value_grad)
  }];
  let hasVerifier = 1;
}

#endif // MODELC_DIALECTS_MDL_GRADOPS_TD
