// Every verifier rule of the mdl dialect rejects what it should, with its
// message. One case per rule; shapes are otherwise valid.
// RUN: modelc-opt %s -split-input-file -verify-diagnostics

func.func @f(%a: tensor<4x8xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{operands are not broadcast-compatible: [4, 8] and [3] (operand #1)}}
  %0 = mdl.add %a, %b : tensor<4x8xf32>, tensor<3xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{result shape [4, 1] is not the broadcast shape [4, 8] of the operands}}
  %0 = mdl.sub %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = mdl.mul %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of numeric values, but got 'tensor<4xi1>'}}
  %0 = mdl.add %a, %a : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return
}

// -----

func.func @f(%a: tensor<?xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of numeric values, but got 'tensor<?xf32>'}}
  %0 = mdl.div %a, %a : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{operands are not broadcast-compatible: [4] and [5] (operand #1)}}
  %0 = mdl.compare lt, %a, %b : tensor<4xf32>, tensor<5xf32> -> tensor<4xi1>
  return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = mdl.compare lt, %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{requires the same element type for all operands}}
  %0 = mdl.compare eq, %a, %b : tensor<4xf32>, tensor<4xi32> -> tensor<4xi1>
  return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, lt, le, gt, ge]}}
  %0 = mdl.compare less, %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  return
}

// -----

func.func @f(%a: tensor<4xi1>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = mdl.and %a, %b : tensor<4xi1>, tensor<4xf32> -> tensor<4xi1>
  return
}

// -----

func.func @f(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = mdl.where %c, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%c: tensor<4x1xi1>, %a: tensor<4x8xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{operands are not broadcast-compatible: [4, 8] and [3] (operand #2)}}
  %0 = mdl.where %c, %a, %b : tensor<4x1xi1>, tensor<4x8xf32>, tensor<3xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{failed to verify that all of {on_true, on_false, result} have same element type}}
  %0 = mdl.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = mdl.exp %a : tensor<4xi32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'mdl.tanh' op requires the same type for all operands and results}}
  %0 = "mdl.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = mdl.not %a : tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "erf"}}
  %0 = mdl.gelu %a {approximate = "erf"} : tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<4xui8>) {
  // expected-error @+1 {{requires the same shape for all operands and results}}
  %0 = mdl.cast %a : tensor<4xui8> -> tensor<2x2xf32>
  return
}

// -----

func.func @f(%a: tensor<4xi8>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of mdl element values, but got 'tensor<4xi8>'}}
  %0 = mdl.cast %a : tensor<4xi8> -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2 (axes are normalised to 0 .. rank - 1)}}
  %0 = mdl.sum %x axes = [2] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -1 is out of range for rank 2 (axes are normalised to 0 .. rank - 1)}}
  %0 = mdl.max %x axes = [-1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axes must be sorted and distinct, got [1, 0]}}
  %0 = mdl.sum %x axes = [1, 0] : tensor<4x8xf32> -> tensor<f32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axes must be sorted and distinct, got [1, 1]}}
  %0 = mdl.min %x axes = [1, 1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expects at least one axis to reduce}}
  %0 = mdl.sum %x axes = [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result type 'tensor<4x1xf32>' does not match the expected 'tensor<4xf32>'}}
  %0 = mdl.sum %x axes = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result type 'tensor<8xf32>' does not match the expected 'tensor<1x8xf32>'}}
  %0 = mdl.mean %x axes = [0] keepdim : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4x8xi32>'}}
  %0 = mdl.mean %x axes = [1] : tensor<4x8xi32> -> tensor<4xi32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 64-bit signless integer values, but got 'tensor<4xi32>'}}
  %0 = mdl.argmax %x axis = 1 : tensor<4x8xf32> -> tensor<4xi32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2 (axes are normalised to 0 .. rank - 1)}}
  %0 = mdl.argmax %x axis = 2 : tensor<4x8xf32> -> tensor<4xi64>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result type 'tensor<4xi64>' does not match the expected 'tensor<4x1xi64>'}}
  %0 = mdl.argmax %x axis = 1 keepdim : tensor<4x8xf32> -> tensor<4xi64>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -1 is out of range for rank 2 (axes are normalised to 0 .. rank - 1)}}
  %0 = mdl.softmax %x axis = -1 : tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2 (axes are normalised to 0 .. rank - 1)}}
  %0 = mdl.log_softmax %x axis = 2 : tensor<4x8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{result has 25 elements but the operand has 24}}
  %0 = mdl.reshape %x : tensor<4x6xf32> -> tensor<5x5xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = mdl.reshape %x : tensor<4x6xf32> -> tensor<24xf16>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{perm has 1 entries but the operand has rank 2}}
  %0 = mdl.transpose %x perm = [0] : tensor<4x6xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{perm [1, 1] is not a permutation of 0 .. 1}}
  %0 = mdl.transpose %x perm = [1, 1] : tensor<4x6xf32> -> tensor<6x6xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{result type 'tensor<4x6xf32>' does not match the expected 'tensor<6x4xf32>'}}
  %0 = mdl.transpose %x perm = [1, 0] : tensor<4x6xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{operand #1 has rank 1 but operand #0 has rank 2}}
  %0 = mdl.concat %x, %y axis = 0 : tensor<4x6xf32>, tensor<4xf32> -> tensor<8x6xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>, %y: tensor<4x5xf32>) {
  // expected-error @+1 {{operand #1 has size 5 on axis 1 but operand #0 has size 6}}
  %0 = mdl.concat %x, %y axis = 0 : tensor<4x6xf32>, tensor<4x5xf32> -> tensor<8x6xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>, %y: tensor<4x5xf32>) {
  // expected-error @+1 {{result type 'tensor<4x12xf32>' does not match the expected 'tensor<4x11xf32>'}}
  %0 = mdl.concat %x, %y axis = 1 : tensor<4x6xf32>, tensor<4x5xf32> -> tensor<4x12xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2 (axes are normalised to 0 .. rank - 1)}}
  %0 = mdl.concat %x axis = 2 : tensor<4x6xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{expected 1 or more operands, but found 0}}
  %0 = "mdl.concat"() <{axis = 0 : i64}> : () -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{axis 1 of size 6 does not split into 4 equal parts}}
  %0:4 = mdl.split %x axis = 1 : tensor<4x6xf32> -> tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{result #1 type 'tensor<4x2xf32>' does not match the expected 'tensor<4x3xf32>'}}
  %0:2 = mdl.split %x axis = 1 : tensor<4x6xf32> -> tensor<4x3xf32>, tensor<4x2xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{expected 1 or more results}}
  "mdl.split"(%x) <{axis = 0 : i64}> : (tensor<4x6xf32>) -> ()
  return
}

// -----

func.func @f(%x: tensor<3xf32>) {
  // expected-error @+1 {{operand shape [3] does not broadcast to the result shape [4, 2]}}
  %0 = mdl.broadcast_to %x : tensor<3xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @f(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{operand shape [4, 3] does not broadcast to the result shape [3]}}
  %0 = mdl.broadcast_to %x : tensor<4x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{result #0 must be static 1-d tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2x3xi32>'}}
  %0 = mdl.arange : tensor<2x3xi32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{starts, limits and strides must have 2 entries each (the operand's rank), got 1, 1 and 1}}
  %0 = mdl.slice %x starts = [0] limits = [4] strides = [1] : tensor<4x6xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{stride 0 on axis 1 must be positive}}
  %0 = mdl.slice %x starts = [0, 0] limits = [4, 6] strides = [1, 0] : tensor<4x6xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{start 0 and limit 7 on axis 1 are not within 0 <= start <= limit <= 6}}
  %0 = mdl.slice %x starts = [0, 0] limits = [4, 7] strides = [1, 1] : tensor<4x6xf32> -> tensor<4x7xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{start 3 and limit 2 on axis 0 are not within 0 <= start <= limit <= 4}}
  %0 = mdl.slice %x starts = [3, 0] limits = [2, 6] strides = [1, 1] : tensor<4x6xf32> -> tensor<1x6xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{start -1 and limit 4 on axis 0 are not within 0 <= start <= limit <= 4}}
  %0 = mdl.slice %x starts = [-1, 0] limits = [4, 6] strides = [1, 1] : tensor<4x6xf32> -> tensor<5x6xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{result type 'tensor<4x2xf32>' does not match the expected 'tensor<4x3xf32>'}}
  %0 = mdl.slice %x starts = [0, 1] limits = [4, 6] strides = [1, 2] : tensor<4x6xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<9x2xf32>) {
  // expected-error @+1 {{contracting dimensions differ: lhs [4, 8] has 8, rhs [9, 2] has 9}}
  %0 = mdl.matmul %a, %b : tensor<4x8xf32>, tensor<9x2xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @f(%a: tensor<8xf32>, %b: tensor<9xf32>) {
  // expected-error @+1 {{contracting dimensions differ: lhs [8] has 8, rhs [9] has 9}}
  %0 = mdl.matmul %a, %b : tensor<8xf32>, tensor<9xf32> -> tensor<f32>
  return
}

// -----

func.func @f(%a: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operands must have rank at least 1, got ranks 0 and 1}}
  %0 = mdl.matmul %a, %b : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @f(%a: tensor<2x4x8xf32>, %b: tensor<3x8x5xf32>) {
  // expected-error @+1 {{batch dimensions [2] and [3] are not broadcast-compatible}}
  %0 = mdl.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x5xf32> -> tensor<2x4x5xf32>
  return
}

// -----

func.func @f(%a: tensor<8xf32>, %b: tensor<8x5xf32>) {
  // expected-error @+1 {{result type 'tensor<1x5xf32>' does not match the expected 'tensor<5xf32>'}}
  %0 = mdl.matmul %a, %b : tensor<8xf32>, tensor<8x5xf32> -> tensor<1x5xf32>
  return
}

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x5xbf16>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = mdl.matmul %a, %b : tensor<4x8xf32>, tensor<8x5xbf16> -> tensor<4x5xf32>
  return
}

// -----

func.func @f(%x: tensor<4x28x28xf32>, %w: tensor<6x4x5x5xf32>) {
  // expected-error @+1 {{input must be 4-D [N, C, H, W], got [4, 28, 28]}}
  %0 = mdl.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<4x28x28xf32>, tensor<6x4x5x5xf32> -> tensor<4x6x24x24xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>, %w: tensor<6x4x5xf32>) {
  // expected-error @+1 {{weight must be 4-D [O, C / groups, kH, kW], got [6, 4, 5]}}
  %0 = mdl.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<2x4x28x28xf32>, tensor<6x4x5xf32> -> tensor<2x6x24x24xf32>
  return
}

// -----

func.func @f(%x: tensor<2x3x28x28xf32>, %w: tensor<6x1x5x5xf32>) {
  // expected-error @+1 {{input channels 3 are not divisible by groups 2}}
  %0 = mdl.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : tensor<2x3x28x28xf32>, tensor<6x1x5x5xf32> -> tensor<2x6x24x24xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>, %w: tensor<6x1x5x5xf32>) {
  // expected-error @+1 {{output channels 6 are not divisible by groups 4}}
  %0 = mdl.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 4 : tensor<2x4x28x28xf32>, tensor<6x1x5x5xf32> -> tensor<2x6x24x24xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>, %w: tensor<6x4x5x5xf32>) {
  // expected-error @+1 {{weight has 4 input channels per group, expected 2 (input channels 4 / groups 2)}}
  %0 = mdl.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : tensor<2x4x28x28xf32>, tensor<6x4x5x5xf32> -> tensor<2x6x24x24xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>, %w: tensor<6x4x5x5xf32>) {
  // expected-error @+1 {{groups must be positive, got 0}}
  %0 = mdl.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 0 : tensor<2x4x28x28xf32>, tensor<6x4x5x5xf32> -> tensor<2x6x24x24xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x4x4xf32>, %w: tensor<6x4x5x5xf32>) {
  // expected-error @+1 {{kernel 5 with dilation 1 does not fit the input size 4 padded by 0 on axis H}}
  %0 = mdl.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<2x4x4x4xf32>, tensor<6x4x5x5xf32> -> tensor<2x6x1x1xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+1 {{kernel 3 with dilation 4 does not fit the input size 8 padded by 0 on axis W}}
  %0 = mdl.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 4] groups = 1 : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32> -> tensor<2x6x6x1xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>, %w: tensor<6x4x5x5xf32>) {
  // expected-error @+1 {{result type 'tensor<2x6x13x13xf32>' does not match the expected 'tensor<2x6x14x14xf32>'}}
  %0 = mdl.conv2d %x, %w stride = [2, 2] padding = [2, 2] dilation = [1, 1] groups = 1 : tensor<2x4x28x28xf32>, tensor<6x4x5x5xf32> -> tensor<2x6x13x13xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>, %w: tensor<6x4x5x5xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must have shape [6] (the output channels), got [4]}}
  %0 = mdl.conv2d %x, %w, %b stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<2x4x28x28xf32>, tensor<6x4x5x5xf32>, tensor<4xf32> -> tensor<2x6x24x24xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>, %w: tensor<6x4x5x5xf32>) {
  // expected-error @+1 {{stride must be positive, got [0, 1]}}
  %0 = mdl.conv2d %x, %w stride = [0, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<2x4x28x28xf32>, tensor<6x4x5x5xf32> -> tensor<2x6x24x24xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>, %w: tensor<6x4x5x5xf32>) {
  // expected-error @+1 {{stride must have 2 entries (H, W), got 1}}
  %0 = mdl.conv2d %x, %w stride = [1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<2x4x28x28xf32>, tensor<6x4x5x5xf32> -> tensor<2x6x24x24xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>, %w: tensor<6x4x5x5xf32>) {
  // expected-error @+1 {{padding must be non-negative, got [0, -1]}}
  %0 = mdl.conv2d %x, %w stride = [1, 1] padding = [0, -1] dilation = [1, 1] groups = 1 : tensor<2x4x28x28xf32>, tensor<6x4x5x5xf32> -> tensor<2x6x24x24xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>) {
  // expected-error @+1 {{padding 2 on axis W must be at most half the kernel size 2}}
  %0 = mdl.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 2] : tensor<2x4x28x28xf32> -> tensor<2x4x14x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>) {
  // expected-error @+1 {{result type 'tensor<2x4x28x28xf32>' does not match the expected 'tensor<2x4x14x14xf32>'}}
  %0 = mdl.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x4x28x28xf32> -> tensor<2x4x28x28xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x3x3xf32>) {
  // expected-error @+1 {{kernel 4 does not fit the input size 3 padded by 0 on axis H}}
  %0 = mdl.avg_pool2d %x kernel = [4, 4] stride = [1, 1] padding = [0, 0] : tensor<2x4x3x3xf32> -> tensor<2x4x1x1xf32>
  return
}

// -----

func.func @f(%x: tensor<4x28x28xf32>) {
  // expected-error @+1 {{input must be 4-D [N, C, H, W], got [4, 28, 28]}}
  %0 = mdl.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<4x28x28xf32> -> tensor<4x14x14xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xf32>) {
  // expected-error @+1 {{kernel must be positive, got [0, 2]}}
  %0 = mdl.max_pool2d %x kernel = [0, 2] stride = [2, 2] padding = [0, 0] : tensor<2x4x28x28xf32> -> tensor<2x4x14x14xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x28x28xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<2x4x28x28xi32>'}}
  %0 = mdl.avg_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x4x28x28xi32> -> tensor<2x4x14x14xi32>
  return
}

// -----

func.func @f(%x: tensor<2x16xf32>, %w: tensor<8xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{weight must have shape [16] (the last axis of the input), got [8]}}
  %0 = mdl.layer_norm %x, %w, %b eps = 1.0e-5 : tensor<2x16xf32>, tensor<8xf32>, tensor<16xf32> -> tensor<2x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x16xf32>, %w: tensor<16xf32>, %b: tensor<1x16xf32>) {
  // expected-error @+1 {{bias must have shape [16] (the last axis of the input), got [1, 16]}}
  %0 = mdl.layer_norm %x, %w, %b eps = 1.0e-5 : tensor<2x16xf32>, tensor<16xf32>, tensor<1x16xf32> -> tensor<2x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x16xf32>, %w: tensor<16xf32>) {
  // expected-error @+1 {{eps must be positive}}
  %0 = mdl.layer_norm %x, %w, %w eps = 0.0 : tensor<2x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x16xf32>
  return
}

// -----

func.func @f(%x: tensor<f32>, %w: tensor<16xf32>) {
  // expected-error @+1 {{input must have rank at least 1}}
  %0 = mdl.layer_norm %x, %w, %w eps = 1.0e-5 : tensor<f32>, tensor<16xf32>, tensor<16xf32> -> tensor<f32>
  return
}

// -----

func.func @f(%x: tensor<2x16xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{weight must have shape [16] (the last axis of the input), got [8]}}
  %0 = mdl.rms_norm %x, %w eps = 1.0e-5 : tensor<2x16xf32>, tensor<8xf32> -> tensor<2x16xf32>
  return
}

// -----

func.func @f(%x: tensor<2x16xf32>) {
  // expected-error @+1 {{eps must be >= 0}}
  %0 = mdl.rms_norm %x eps = -1.0e-5 : tensor<2x16xf32> -> tensor<2x16xf32>
  return
}

// -----

func.func @f(%x: tensor<f32>) {
  // expected-error @+1 {{input must have rank at least 1}}
  %0 = mdl.rms_norm %x eps = 1.0e-5 : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @f(%x: tensor<2x16xf32>, %w: tensor<16xf32>) {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %0 = mdl.layer_norm %x, %w, %w eps = 1.0e-5 : tensor<2x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16x2xf32>
  return
}

// -----

func.func @f(%i: tensor<2x16xi32>, %t: tensor<100xf32>) {
  // expected-error @+1 {{table must be 2-D [V, D], got [100]}}
  %0 = mdl.embedding %i, %t : tensor<2x16xi32>, tensor<100xf32> -> tensor<2x16xf32>
  return
}

// -----

func.func @f(%i: tensor<2x16xf32>, %t: tensor<100x8xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of integer values, but got 'tensor<2x16xf32>'}}
  %0 = mdl.embedding %i, %t : tensor<2x16xf32>, tensor<100x8xf32> -> tensor<2x16x8xf32>
  return
}

// -----

func.func @f(%i: tensor<2x16xi64>, %t: tensor<100x8xf32>) {
  // expected-error @+1 {{result type 'tensor<2x16x100xf32>' does not match the expected 'tensor<2x16x8xf32>'}}
  %0 = mdl.embedding %i, %t : tensor<2x16xi64>, tensor<100x8xf32> -> tensor<2x16x100xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{p must be in [0, 1), got 1.000000e+00}}
  %0 = mdl.dropout %x p = 1.0 : tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{p must be in [0, 1), got -5.000000e-01}}
  %0 = mdl.dropout %x p = -0.5 : tensor<4xf32>
  return
}

// -----

func.func @f(%q: tensor<4x16x8xf32>, %k: tensor<2x4x16x8xf32>) {
  // expected-error @+1 {{query, key and value must be 4-D [b, h, t, d], [b, h, s, d] and [b, h, s, dv], got [4, 16, 8], [2, 4, 16, 8] and [2, 4, 16, 8]}}
  %0 = mdl.attention %q, %k, %k scale = 1.0 : tensor<4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<4x16x8xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x16x8xf32>, %k: tensor<2x2x16x8xf32>) {
  // expected-error @+1 {{query, key and value must agree on batch and heads, got [2, 4, 16, 8], [2, 2, 16, 8] and [2, 2, 16, 8]}}
  %0 = mdl.attention %q, %k, %k scale = 1.0 : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32> -> tensor<2x4x16x8xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x20x8xf32>, %v: tensor<2x4x16x8xf32>) {
  // expected-error @+1 {{key and value must have the same sequence length, got 20 and 16}}
  %0 = mdl.attention %q, %k, %v scale = 1.0 : tensor<2x4x16x8xf32>, tensor<2x4x20x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x4xf32>) {
  // expected-error @+1 {{query and key must have the same head size, got 8 and 4}}
  %0 = mdl.attention %q, %k, %k scale = 1.0 : tensor<2x4x16x8xf32>, tensor<2x4x16x4xf32>, tensor<2x4x16x4xf32> -> tensor<2x4x16x8xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x16x8xf32>) {
  // expected-error @+1 {{scale must be finite, got INF}}
  %0 = mdl.attention %q, %q, %q causal scale = 0x7FF0000000000000 : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x32xf32>) {
  // expected-error @+1 {{result type 'tensor<2x4x16x8xf32>' does not match the expected 'tensor<2x4x16x32xf32>'}}
  %0 = mdl.attention %q, %q, %v scale = 1.0 : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x32xf32> -> tensor<2x4x16x8xf32>
  return
}

// -----

func.func @f(%l: tensor<8x10xf32>, %y: tensor<8x10xi32>) {
  // expected-error @+1 {{labels must have shape [8] (the logits' shape without the class axis), got [8, 10]}}
  %0 = mdl.cross_entropy %l, %y ignore_index = -100 : tensor<8x10xf32>, tensor<8x10xi32> -> tensor<f32>
  return
}

// -----

func.func @f(%l: tensor<8x10xf32>, %y: tensor<8xf32>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of integer values, but got 'tensor<8xf32>'}}
  %0 = mdl.cross_entropy %l, %y ignore_index = -100 : tensor<8x10xf32>, tensor<8xf32> -> tensor<f32>
  return
}

// -----

func.func @f(%l: tensor<f32>, %y: tensor<i32>) {
  // expected-error @+1 {{logits must have a class axis (rank at least 1)}}
  %0 = mdl.cross_entropy %l, %y ignore_index = -100 : tensor<f32>, tensor<i32> -> tensor<f32>
  return
}

// -----

func.func @f(%l: tensor<8x10xf32>, %y: tensor<8xi32>) {
  // expected-error @+1 {{result #0 must be 0-d tensor of floating-point values, but got 'tensor<8xf32>'}}
  %0 = mdl.cross_entropy %l, %y ignore_index = -100 : tensor<8x10xf32>, tensor<8xi32> -> tensor<8xf32>
  return
}

// -----

func.func @f(%l: tensor<8x10xf32>, %y: tensor<10xui8>) {
  // expected-error @+1 {{labels must have shape [8] (the logits' shape without the class axis), got [10]}}
  %0 = mdl.accuracy %l, %y : tensor<8x10xf32>, tensor<10xui8> -> tensor<f32>
  return
}

// -----

func.func @f(%a: tensor<8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{requires all operands to have the same type}}
  %0 = mdl.mse_loss %a, %b : tensor<8xf32>, tensor<4xf32> -> tensor<f32>
  return
}

// -----

func.func @f(%a: tensor<8xf32>) {
  // expected-error @+1 {{result #0 must be 0-d tensor of floating-point values, but got 'tensor<8xf32>'}}
  %0 = mdl.mse_loss %a, %a : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %0 = "mdl.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{result #0 must be statically shaped tensor of mdl element values, but got 'tensor<2xi8>'}}
  %0 = mdl.constant dense<1> : tensor<2xi8>
  return
}

// -----

// expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'init' [zeros, ones, full, normal, uniform, kaiming_uniform, xavier_uniform, truncated_normal]}}
mdl.param @w : tensor<4xf32> = glorot()

// -----

// expected-error @+1 {{initialiser 'normal' takes 2 arguments (mean, std), got 1}}
mdl.param @w : tensor<4xf32> = normal(0.02)

// -----

// expected-error @+1 {{initialiser 'zeros' takes 0 arguments, got 1}}
mdl.param @w : tensor<4xf32> = zeros(0.0)

// -----

// expected-error @+1 {{initialiser 'kaiming_uniform' takes 1 argument (fan_in), got 0}}
mdl.param @w : tensor<4xf32> = kaiming_uniform()

// -----

// expected-error @+1 {{normal's std must not be negative, got -1.000000e+00}}
mdl.param @w : tensor<4xf32> = normal(0.0, -1.0)

// -----

// expected-error @+1 {{truncated_normal's std must not be negative, got -2.000000e-02}}
mdl.param @w : tensor<4xf32> = truncated_normal(-0.02)

// -----

// expected-error @+1 {{uniform's lower bound 1.000000e+00 is above its upper bound -1.000000e+00}}
mdl.param @w : tensor<4xf32> = uniform(1.0, -1.0)

// -----

// expected-error @+1 {{kaiming_uniform's fan_in must be positive, got 0.000000e+00}}
mdl.param @w : tensor<4xf32> = kaiming_uniform(0.0)

// -----

// expected-error @+1 {{xavier_uniform needs a parameter of rank at least 2 to compute its fans, got 'tensor<4xf32>'}}
mdl.param @w : tensor<4xf32> = xavier_uniform()

// -----

// expected-error @+1 {{initialiser arguments must be finite}}
mdl.param @w : tensor<4xf32> = full(0x7FF0000000000000)

// -----

// expected-error @+1 {{a parameter must hold floats, got 'tensor<4xi32>'}}
mdl.param @w : tensor<4xi32> = zeros()

// -----

// An integer buffer (num_batches_tracked) starts at a constant.
// expected-error @+1 {{an integer buffer is initialised with zeros, ones or full, not normal}}
mdl.param buffer @n : tensor<i64> = normal(0.0, 1.0)

// -----

mdl.param buffer @rm : tensor<4xf32> = zeros()
func.func @read_buffer_as_param() -> tensor<4xf32> {
  // expected-error @+1 {{@rm is a buffer, read with mdl.load}}
  %0 = mdl.param_ref @rm : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @batch_norm_channels(%x: tensor<2x4x3xf32>, %w: tensor<3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{weight, bias and the running statistics must be [4] (the channel axis of the input), got [3]}}
  %y = mdl.batch_norm %x, %w, %w running %w, %w momentum = 0.1 eps = 1.0e-5 : tensor<2x4x3xf32>, tensor<3xf32> -> tensor<2x4x3xf32>
  return %y : tensor<2x4x3xf32>
}

// -----

func.func @batch_norm_momentum(%x: tensor<2x4xf32>, %w: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{momentum must be in [0, 1], got 1.5}}
  %y = mdl.batch_norm %x, %w, %w running %w, %w momentum = 1.5 eps = 1.0e-5 : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// With stride 2 the output padding is 0 or 1: 11 or 12 rows, not 13.
func.func @conv_transpose2d_output_padding(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x13x13xf32> {
  // expected-error @+1 {{result [1, 3, 13, 13] is not a transposed convolution of [1, 4, 5, 5] by [4, 3, 3, 3]}}
  %y = mdl.conv_transpose2d %x, %w stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x13x13xf32>
  return %y : tensor<1x3x13x13xf32>
}

// -----

func.func @conv_transpose2d_channels(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x7x7xf32> {
  // expected-error @+1 {{result must be [1, 3, Ho, Wo], got [1, 4, 7, 7]}}
  %y = mdl.conv_transpose2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x7x7xf32>
  return %y : tensor<1x4x7x7xf32>
}

// -----

func.func @f() {
  // expected-error @+1 {{@missing does not name an mdl.param}}
  %0 = mdl.param_ref @missing : tensor<4xf32>
  return
}

// -----

func.func @g() {
  return
}
func.func @f() {
  // expected-error @+1 {{@g does not name an mdl.param}}
  %0 = mdl.param_ref @g : tensor<4xf32>
  return
}

// -----

mdl.param @w : tensor<4x8xf32> = zeros()
func.func @f() {
  // expected-error @+1 {{type 'tensor<8x4xf32>' does not match the type 'tensor<4x8xf32>' of parameter @w}}
  %0 = mdl.param_ref @w : tensor<8x4xf32>
  return
}

// -----

// expected-error @+1 {{'mdl.param' on argument #0 must be a non-empty string naming a parameter}}
func.func private @f(%w: tensor<4xf32> {mdl.param = 3 : i64})

// -----

// expected-error @+1 {{'mdl.param' on argument #0 must be a non-empty string naming a parameter}}
func.func private @f(%w: tensor<4xf32> {mdl.param = ""})

// -----

// expected-error @+1 {{unknown mdl argument attribute 'mdl.weight'}}
func.func private @f(%w: tensor<4xf32> {mdl.weight = "w"})

// -----

// expected-error @+1 {{must declare at least one field}}
mdl.data @d {
}

// -----

// expected-error @+1 {{body may only hold mdl.field ops, found 'mdl.arange'}}
mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  %0 = mdl.arange : tensor<4xi32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  // expected-error @+1 {{field "x" is declared twice}}
  mdl.field "x" : tensor<3xf32> = npy "y.npy"
}

// -----

mdl.data @d {
  // expected-error @+1 {{an npz source needs the member's key}}
  mdl.field "x" : tensor<3xf32> = npz "x.npz"
}

// -----

mdl.data @d {
  // expected-error @+1 {{key is only valid with an npz source}}
  mdl.field "x" : tensor<3xf32> = npy "x.npy" key "x"
}

// -----

mdl.data @d {
  // expected-error @+1 {{windows needs a 1-D field (the window length), got 'tensor<4x9xui16>'}}
  mdl.field "tokens" : tensor<4x9xui16> = windows file "train.bin"
}

// -----

mdl.data @d {
  // expected-error @+1 {{stride is only valid with windows}}
  mdl.field "tokens" : tensor<9xui16> = stride 1 file "train.bin"
}

// -----

mdl.data @d {
  // expected-error @+1 {{stride must be at least 1, got 0}}
  mdl.field "tokens" : tensor<9xui16> = windows stride 0 file "train.bin"
}

// -----

mdl.data @d {
  // expected-error @+1 {{path must not be empty}}
  mdl.field "x" : tensor<3xf32> = npy ""
}

// -----

mdl.data @d {
  // expected-error @+1 {{field name must not be empty}}
  mdl.field "" : tensor<3xf32> = npy "x.npy"
}

// -----

mdl.data @d {
  // expected-error @+1 {{attribute 'type' failed to satisfy constraint: type attribute of statically shaped tensor of mdl element values}}
  mdl.field "x" : tensor<?xf32> = npy "x.npy"
}

// -----

// expected-error @+1 {{'mdl.field' op expects parent op 'mdl.data'}}
mdl.field "x" : tensor<3xf32> = npy "x.npy"

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
// expected-error @+1 {{outputs must start with "loss"}}
mdl.train @t data @d outputs ["accuracy"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>, %y: tensor<2xui8>):
  %l = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
// expected-error @+1 {{outputs must start with "loss"}}
mdl.train @t data @d outputs [] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>, %y: tensor<2xui8>):
  mdl.yield
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
// expected-error @+1 {{output name "loss" appears twice}}
mdl.train @t data @d outputs ["loss", "loss"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>, %y: tensor<2xui8>):
  %l = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %l, %l : tensor<f32>, tensor<f32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
// expected-error @+1 {{settings must hold a positive integer 'batch'}}
mdl.train @t data @d outputs ["loss"] settings {epochs = 2 : i64} {
^bb0(%x: tensor<2x3xf32>, %y: tensor<2xui8>):
  %l = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
// expected-error @+1 {{settings must hold a positive integer 'batch'}}
mdl.train @t data @d outputs ["loss"] settings {batch = 0 : i64} {
^bb0(%x: tensor<2x3xf32>, %y: tensor<2xui8>):
  %l = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
mdl.train @t data @d outputs ["loss", "accuracy"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>, %y: tensor<2xui8>):
  %l = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  // expected-error @+1 {{yields 1 values but the enclosing mdl.train names 2 outputs}}
  mdl.yield %l : tensor<f32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>, %y: tensor<2xui8>):
  // expected-error @+1 {{the loss must be a floating-point scalar, got 'tensor<2x3xf32>'}}
  mdl.yield %x : tensor<2x3xf32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>, %y: tensor<2xui8>):
  %s = mdl.sum %y axes = [0] : tensor<2xui8> -> tensor<ui8>
  // expected-error @+1 {{the loss must be a floating-point scalar, got 'tensor<ui8>'}}
  mdl.yield %s : tensor<ui8>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
mdl.train @t data @d outputs ["loss", "acc"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>, %y: tensor<2xui8>):
  %l = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  // expected-error @+1 {{metric "acc" must be a scalar, got 'tensor<2x3xf32>'}}
  mdl.yield %l, %x : tensor<f32>, tensor<2x3xf32>
}

// -----

// expected-error @+1 {{data @nowhere does not name an mdl.data}}
mdl.train @t data @nowhere outputs ["loss"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>):
  %l = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
// expected-error @+1 {{body has 1 arguments but data @d has 2 fields}}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>):
  %l = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
// expected-error @+1 {{argument #0 (field "x") has type 'tensor<3xf32>', expected 'tensor<2x3xf32>' (the field's type with the batch 2 prepended)}}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64} {
^bb0(%x: tensor<3xf32>, %y: tensor<2xui8>):
  %l = mdl.sum %x axes = [0] : tensor<3xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<3xf32> = npy "x.npy"
  mdl.field "y" : tensor<ui8> = npy "y.npy"
}
// expected-error @+1 {{argument #1 (field "y") has type 'tensor<4xui8>', expected 'tensor<2xui8>' (the field's type with the batch 2 prepended)}}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>, %y: tensor<4xui8>):
  %l = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}

// -----

// expected-error @+1 {{body has 1 arguments but 2 inputs are named}}
mdl.infer @i inputs ["a", "b"] outputs ["y"] {
^bb0(%a: tensor<2x3xf32>):
  mdl.yield %a : tensor<2x3xf32>
}

// -----

mdl.infer @i inputs ["a"] outputs ["y", "z"] {
^bb0(%a: tensor<2x3xf32>):
  // expected-error @+1 {{yields 1 values but the enclosing mdl.infer names 2 outputs}}
  mdl.yield %a : tensor<2x3xf32>
}

// -----

// expected-error @+1 {{must have at least one input}}
mdl.infer @i inputs [] outputs ["y"] {
  %0 = mdl.arange : tensor<4xi32>
  mdl.yield %0 : tensor<4xi32>
}

// -----

// expected-error @+1 {{input name "a" appears twice}}
mdl.infer @i inputs ["a", "a"] outputs ["y"] {
^bb0(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
  mdl.yield %a : tensor<2x3xf32>
}

// -----

// expected-error @+1 {{output names must not be empty}}
mdl.infer @i inputs ["a"] outputs [""] {
^bb0(%a: tensor<2x3xf32>):
  mdl.yield %a : tensor<2x3xf32>
}

// -----

// expected-error @+1 {{input "a" must lead with the batch dimension, got 'tensor<f32>'}}
mdl.infer @i inputs ["a"] outputs ["y"] {
^bb0(%a: tensor<f32>):
  mdl.yield %a : tensor<f32>
}

// -----

// expected-error @+1 {{input "b" must lead with the batch dimension 2 (of input "a"), got 'tensor<4x3xf32>'}}
mdl.infer @i inputs ["a", "b"] outputs ["y"] {
^bb0(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>):
  mdl.yield %a : tensor<2x3xf32>
}

// -----

mdl.infer @i inputs ["a"] outputs ["y"] {
^bb0(%a: tensor<2x3xf32>):
  %t = mdl.transpose %a perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  // expected-error @+1 {{output "y" must lead with the batch dimension 2 (of input "a"), got 'tensor<3x2xf32>'}}
  mdl.yield %t : tensor<3x2xf32>
}

// -----

mdl.infer @i inputs ["a"] outputs ["y"] {
^bb0(%a: tensor<2x3xf32>):
  %s = mdl.sum %a axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  // expected-error @+1 {{output "y" must lead with the batch dimension 2 (of input "a"), got 'tensor<f32>'}}
  mdl.yield %s : tensor<f32>
}

// -----

func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'mdl.yield' op expects parent op to be one of 'mdl.train, mdl.infer'}}
  mdl.yield %a : tensor<4xf32>
}

// -----

// Shape arithmetic must not overflow int64 (it used to wrap and verify).
func.func @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{input size 4 padded by 4611686018427387904 on axis H does not fit in int64}}
  %0 = mdl.conv2d %x, %w stride = [1, 1] padding = [4611686018427387904, 0] dilation = [4611686018427387904, 1] groups = 1 : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x4x2xf32>
  return
}

// -----

func.func @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{kernel 3 with dilation 4611686018427387904 on axis W spans more elements than fit in int64}}
  %0 = mdl.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 4611686018427387904] groups = 1 : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x2x2xf32>
  return
}

// -----

func.func @f(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{input size 4 padded by 4611686018427387903 on axis H does not fit in int64}}
  %0 = mdl.max_pool2d %x kernel = [9223372036854775807, 1] stride = [1, 1] padding = [4611686018427387903, 0] : tensor<1x1x4x4xf32> -> tensor<1x1x2x4xf32>
  return
}

// -----

func.func @f(%x: tensor<4611686018427387904x4611686018427387904x4xf32>) {
  // expected-error @+1 {{operand shape [4611686018427387904, 4611686018427387904, 4] has more elements than fit in int64}}
  %0 = mdl.reshape %x : tensor<4611686018427387904x4611686018427387904x4xf32> -> tensor<0xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{result shape [4611686018427387904, 4611686018427387904, 4] has more elements than fit in int64}}
  %0 = mdl.reshape %x : tensor<4xf32> -> tensor<4611686018427387904x4611686018427387904x4xf32>
  return
}

// -----

func.func @f(%x: tensor<4611686018427387904xf32>) {
  // expected-error @+1 {{result size on axis 0 (the sum of the operands' sizes) does not fit in int64}}
  %0 = mdl.concat %x, %x axis = 0 : tensor<4611686018427387904xf32>, tensor<4611686018427387904xf32> -> tensor<0xf32>
  return
}

// -----

// ceil(4 / INT64_MAX) is 1; `length + stride - 1` used to wrap to 0.
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{result type 'tensor<0xf32>' does not match the expected 'tensor<1xf32>'}}
  %0 = mdl.slice %x starts = [0] limits = [4] strides = [9223372036854775807] : tensor<4xf32> -> tensor<0xf32>
  return
}

// -----

func.func @f(%lp: tensor<4x5xf32>, %y: tensor<5xi32>) {
  // expected-error @+1 {{labels must have shape [4] (the logits' shape without the class axis), got [5]}}
  %0 = mdl.nll_loss %lp, %y ignore_index = -100 label_smoothing = 0.0 : tensor<4x5xf32>, tensor<5xi32> -> tensor<f32>
  return
}

// -----

func.func @f(%lp: tensor<4x5xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{label_smoothing must be in [0, 1], got 1.5}}
  %0 = mdl.nll_loss %lp, %y ignore_index = -100 label_smoothing = 1.5 : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return
}

// -----

func.func @f(%lp: tensor<4x5xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{result must be 'tensor<f32>' for log_probs of 'f32', got 'tensor<f64>'}}
  %0 = mdl.nll_loss %lp, %y ignore_index = -100 label_smoothing = 0.0 : tensor<4x5xf32>, tensor<4xi32> -> tensor<f64>
  return
}

// -----

func.func @f(%x: tensor<4x3xf32>, %t: tensor<4x2xf32>) {
  // expected-error @+1 {{target must have the input's type 'tensor<4x3xf32>', got 'tensor<4x2xf32>'}}
  %0 = mdl.bce_with_logits %x, %t : tensor<4x3xf32>, tensor<4x2xf32> -> tensor<f32>
  return
}

// -----

func.func @f(%x: tensor<4x3xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{pos_weight must have shape [C] for an input of shape [4, 3] (C its last axis), got [4]}}
  %0 = mdl.bce_with_logits %x, %x, %w : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<f32>
  return
}

// -----

func.func @f(%q: tensor<2x3x4x8xf32>, %m: tensor<2x1x5x4xi1>) {
  // expected-error @+1 {{mask of shape [2, 1, 5, 4] does not broadcast to the scores [b, h, t, s] = [2, 3, 4, 4]}}
  %0 = mdl.attention %q, %q, %q mask %m scale = 0.5 : tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>, tensor<2x1x5x4xi1> -> tensor<2x3x4x8xf32>
  return
}

// -----

func.func @f(%q: tensor<2x3x4x8xf32>) {
  // expected-error @+1 {{dropout must be in [0, 1), got 1.0}}
  %0 = mdl.attention %q, %q, %q scale = 0.5 dropout = 1.0 : tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32>, tensor<2x3x4x8xf32> -> tensor<2x3x4x8xf32>
  return
}

// -----

func.func @f(%xw: tensor<4x16x32xf32>, %w: tensor<32x7xf32>, %h0: tensor<4x8xf32>) {
  // expected-error @+1 {{weight_hh must be [4h, h], got [32, 7]}}
  %h, %c, %g = mdl.lstm_scan %xw, %w, %h0, %h0 : (tensor<4x16x32xf32>, tensor<32x7xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x17x8xf32>, tensor<4x17x8xf32>, tensor<4x16x32xf32>)
  return
}

// -----

func.func @f(%xw: tensor<4x16x24xf32>, %w: tensor<32x8xf32>, %h0: tensor<4x8xf32>) {
  // expected-error @+1 {{the sequences must be [b, t, 32] (4h, from weight_hh), got [4, 16, 24]}}
  %h, %c, %g = mdl.lstm_scan %xw, %w, %h0, %h0 : (tensor<4x16x24xf32>, tensor<32x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x17x8xf32>, tensor<4x17x8xf32>, tensor<4x16x24xf32>)
  return
}

// -----

func.func @f(%xw: tensor<4x16x32xf32>, %w: tensor<32x8xf32>, %h0: tensor<4x8xf32>) {
  // expected-error @+1 {{hidden type 'tensor<4x16x8xf32>' does not match the expected 'tensor<4x17x8xf32>'}}
  %h, %c, %g = mdl.lstm_scan %xw, %w, %h0, %h0 : (tensor<4x16x32xf32>, tensor<32x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x16x8xf32>, tensor<4x17x8xf32>, tensor<4x16x32xf32>)
  return
}

// -----

func.func @f(%xw: tensor<4x16x32xbf16>, %w: tensor<32x8xbf16>, %h0: tensor<4x8xbf16>) {
  // expected-error @+1 {{runs in f32 or f64, got 'bf16'}}
  %h, %c, %g = mdl.lstm_scan %xw, %w, %h0, %h0 : (tensor<4x16x32xbf16>, tensor<32x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) -> (tensor<4x17x8xbf16>, tensor<4x17x8xbf16>, tensor<4x16x32xbf16>)
  return
}

// -----

func.func @f(%dh: tensor<4x17x8xf32>, %g: tensor<4x16x32xf32>, %w: tensor<32x8xf32>) {
  // expected-error @+1 {{c0_grad type 'tensor<4x9xf32>' does not match the expected 'tensor<4x8xf32>'}}
  %dx, %dh0, %dc0 = mdl.lstm_scan_grad %dh, %dh, %g, %dh, %w : (tensor<4x17x8xf32>, tensor<4x17x8xf32>, tensor<4x16x32xf32>, tensor<4x17x8xf32>, tensor<32x8xf32>) -> (tensor<4x16x32xf32>, tensor<4x8xf32>, tensor<4x9xf32>)
  return
}

// -----

func.func @f(%xw: tensor<4x16x24xf32>, %w: tensor<24x8xf32>, %b: tensor<32xf32>, %h0: tensor<4x8xf32>) {
  // expected-error @+1 {{bias_hh type 'tensor<32xf32>' does not match the expected 'tensor<24xf32>'}}
  %h, %g, %n = mdl.gru_scan %xw, %w, %b, %h0 : (tensor<4x16x24xf32>, tensor<24x8xf32>, tensor<32xf32>, tensor<4x8xf32>) -> (tensor<4x17x8xf32>, tensor<4x16x24xf32>, tensor<4x16x8xf32>)
  return
}

// -----

func.func @f(%xw: tensor<4x16x24xf32>, %w: tensor<32x8xf32>, %b: tensor<24xf32>, %h0: tensor<4x8xf32>) {
  // expected-error @+1 {{weight_hh must be [3h, h], got [32, 8]}}
  %h, %g, %n = mdl.gru_scan %xw, %w, %b, %h0 : (tensor<4x16x24xf32>, tensor<32x8xf32>, tensor<24xf32>, tensor<4x8xf32>) -> (tensor<4x17x8xf32>, tensor<4x16x24xf32>, tensor<4x16x8xf32>)
  return
}

// -----

func.func @f(%dh: tensor<4x17x8xf32>, %g: tensor<4x16x24xf32>, %n: tensor<4x16x8xf32>, %w: tensor<24x8xf32>) {
  // expected-error @+1 {{recurrent_grad type 'tensor<4x16x8xf32>' does not match the expected 'tensor<4x16x24xf32>'}}
  %dx, %dhw, %dh0 = mdl.gru_scan_grad %dh, %g, %n, %dh, %w : (tensor<4x17x8xf32>, tensor<4x16x24xf32>, tensor<4x16x8xf32>, tensor<4x17x8xf32>, tensor<24x8xf32>) -> (tensor<4x16x24xf32>, tensor<4x16x8xf32>, tensor<4x8xf32>)
  return
}

// -----

mdl.param @a : tensor<5xf32> = zeros()
mdl.param @c : tensor<f32> = zeros()
// expected-error @+1 {{the members laid out take 17 elements, not 6}}
mdl.flat_view @v : tensor<6xf32> of [@a, @c]

// -----

mdl.param @a : tensor<5xf32> = zeros()
mdl.param @d : tensor<2xf64> = zeros()
// expected-error @+1 {{@d holds 'f64', not 'f32'}}
mdl.flat_view @v : tensor<24xf32> of [@a, @d]

// -----

mdl.param @a : tensor<5xf32> = zeros()
// expected-error @+1 {{@a is a member twice}}
mdl.flat_view @v : tensor<21xf32> of [@a, @a]

// -----

mdl.param @a : tensor<5xf32> = zeros()
mdl.flat_view @v : tensor<5xf32> of [@a]
mdl.flat_view @w : tensor<5xf32> of [@v]
// expected-error @-1 {{@v does not name an mdl.buffer or mdl.param}}

// -----

// expected-error @+1 {{a flat view is a 1-d tensor, got 'tensor<1x5xf32>'}}
mdl.flat_view @v : tensor<1x5xf32> of []
