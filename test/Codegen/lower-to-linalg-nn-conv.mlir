// --mdl-lower-to-linalg on mdl.conv2d and its gradients: im2col as a
// copying linalg.generic with an affine read of the padded input, one GEMM
// (batched over groups), col2im as a gather over the input.
// RUN: modelc-opt %s --mdl-lower-to-linalg --split-input-file | FileCheck %s

// LeNet's first layer (1 -> 6, 5x5, padding 2 on 28x28, batch 64): a zero
// pad to 32x32, im2col [25, 64*28*28] from the 7-D copy (g, c, i, j, n, y, x)
// reading xpad[n, g + c, y + i, x + j], one linalg.matmul
// W[6, 25] @ col[25, 50176], then [6, 64, 28, 28] to NCHW plus the bias.
// CHECK-DAG: #[[$IM2COL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d1, d5 + d2, d6 + d3)>
// CHECK-DAG: #[[$ID7:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5, d6)>
// CHECK-DAG: #[[$SWAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-DAG: #[[$CHANNEL:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @lenet_conv1
// CHECK-SAME: (%[[X:.*]]: tensor<64x1x28x28xf32>, %[[W:.*]]: tensor<6x1x5x5xf32>, %[[B:.*]]: tensor<6xf32>)
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 2, 2] high[0, 0, 2, 2]
// CHECK: } : tensor<64x1x28x28xf32> to tensor<64x1x32x32xf32>
// CHECK: %[[COL7:.*]] = linalg.generic {indexing_maps = [#[[$IM2COL]], #[[$ID7]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[PAD]] : tensor<64x1x32x32xf32>) outs(%{{.*}} : tensor<1x1x5x5x64x28x28xf32>)
// CHECK: %[[COL:.*]] = tensor.collapse_shape %[[COL7]] {{\[}}[0, 1, 2, 3], [4, 5, 6]] : tensor<1x1x5x5x64x28x28xf32> into tensor<25x50176xf32>
// CHECK: %[[WM:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<6x1x5x5xf32> into tensor<6x25xf32>
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<6x50176xf32>)
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[WM]], %[[COL]] : tensor<6x25xf32>, tensor<25x50176xf32>) outs(%[[FILL]] : tensor<6x50176xf32>)
// CHECK: %[[Y4:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0], [1, 2, 3]] output_shape [6, 64, 28, 28]
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[$SWAP]], #[[$CHANNEL]], {{.*}}]{{.*}} ins(%[[Y4]], %[[B]] : tensor<6x64x28x28xf32>, tensor<6xf32>) outs(%{{.*}} : tensor<64x6x28x28xf32>)
// CHECK: arith.addf
// CHECK: return %[[OUT]]
func.func @lenet_conv1(%x: tensor<64x1x28x28xf32>, %w: tensor<6x1x5x5xf32>, %b: tensor<6xf32>) -> tensor<64x6x28x28xf32> {
  %y = mdl.conv2d %x, %w, %b stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 1 : tensor<64x1x28x28xf32>, tensor<6x1x5x5xf32>, tensor<6xf32> -> tensor<64x6x28x28xf32>
  return %y : tensor<64x6x28x28xf32>
}

// -----

// Strides [2, 3], padding [1, 0] (H only), dilation [1, 2], 2 groups of 2
// input and 3 output channels: im2col reads
// xpad[n, 2g + c, 2y + i, 3x + 2j] into [2, 2*3*3, 2*5*2], the weight is
// [2 groups, 3, 18] and the GEMM a batch_matmul over the groups. No bias:
// the last generic only reorders to NCHW.
// CHECK-DAG: #[[$IM2COL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 * 2 + d1, d5 * 2 + d2, d6 * 3 + d3 * 2)>
// CHECK-LABEL: func.func @strided_dilated_grouped
// CHECK: %[[PAD:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 0] high[0, 0, 1, 0]
// CHECK: } : tensor<2x4x9x9xf32> to tensor<2x4x11x9xf32>
// CHECK: %[[COL7:.*]] = linalg.generic {indexing_maps = [#[[$IM2COL]], {{.*}}]{{.*}} ins(%[[PAD]] : tensor<2x4x11x9xf32>) outs(%{{.*}} : tensor<2x2x3x3x2x5x2xf32>)
// CHECK: %[[COL:.*]] = tensor.collapse_shape %[[COL7]] {{\[}}[0], [1, 2, 3], [4, 5, 6]] : tensor<2x2x3x3x2x5x2xf32> into tensor<2x18x20xf32>
// CHECK: %[[WG:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 3, 18]
// CHECK: %[[Y:.*]] = linalg.batch_matmul ins(%[[WG]], %[[COL]] : tensor<2x3x18xf32>, tensor<2x18x20xf32>) outs(%{{.*}} : tensor<2x3x20xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6x5x2xf32>)
// CHECK-NOT: arith.addf
// CHECK: return
func.func @strided_dilated_grouped(%x: tensor<2x4x9x9xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<2x6x5x2xf32> {
  %y = mdl.conv2d %x, %w stride = [2, 3] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x5x2xf32>
  return %y : tensor<2x6x5x2xf32>
}

// -----

// The weight gradient: dY to [6, 64*28*28] (swapping N and O), im2col of
// the input as in the forward, dW[6, 25] = dY @ col^T read transposed.
// CHECK-LABEL: func.func @lenet_conv1_grad_weight
// CHECK-SAME: (%[[X:.*]]: tensor<64x1x28x28xf32>, %[[G:.*]]: tensor<64x6x28x28xf32>)
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]]
// CHECK: %[[COL7:.*]] = linalg.generic {{.*}} ins(%[[PAD]] : tensor<64x1x32x32xf32>) outs(%{{.*}} : tensor<1x1x5x5x64x28x28xf32>)
// CHECK: %[[COL:.*]] = tensor.collapse_shape %[[COL7]] {{.*}} into tensor<25x50176xf32>
// CHECK: %[[GT:.*]] = linalg.generic {{.*}} ins(%[[G]] : tensor<64x6x28x28xf32>) outs(%{{.*}} : tensor<6x64x28x28xf32>)
// CHECK: %[[GM:.*]] = tensor.collapse_shape %[[GT]] {{\[}}[0], [1, 2, 3]] : tensor<6x64x28x28xf32> into tensor<6x50176xf32>
// CHECK: %[[DW:.*]] = linalg.matmul_transpose_b ins(%[[GM]], %[[COL]] : tensor<6x50176xf32>, tensor<25x50176xf32>) outs(%{{.*}} : tensor<6x25xf32>)
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[DW]] {{\[}}[0], [1, 2, 3]] output_shape [6, 1, 5, 5]
// CHECK: return %[[OUT]]
func.func @lenet_conv1_grad_weight(%x: tensor<64x1x28x28xf32>, %g: tensor<64x6x28x28xf32>) -> tensor<6x1x5x5xf32> {
  %dw = mdl.conv2d_grad_weight %x, %g stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 1 : tensor<64x1x28x28xf32>, tensor<64x6x28x28xf32> -> tensor<6x1x5x5xf32>
  return %dw : tensor<6x1x5x5xf32>
}

// -----

// The input gradient: dcol[25, 50176] = W^T @ dY read transposed, expanded
// to (g, c, i, j, n, y, x); col2im gathers over the input (n, g, c, h, w)
// and reduces over the taps (i, j): y = h + 2 - i must lie in [0, 28); with
// stride 1 no divisibility test is left.
// CHECK-LABEL: func.func @lenet_conv1_grad_input
// CHECK-SAME: (%[[W:.*]]: tensor<6x1x5x5xf32>, %[[G:.*]]: tensor<64x6x28x28xf32>)
// CHECK: %[[WM:.*]] = tensor.collapse_shape %[[W]] {{.*}} into tensor<6x25xf32>
// CHECK: %[[GM:.*]] = tensor.collapse_shape %{{.*}} into tensor<6x50176xf32>
// CHECK: %[[DCOL:.*]] = linalg.matmul_transpose_a ins(%[[WM]], %[[GM]] : tensor<6x25xf32>, tensor<6x50176xf32>) outs(%{{.*}} : tensor<25x50176xf32>)
// CHECK: %[[DCOL7:.*]] = tensor.expand_shape %[[DCOL]] {{\[}}[0, 1, 2, 3], [4, 5, 6]] output_shape [1, 1, 5, 5, 64, 28, 28]
// CHECK: %[[WINDOW:.*]] = tensor.empty() : tensor<5x5xf32>
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[WINDOW]] : tensor<5x5xf32>) outs(%{{.*}} : tensor<64x1x1x28x28xf32>)
// CHECK-NOT: arith.remsi
// CHECK: %[[V:.*]] = tensor.extract %[[DCOL7]]
// CHECK: arith.select %{{.*}}, %[[V]], %{{.*}} : f32
// CHECK: %[[OUT:.*]] = tensor.collapse_shape %[[DX]] {{.*}} : tensor<64x1x1x28x28xf32> into tensor<64x1x28x28xf32>
// CHECK: return %[[OUT]]
func.func @lenet_conv1_grad_input(%w: tensor<6x1x5x5xf32>, %g: tensor<64x6x28x28xf32>) -> tensor<64x1x28x28xf32> {
  %dx = mdl.conv2d_grad_input %g, %w stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 1 : tensor<64x6x28x28xf32>, tensor<6x1x5x5xf32> -> tensor<64x1x28x28xf32>
  return %dx : tensor<64x1x28x28xf32>
}

// -----

// Grouped, strided and dilated gradients: batched GEMMs over the 2 groups;
// col2im tests y = (h + 1 - i) / 2 for exactness (remsi) and range, and
// x = (w - 2j) / 3 likewise.
// CHECK-LABEL: func.func @grouped_grads
// CHECK: %[[DCOL:.*]] = linalg.batch_matmul_transpose_a ins(%{{.*}}, %{{.*}} : tensor<2x3x18xf32>, tensor<2x3x20xf32>) outs(%{{.*}} : tensor<2x18x20xf32>)
// CHECK: tensor.expand_shape %[[DCOL]] {{\[}}[0], [1, 2, 3], [4, 5, 6]] output_shape [2, 2, 3, 3, 2, 5, 2]
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2x2x9x9xf32>)
// CHECK-COUNT-2: arith.remsi
// CHECK: tensor.collapse_shape %[[DX]] {{\[}}[0], [1, 2], [3], [4]] : tensor<2x2x2x9x9xf32> into tensor<2x4x9x9xf32>
// CHECK: linalg.batch_matmul_transpose_b ins(%{{.*}}, %{{.*}} : tensor<2x3x20xf32>, tensor<2x18x20xf32>) outs(%{{.*}} : tensor<2x3x18xf32>)
func.func @grouped_grads(%x: tensor<2x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %g: tensor<2x6x5x2xf32>) -> (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) {
  %dx = mdl.conv2d_grad_input %g, %w stride = [2, 3] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<2x6x5x2xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x9xf32>
  %dw = mdl.conv2d_grad_weight %x, %g stride = [2, 3] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<2x4x9x9xf32>, tensor<2x6x5x2xf32> -> tensor<6x2x3x3xf32>
  return %dx, %dw : tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>
}

// -----

// bf16 conv2d with bias: im2col copies bf16, the GEMM reads the bf16
// columns and weights into an f32 product, which stays f32 (no truncf after
// the matmul), and the bias is extended and added in f32 before the one
// truncf.
// CHECK-LABEL: func.func @conv_bias_bf16
// CHECK-SAME: (%{{.*}}: tensor<2x1x8x8xbf16>, %{{.*}}: tensor<3x1x3x3xbf16>, %[[B:.*]]: tensor<3xbf16>)
// CHECK: %[[PRODUCT:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x9xbf16>, tensor<9x128xbf16>) outs(%{{.*}} : tensor<3x128xf32>)
// CHECK-NOT: arith.truncf
// CHECK: %[[COLUMNS:.*]] = tensor.expand_shape %[[PRODUCT]] {{.*}} : tensor<3x128xf32> into tensor<3x2x8x8xf32>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[COLUMNS]], %[[B]] : tensor<3x2x8x8xf32>, tensor<3xbf16>) outs(%{{.*}} : tensor<2x3x8x8xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[BIAS:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[BIAS]] : bf16 to f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[IN]], %[[WIDE]] : f32
// CHECK-NEXT: %[[OUT:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[OUT]] : bf16
// CHECK: return %[[Y]]
func.func @conv_bias_bf16(%x: tensor<2x1x8x8xbf16>, %w: tensor<3x1x3x3xbf16>, %b: tensor<3xbf16>) -> tensor<2x3x8x8xbf16> {
  %y = mdl.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<2x1x8x8xbf16>, tensor<3x1x3x3xbf16>, tensor<3xbf16> -> tensor<2x3x8x8xbf16>
  return %y : tensor<2x3x8x8xbf16>
}

// -----

// bf16 conv2d_grad_input: the GEMM reads the bf16 weights and gradient,
// dcol stays f32 (the GEMM's product unrounded),
// col2im sums the taps in an f32 accumulator, and one elementwise pass
// rounds dX to bf16 before the collapse.
// CHECK-LABEL: func.func @conv_grad_input_bf16
// CHECK: %[[DCOL:.*]] = linalg.matmul_transpose_a ins(%{{.*}}, %{{.*}} : tensor<3x9xbf16>, tensor<3x128xbf16>) outs(%{{.*}} : tensor<9x128xf32>)
// CHECK-NOT: arith.truncf
// CHECK: %[[DCOL7:.*]] = tensor.expand_shape %[[DCOL]] {{.*}} : tensor<9x128xf32> into tensor<1x1x3x3x2x8x8xf32>
// CHECK: %[[WINDOW:.*]] = tensor.empty() : tensor<3x3xbf16>
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%[[WINDOW]] : tensor<3x3xbf16>) outs(%{{.*}} : tensor<2x1x1x8x8xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: bf16, %[[ACC:.*]]: f32):
// CHECK: %[[V:.*]] = tensor.extract %[[DCOL7]]
// CHECK: %[[TAP:.*]] = arith.select %{{.*}}, %[[V]], %{{.*}} : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[TAP]] : f32
// CHECK: %[[ROUNDED:.*]] = linalg.generic {{.*}} ins(%[[DX]] : tensor<2x1x1x8x8xf32>) outs(%{{.*}} : tensor<2x1x1x8x8xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[OUT:.*]] = tensor.collapse_shape %[[ROUNDED]] {{.*}} : tensor<2x1x1x8x8xbf16> into tensor<2x1x8x8xbf16>
// CHECK: return %[[OUT]]
func.func @conv_grad_input_bf16(%g: tensor<2x3x8x8xbf16>, %w: tensor<3x1x3x3xbf16>) -> tensor<2x1x8x8xbf16> {
  %dx = mdl.conv2d_grad_input %g, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<2x3x8x8xbf16>, tensor<3x1x3x3xbf16> -> tensor<2x1x8x8xbf16>
  return %dx : tensor<2x1x8x8xbf16>
}
