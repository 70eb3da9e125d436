// Parameters, data sets and the train/infer entry points print and parse
// back unchanged; entry block arguments are named after their fields/inputs.
// RUN: modelc-opt %s | modelc-opt | FileCheck %s
// RUN: modelc-opt %s --mlir-print-op-generic | modelc-opt | FileCheck %s
// Printing the printed form again changes nothing.
// RUN: modelc-opt %s > %t && modelc-opt %t | diff %t -

// CHECK: mdl.param @fc1.weight : tensor<16x784xf32> = kaiming_uniform(7.840000e+02)
mdl.param @"fc1.weight" : tensor<16x784xf32> = kaiming_uniform(784.0)
// CHECK: mdl.param @fc1.bias : tensor<16xf32> = zeros()
mdl.param @"fc1.bias" : tensor<16xf32> = zeros()
// CHECK: mdl.param @ln.weight : tensor<16xf32> = ones()
mdl.param @"ln.weight" : tensor<16xf32> = ones()
// A flat view of two parameters: fc1.weight's 12,544 elements, then
// fc1.bias from the next 64-byte boundary.
// CHECK: mdl.flat_view @flat : tensor<12560xf32> of [@fc1.weight, @fc1.bias]
mdl.flat_view @flat : tensor<12560xf32> of [@"fc1.weight", @"fc1.bias"]
// CHECK: mdl.param @scale : tensor<f64> = full(-2.500000e-01)
mdl.param @scale : tensor<f64> = full(-0.25)
// CHECK: mdl.param @wte : tensor<100x16xbf16> = normal(0.000000e+00, 2.000000e-02)
mdl.param @wte : tensor<100x16xbf16> = normal(0.0, 0.02)
// CHECK: mdl.param @u : tensor<16xf16> = uniform(-1.000000e+00, 1.000000e+00)
mdl.param @u : tensor<16xf16> = uniform(-1.0, 1.0)
// CHECK: mdl.param @blocks.0.attn : tensor<16x16xf32> = xavier_uniform()
mdl.param @"blocks.0.attn" : tensor<16x16xf32> = xavier_uniform()
// CHECK: mdl.param @t : tensor<16xf32> = truncated_normal(2.000000e-02)
mdl.param @t : tensor<16xf32> = truncated_normal(0.02)

// CHECK-LABEL: mdl.data @images {
// CHECK-NEXT: mdl.field "image" : tensor<28x28xui8> = idx "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
// CHECK-NEXT: mdl.field "label" : tensor<ui8> = idx "labels.gz"
// CHECK-NEXT: mdl.field "extra" : tensor<3xf32> = npy "extra.npy"
// CHECK-NEXT: mdl.field "pixels" : tensor<3x4xf32> = npz "all.npz" key "x"
// CHECK-NEXT: }
mdl.data @images {
  mdl.field "image" : tensor<28x28xui8> = idx "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
  mdl.field "label" : tensor<ui8> = idx "labels.gz"
  mdl.field "extra" : tensor<3xf32> = npy "extra.npy"
  mdl.field "pixels" : tensor<3x4xf32> = npz "all.npz" key "x"
}

// CHECK-LABEL: mdl.data @text {
// CHECK-NEXT: mdl.field "tokens" : tensor<9xui16> = windows file "data/train.bin"
mdl.data @text {
  mdl.field "tokens" : tensor<9xui16> = windows file "data/train.bin"
}

// CHECK-LABEL: mdl.data @every {
// CHECK-NEXT: mdl.field "tokens" : tensor<9xui16> = windows stride 1 file "data/train.bin"
mdl.data @every {
  mdl.field "tokens" : tensor<9xui16> = windows stride 1 file "data/train.bin"
}

// CHECK-LABEL: func.func private @linear(
// CHECK-SAME: %{{[^:]*}}: tensor<8x784xf32>, %{{[^:]*}}: tensor<16x784xf32> {mdl.param = "weight"}, %{{[^:]*}}: tensor<16xf32> {mdl.param = "bias"}) -> tensor<8x16xf32>
func.func private @linear(%x: tensor<8x784xf32>,
                          %w: tensor<16x784xf32> {mdl.param = "weight"},
                          %b: tensor<16xf32> {mdl.param = "bias"}) -> tensor<8x16xf32> {
  %wt = mdl.transpose %w perm = [1, 0] : tensor<16x784xf32> -> tensor<784x16xf32>
  %y = mdl.matmul %x, %wt : tensor<8x784xf32>, tensor<784x16xf32> -> tensor<8x16xf32>
  %z = mdl.add %y, %b : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  return %z : tensor<8x16xf32>
}

// CHECK-LABEL: mdl.train @fashion data @images outputs ["loss", "accuracy"] settings {batch = 8 : i64, epochs = 5 : i64, optimizer = {kind = "adamw", lr = 1.000000e-03 : f64}} {
// CHECK-NEXT: ^bb0(%[[IMAGE:image]]: tensor<8x28x28xui8>, %[[LABEL:label]]: tensor<8xui8>, %{{extra}}: tensor<8x3xf32>, %{{pixels}}: tensor<8x3x4xf32>):
// CHECK-NEXT: %[[W:.*]] = mdl.param_ref @fc1.weight : tensor<16x784xf32>
// CHECK-NEXT: %[[B:.*]] = mdl.param_ref @fc1.bias : tensor<16xf32>
// CHECK-NEXT: %[[F:.*]] = mdl.cast %[[IMAGE]]
// CHECK-NEXT: %[[X:.*]] = mdl.reshape %[[F]]
// CHECK-NEXT: %[[Y:.*]] = func.call @linear(%[[X]], %[[W]], %[[B]])
// CHECK-NEXT: %[[L:.*]] = mdl.cast %[[LABEL]]
// CHECK-NEXT: %[[LOSS:.*]] = mdl.cross_entropy %[[Y]], %[[L]]
// CHECK-NEXT: %[[ACC:.*]] = mdl.accuracy %[[Y]], %[[LABEL]]
// CHECK-NEXT: mdl.yield %[[LOSS]], %[[ACC]] : tensor<f32>, tensor<f32>
mdl.train @fashion data @images outputs ["loss", "accuracy"]
    settings {batch = 8 : i64, epochs = 5 : i64,
              optimizer = {kind = "adamw", lr = 1.0e-3 : f64}} {
^bb0(%image: tensor<8x28x28xui8>, %label: tensor<8xui8>, %extra: tensor<8x3xf32>, %pixels: tensor<8x3x4xf32>):
  %w = mdl.param_ref @"fc1.weight" : tensor<16x784xf32>
  %b = mdl.param_ref @"fc1.bias" : tensor<16xf32>
  %f = mdl.cast %image : tensor<8x28x28xui8> -> tensor<8x28x28xf32>
  %x = mdl.reshape %f : tensor<8x28x28xf32> -> tensor<8x784xf32>
  %y = func.call @linear(%x, %w, %b) : (tensor<8x784xf32>, tensor<16x784xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %l = mdl.cast %label : tensor<8xui8> -> tensor<8xi32>
  %loss = mdl.cross_entropy %y, %l ignore_index = -100 : tensor<8x16xf32>, tensor<8xi32> -> tensor<f32>
  %acc = mdl.accuracy %y, %label : tensor<8x16xf32>, tensor<8xui8> -> tensor<f32>
  mdl.yield %loss, %acc : tensor<f32>, tensor<f32>
}

// A loss in bf16 and no metrics.
// CHECK-LABEL: mdl.train @lm data @text outputs ["loss"] settings {batch = 4 : i64} {
// CHECK-NEXT: ^bb0(%{{tokens}}: tensor<4x9xui16>):
// CHECK: mdl.yield %{{.*}} : tensor<bf16>
mdl.train @lm data @text outputs ["loss"] settings {batch = 4 : i64} {
^bb0(%tokens: tensor<4x9xui16>):
  %f = mdl.cast %tokens : tensor<4x9xui16> -> tensor<4x9xbf16>
  %m = mdl.mean %f axes = [0, 1] : tensor<4x9xbf16> -> tensor<bf16>
  mdl.yield %m : tensor<bf16>
}

// CHECK-LABEL: mdl.infer @classify inputs ["image", "mask"] outputs ["label", "score"] {
// CHECK-NEXT: ^bb0(%[[IMAGE:image]]: tensor<8x784xf32>, %{{mask}}: tensor<8xi1>):
// CHECK: mdl.yield %{{.*}}, %{{.*}} : tensor<8xi64>, tensor<8x16xf32>
mdl.infer @classify inputs ["image", "mask"] outputs ["label", "score"] {
^bb0(%image: tensor<8x784xf32>, %mask: tensor<8xi1>):
  %w = mdl.param_ref @"fc1.weight" : tensor<16x784xf32>
  %b = mdl.param_ref @"fc1.bias" : tensor<16xf32>
  %y = func.call @linear(%image, %w, %b) : (tensor<8x784xf32>, tensor<16x784xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %i = mdl.argmax %y axis = 1 : tensor<8x16xf32> -> tensor<8xi64>
  mdl.yield %i, %y : tensor<8xi64>, tensor<8x16xf32>
}
