// --mdl-lower-to-linalg on the losses and metrics: row max and
// sum-of-exponentials over the class axis, then reductions into 0-d
// tensors; mse_loss and accuracy as means over every position.
// RUN: modelc-opt %s --mdl-lower-to-linalg --split-input-file | FileCheck %s

// cross_entropy: per row m = max and s = sum exp(x - m); one all-reduction
// over rows adds log(s) + m - x[clamp(label)] and counts labels != -100
// (compared in i64) in f64; the mean is rounded to f32.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: (%[[X:.*]]: tensor<128x10xf32>, %[[LABELS:.*]]: tensor<128xi32>)
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<128x10xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<128x10xf32>, tensor<128xf32>)
// CHECK: math.exp
// CHECK: %[[ACC:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[LABELS]], %[[MAX]], %[[SUM]] : tensor<128xi32>, tensor<128xf32>, tensor<128xf32>) outs(%{{.*}}, %{{.*}} : tensor<f64>, tensor<f64>)
// CHECK: ^bb0(%[[LABEL:.*]]: i32,
// CHECK: %[[IGNORE:.*]] = arith.constant -100 : i64
// CHECK: %[[WIDE:.*]] = arith.extsi %[[LABEL]] : i32 to i64
// CHECK: %[[COUNTED:.*]] = arith.cmpi ne, %[[WIDE]], %[[IGNORE]] : i64
// CHECK: %[[PICKED:.*]] = tensor.extract %[[X]][
// CHECK: math.log
// CHECK: arith.subf %{{.*}}, %[[PICKED]] : f32
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: arith.select %[[COUNTED]]
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[ACC]]#0, %[[ACC]]#1 : tensor<f64>, tensor<f64>) outs(%{{.*}} : tensor<f32>)
// CHECK: arith.divf %{{.*}}, %{{.*}} : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: return %[[MEAN]]
func.func @cross_entropy(%logits: tensor<128x10xf32>, %labels: tensor<128xi32>) -> tensor<f32> {
  %l = mdl.cross_entropy %logits, %labels ignore_index = -100 : tensor<128x10xf32>, tensor<128xi32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// ui8 labels (i8 after the conversion) zero-extend before the comparison
// with ignore_index and the cast to an index.
// CHECK-LABEL: func.func @cross_entropy_ui8
// CHECK: arith.extui %{{.*}} : i8 to i64
// CHECK: arith.index_castui %{{.*}} : i8 to index
mdl.buffer @"T:in:x" : tensor<16x10xf32> {entry = "T", key = "x", phase = "train", role = "input"}
mdl.buffer @"T:in:y" : tensor<16xui8> {entry = "T", key = "y", phase = "train", role = "input"}
mdl.buffer @"T:out:loss" : tensor<f32> {entry = "T", key = "loss", phase = "train", role = "output"}
func.func @cross_entropy_ui8() {
  %x = mdl.load @"T:in:x" : tensor<16x10xf32>
  %y = mdl.load @"T:in:y" : tensor<16xui8>
  %l = mdl.cross_entropy %x, %y ignore_index = -100 : tensor<16x10xf32>, tensor<16xui8> -> tensor<f32>
  mdl.store %l, @"T:out:loss" : tensor<f32>
  return
}

// -----

// cross_entropy_grad on f64 logits (GPT's [B, T, V] layout): the counted
// rows in f64, in two stages over 512 rows (64 chunks of 8, then the 64
// partial counts), grad / count once as a 0-d tensor, then one elementwise
// pass (exp(x - m) / s - onehot) * scale, zero for label == -1, written
// over the logits (in place when nothing reads them afterwards).
// CHECK-LABEL: func.func @cross_entropy_grad
// CHECK-SAME: (%[[X:.*]]: tensor<8x64x65xf64>, %[[LABELS:.*]]: tensor<8x64xi64>, %[[G:.*]]: tensor<f32>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x64x65xf64>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] :
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[LABELS]] {{\[\[}}0, 1]] : tensor<8x64xi64> into tensor<512xi64>
// CHECK: %[[CHUNKS:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [64, 8] : tensor<512xi64> into tensor<64x8xi64>
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[CHUNKS]] : tensor<64x8xi64>) outs(%{{.*}} : tensor<64xf64>)
// CHECK: %[[COUNT:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PARTIAL]] : tensor<64xf64>) outs(%{{.*}} : tensor<f64>)
// CHECK: %[[SCALE:.*]] = linalg.generic {{.*}} iterator_types = []} ins(%[[G]], %[[COUNT]] : tensor<f32>, tensor<f64>) outs(%{{.*}} : tensor<f64>)
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: %[[D:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MAX]], %[[SUM]], %[[LABELS]], %[[SCALE]] : tensor<8x64x65xf64>, tensor<8x64xf64>, tensor<8x64xf64>, tensor<8x64xi64>, tensor<f64>) outs(%[[X]] : tensor<8x64x65xf64>)
// CHECK: math.exp
// CHECK: %[[CLASS:.*]] = linalg.index 2 : index
// CHECK: arith.cmpi eq, %{{.*}}, %[[CLASS]] : index
// CHECK: %[[IGNORE:.*]] = arith.constant -1 : i64
// CHECK: arith.cmpi ne, %{{.*}}, %[[IGNORE]] : i64
// CHECK: return %[[D]]
func.func @cross_entropy_grad(%logits: tensor<8x64x65xf64>, %labels: tensor<8x64xi64>, %g: tensor<f32>) -> tensor<8x64x65xf64> {
  %d = mdl.cross_entropy_grad %logits, %labels, %g ignore_index = -1 : tensor<8x64x65xf64>, tensor<8x64xi64>, tensor<f32> -> tensor<8x64x65xf64>
  return %d : tensor<8x64x65xf64>
}

// -----

// mse_loss: squares summed in f64, divided by 128 and rounded to f32.
// CHECK-LABEL: func.func @mse_loss
// CHECK-SAME: (%[[Y:.*]]: tensor<128x1xf32>, %[[T:.*]]: tensor<128x1xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[Y]], %[[T]] : tensor<128x1xf32>, tensor<128x1xf32>) outs(%{{.*}} : tensor<f64>)
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<f64>) outs(%{{.*}} : tensor<f32>)
// CHECK: arith.constant 1.280000e+02 : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: return %[[MEAN]]
func.func @mse_loss(%y: tensor<128x1xf32>, %t: tensor<128x1xf32>) -> tensor<f32> {
  %l = mdl.mse_loss %y, %t : tensor<128x1xf32>, tensor<128x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// bf16 logits: the row max stays bf16 (exact), the sum of exponentials
// accumulates in f32 from extended logits and max, and each row's
// log(s) + m - x[label] is f32 before the f64 sum.
// CHECK-LABEL: func.func @cross_entropy_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<16x10xbf16>, %[[LABELS:.*]]: tensor<16xi32>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<16x10xbf16>) outs(%{{.*}} : tensor<16xbf16>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<16x10xbf16>, tensor<16xbf16>) outs(%{{.*}} : tensor<16xf32>)
// CHECK-NEXT: ^bb0(%[[XI:.*]]: bf16, %[[MI:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-DAG: %[[MW:.*]] = arith.extf %[[MI]] : bf16 to f32
// CHECK-DAG: %[[XW:.*]] = arith.extf %[[XI]] : bf16 to f32
// CHECK: %[[SHIFTED:.*]] = arith.subf %[[XW]], %[[MW]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[SHIFTED]] : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[EXP]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[LABELS]], %[[MAX]], %[[SUM]] : tensor<16xi32>, tensor<16xbf16>, tensor<16xf32>) outs(%{{.*}}, %{{.*}} : tensor<f64>, tensor<f64>)
// CHECK: %[[PICKED:.*]] = tensor.extract %[[X]][
// CHECK-NEXT: %[[PW:.*]] = arith.extf %[[PICKED]] : bf16 to f32
// CHECK-NEXT: %[[ROW_MAX:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK-NEXT: %[[LOG:.*]] = math.log %{{.*}} : f32
// CHECK-NEXT: %[[LSE:.*]] = arith.addf %[[LOG]], %[[ROW_MAX]] : f32
// CHECK-NEXT: %[[LOSS:.*]] = arith.subf %[[LSE]], %[[PW]] : f32
// CHECK-NEXT: arith.extf %[[LOSS]] : f32 to f64
func.func @cross_entropy_bf16(%logits: tensor<16x10xbf16>, %labels: tensor<16xi32>) -> tensor<f32> {
  %l = mdl.cross_entropy %logits, %labels ignore_index = -100 : tensor<16x10xbf16>, tensor<16xi32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// cross_entropy_grad on bf16: the scale stays f32, the row sums are f32,
// and the elementwise pass extends logits and max, computes
// (exp(x - m) / s - onehot) * scale in f32 and rounds once.
// CHECK-LABEL: func.func @cross_entropy_grad_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<16x10xbf16>, %[[LABELS:.*]]: tensor<16xi32>, %[[G:.*]]: tensor<f32>)
// CHECK: %[[SCALE:.*]] = linalg.generic {{.*}} iterator_types = []} ins(%[[G]], %{{.*}} : tensor<f32>, tensor<f64>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX:.*]], %[[SUM:.*]], %[[LABELS]], %[[SCALE]] : tensor<16x10xbf16>, tensor<16xbf16>, tensor<16xf32>, tensor<16xi32>, tensor<f32>) outs(%{{.*}} : tensor<16x10xbf16>)
// CHECK-NEXT: ^bb0(%[[XI:.*]]: bf16, %[[MI:.*]]: bf16, %[[SI:.*]]: f32, %{{.*}}: i32, %[[SC:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[XI]] : bf16 to f32
// CHECK-NEXT: %[[MW:.*]] = arith.extf %[[MI]] : bf16 to f32
// CHECK-NOT: bf16
// CHECK: arith.divf %{{.*}}, %[[SI]] : f32
// CHECK-NOT: bf16
// CHECK: arith.mulf %{{.*}}, %[[SC]] : f32
// CHECK-NOT: bf16
// CHECK: %[[R:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[OUT:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[OUT]] : bf16
// CHECK: return %[[D]]
func.func @cross_entropy_grad_bf16(%logits: tensor<16x10xbf16>, %labels: tensor<16xi32>, %g: tensor<f32>) -> tensor<16x10xbf16> {
  %d = mdl.cross_entropy_grad %logits, %labels, %g ignore_index = -100 : tensor<16x10xbf16>, tensor<16xi32>, tensor<f32> -> tensor<16x10xbf16>
  return %d : tensor<16x10xbf16>
}

// -----

// mse_loss on bf16: the difference and square in f32 from extended
// elements, summed in f64, the mean rounded to bf16 (through f32, as
// PyTorch converts doubles to 16-bit types).
// CHECK-LABEL: func.func @mse_loss_bf16
// CHECK-SAME: (%[[Y:.*]]: tensor<16x1xbf16>, %[[T:.*]]: tensor<16x1xbf16>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[Y]], %[[T]] : tensor<16x1xbf16>, tensor<16x1xbf16>) outs(%{{.*}} : tensor<f64>)
// CHECK-NEXT: ^bb0(%[[YI:.*]]: bf16, %[[TI:.*]]: bf16, %[[ACC:.*]]: f64):
// CHECK-DAG: %[[TW:.*]] = arith.extf %[[TI]] : bf16 to f32
// CHECK-DAG: %[[YW:.*]] = arith.extf %[[YI]] : bf16 to f32
// CHECK: %[[DIFF:.*]] = arith.subf %[[YW]], %[[TW]] : f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[DIFF]], %[[DIFF]] : f32
// CHECK-NEXT: %[[SQ64:.*]] = arith.extf %[[SQ]] : f32 to f64
// CHECK-NEXT: arith.addf %[[ACC]], %[[SQ64]] : f64
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<f64>) outs(%{{.*}} : tensor<bf16>)
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[MEAN]]
func.func @mse_loss_bf16(%y: tensor<16x1xbf16>, %t: tensor<16x1xbf16>) -> tensor<bf16> {
  %l = mdl.mse_loss %y, %t : tensor<16x1xbf16>, tensor<16x1xbf16> -> tensor<bf16>
  return %l : tensor<bf16>
}

// -----

// accuracy: per row the first maximum's class (strictly greater, or NaN
// over a number), hits counted in i64, hits / 128 in f64 rounded to f32.
// CHECK-LABEL: func.func @accuracy
// CHECK-SAME: (%[[X:.*]]: tensor<128x10xf32>, %[[LABELS:.*]]: tensor<128xi32>)
// CHECK: %[[ARGMAX:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<128x10xf32>) outs(%{{.*}}, %{{.*}} : tensor<128xf32>, tensor<128xi64>)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: %[[HITS:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[ARGMAX]]#1, %[[LABELS]] : tensor<128xi64>, tensor<128xi32>) outs(%{{.*}} : tensor<i64>)
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} ins(%[[HITS]] : tensor<i64>) outs(%{{.*}} : tensor<f32>)
// CHECK: arith.sitofp %{{.*}} : i64 to f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: return %[[ACC]]
func.func @accuracy(%logits: tensor<128x10xf32>, %labels: tensor<128xi32>) -> tensor<f32> {
  %a = mdl.accuracy %logits, %labels : tensor<128x10xf32>, tensor<128xi32> -> tensor<f32>
  return %a : tensor<f32>
}
