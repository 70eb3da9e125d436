// A tiny program at the linalg level, as `modelc --emit=lowered` writes one:
// declarations, and three program functions on mdlrt.buffer memrefs.
//   T.fwd_bwd: y = tanh(x * w^T + b), loss = sum(y)
//   T.update:  w = 2 * w + c (c a constant row)
//   I.infer:   z = x2 * w
module attributes {mdl.source_hash = "0123abcd", mdl.source_name = "tiny.mdl"} {
  mdl.param @w : tensor<4x8xf32> = normal(0.0, 0.02)
  mdl.param @b : tensor<4xf32> = zeros()
  mdl.data @d {
    mdl.field "x" : tensor<8xf32> = npy "x.npy"
    mdl.field "tokens" : tensor<9xui16> = windows file "tokens.bin"
  }
  mdl.buffer @"T:in:x" : tensor<2x8xf32> {entry = "T", key = "x", phase = "train", role = "input"}
  mdl.buffer @"T:out:loss" : tensor<f32> {entry = "T", key = "loss", phase = "train", role = "output"}
  mdl.buffer @"T:out:y" : tensor<2x4xf32> {entry = "T", key = "y", phase = "train", role = "output"}
  mdl.buffer @"grad:w" : tensor<4x8xf32> {entry = "", key = "w", phase = "shared", role = "grad"}
  mdl.buffer @"I:in:x" : tensor<2x4xf32> {entry = "I", key = "x", phase = "infer", role = "input"}
  mdl.buffer @"I:out:z" : tensor<2x8xf32> {entry = "I", key = "z", phase = "infer", role = "output"}
  mdl.train @T data @d outputs ["loss"]
      settings {accumulate = 1 : i64, batch = 2 : i64, steps = 7 : i64,
                seed = 3 : i64, shuffle = false, precision = "f32",
                grad_clip = 1.0 : f64, log = {every = 5 : i64},
                optimizer = {kind = "sgd", lr = 0.1 : f64, momentum = 0.9 : f64,
                             nesterov = true, weight_decay = 0.0 : f64,
                             betas = array<f64: 0.9, 0.999>, eps = 1.0e-8 : f64},
                schedule = {kind = "step_lr", warmup = 0 : i64, min_lr = 0.0 : f64,
                            every = 2 : i64, gamma = 0.5 : f64}} {
  ^bb0(%x: tensor<2x8xf32>, %tokens: tensor<2x9xui16>):
    %loss = mdl.constant dense<0.0> : tensor<f32>
    mdl.yield %loss : tensor<f32>
  }
  mdl.infer @I inputs ["x"] outputs ["z"] {
  ^bb0(%x: tensor<2x4xf32>):
    %z = mdl.constant dense<0.0> : tensor<2x8xf32>
    mdl.yield %z : tensor<2x8xf32>
  }

  func.func @"T.fwd_bwd"() attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %zero = arith.constant 0.0 : f32
    %xm = mdlrt.buffer @"T:in:x" : memref<2x8xf32>
    %x = bufferization.to_tensor %xm restrict : memref<2x8xf32>
    %wm = mdlrt.buffer @w : memref<4x8xf32>
    %w = bufferization.to_tensor %wm restrict : memref<4x8xf32>
    %bm = mdlrt.buffer @b : memref<4xf32>
    %b = bufferization.to_tensor %bm restrict : memref<4xf32>
    %e0 = tensor.empty() : tensor<2x4xf32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %xw = linalg.matmul_transpose_b ins(%x, %w : tensor<2x8xf32>, tensor<4x8xf32>) outs(%f0 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %e1 = tensor.empty() : tensor<2x4xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%xw, %b : tensor<2x4xf32>, tensor<4xf32>) outs(%e1 : tensor<2x4xf32>) {
    ^bb0(%v: f32, %bias: f32, %out: f32):
      %s = arith.addf %v, %bias : f32
      %t = math.tanh %s : f32
      linalg.yield %t : f32
    } -> tensor<2x4xf32>
    %ym = mdlrt.buffer @"T:out:y" : memref<2x4xf32>
    bufferization.materialize_in_destination %y in restrict writable %ym : (tensor<2x4xf32>, memref<2x4xf32>) -> ()
    %e2 = tensor.empty() : tensor<f32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
    %sum = linalg.reduce ins(%y : tensor<2x4xf32>) outs(%f2 : tensor<f32>) dimensions = [0, 1]
      (%in: f32, %acc: f32) {
        %a = arith.addf %in, %acc : f32
        linalg.yield %a : f32
      }
    %lm = mdlrt.buffer @"T:out:loss" : memref<f32>
    bufferization.materialize_in_destination %sum in restrict writable %lm : (tensor<f32>, memref<f32>) -> ()
    return
  }

  func.func @"T.update"() attributes {mdl.entry = "T", mdl.function = "update"} {
    %two = arith.constant 2.0 : f32
    %c = arith.constant dense<[0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]> : tensor<8xf32>
    %wm = mdlrt.buffer @w : memref<4x8xf32>
    %w = bufferization.to_tensor %wm restrict : memref<4x8xf32>
    %e = tensor.empty() : tensor<4x8xf32>
    %new = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
        ins(%w, %c : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%v: f32, %k: f32, %out: f32):
      %m = arith.mulf %v, %two : f32
      %a = arith.addf %m, %k : f32
      linalg.yield %a : f32
    } -> tensor<4x8xf32>
    bufferization.materialize_in_destination %new in restrict writable %wm : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
    return
  }

  func.func @"I.infer"() attributes {mdl.entry = "I", mdl.function = "infer"} {
    %zero = arith.constant 0.0 : f32
    %xm = mdlrt.buffer @"I:in:x" : memref<2x4xf32>
    %x = bufferization.to_tensor %xm restrict : memref<2x4xf32>
    %wm = mdlrt.buffer @w : memref<4x8xf32>
    %w = bufferization.to_tensor %wm restrict : memref<4x8xf32>
    %e = tensor.empty() : tensor<2x8xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
    %z = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x8xf32>) outs(%f : tensor<2x8xf32>) -> tensor<2x8xf32>
    %zm = mdlrt.buffer @"I:out:z" : memref<2x8xf32>
    bufferization.materialize_in_destination %z in restrict writable %zm : (tensor<2x8xf32>, memref<2x8xf32>) -> ()
    return
  }
}
