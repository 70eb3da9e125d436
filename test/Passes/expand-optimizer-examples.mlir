// Stage 1 of docs/pipeline.md end to end on the examples: from the frontend
// through --mdl-expand-optimizer, every entry gets its functions, with no
// call, marker or composite op left in them.
// RUN: modelc %examples/fashion_mlp.mdl --emit=mdl \
// RUN:   | modelc-opt --mdl-inline-calls --mdl-build-entry-functions --mdl-decompose --mdl-autodiff --mdl-expand-optimizer \
// RUN:   | FileCheck %s --check-prefix=FASHION --implicit-check-not=func.call --implicit-check-not=mdl.autodiff
// RUN: modelc %examples/lenet.mdl --emit=mdl \
// RUN:   | modelc-opt --mdl-inline-calls --mdl-build-entry-functions --mdl-decompose --mdl-autodiff --mdl-expand-optimizer \
// RUN:   | FileCheck %s --check-prefix=LENET --implicit-check-not=func.call --implicit-check-not=mdl.autodiff
// RUN: modelc %examples/char_gpt.mdl --emit=mdl \
// RUN:   | modelc-opt --mdl-inline-calls --mdl-build-entry-functions --mdl-decompose --mdl-autodiff --mdl-expand-optimizer \
// RUN:   | FileCheck %s --check-prefix=GPT --implicit-check-not=func.call --implicit-check-not=mdl.autodiff

// fashion_mlp: an MLP trained with adamw, evaluated, and an infer entry.
// FASHION-NOT: func.func private
// FASHION: mdl.train @fashion
// FASHION: mdl.buffer @"fashion:in:image" : tensor<128x28x28xui8>
// FASHION: mdl.buffer @"fashion:hyper:rng_counter" : tensor<f64>
// FASHION: mdl.buffer @"fashion:eval_out:accuracy" : tensor<f32>
// FASHION-LABEL: func.func @fashion.fwd_bwd()
// FASHION: mdl.load @"fashion:in:image"
// FASHION: mdl.store %{{.*}}, @"fashion:out:loss"
// FASHION: mdl.store %{{.*}}, @"grad:fc1.weight"
// FASHION-LABEL: func.func @fashion.eval()
// FASHION: mdl.load @"fashion:eval_in:image"
// FASHION: mdl.store %{{.*}}, @"fashion:eval_out:accuracy"
// FASHION: mdl.buffer @"fashion:state:m.fc1.weight" : tensor<256x784xf32>
// FASHION: mdl.buffer @"fashion:state:v.fc2.bias" : tensor<10xf32>
// FASHION: mdl.flat_view @"fashion:flat:param.f32" : tensor<203530xf32> of [@fc1.weight, @fc1.bias, @fc2.weight, @fc2.bias]
// FASHION-LABEL: func.func @fashion.update()
// FASHION: mdl.store %{{.*}}, @"fashion:out:grad_norm"
// One step over the flat views of the four parameters (200,704 + 256 +
// 2,560 + 10 elements, each starting on a 64-byte boundary: no padding).
// FASHION: mdl.store %{{.*}}, @"fashion:flat:param.f32" : tensor<203530xf32>
// FASHION: mdl.store %{{.*}}, @"fashion:flat:grad.f32" : tensor<203530xf32>
// FASHION: mdl.store %{{.*}}, @"fashion:out:lr"
// FASHION: mdl.infer @classify
// FASHION: mdl.buffer @"classify:out:label" : tensor<128xi64>
// FASHION-LABEL: func.func @classify.infer()
// FASHION: mdl.store %{{.*}}, @"classify:out:label"

// lenet: convolutions; the same four functions.
// LENET-LABEL: func.func @fashion_lenet.fwd_bwd()
// LENET: mdl.conv2d
// LENET: mdl.store %{{.*}}, @"grad:conv1.weight" : tensor<20x1x5x5xf32>
// LENET-LABEL: func.func @fashion_lenet.eval()
// LENET-LABEL: func.func @fashion_lenet.update()
// LENET: mdl.store %{{.*}}, @"fashion_lenet:flat:param.f32"
// LENET: mdl.store %{{.*}}, @"fashion_lenet:out:lr"
// LENET-LABEL: func.func @classify.infer()

// char_gpt: attention is the fused mdl.attention_forward in every function
// (and mdl.attention_backward in fwd_bwd), no [t, s] tensor; dropout draws
// nine masks (embedding, and attention and MLP of four blocks) in fwd_bwd
// only.
// GPT-LABEL: func.func @char_gpt.fwd_bwd()
// GPT-NEXT: %[[SEED:.*]] = mdl.load @"char_gpt:hyper:seed"
// GPT-NEXT: %[[COUNTER:.*]] = mdl.load @"char_gpt:hyper:rng_counter"
// GPT-NOT: mdl.attention %
// GPT: mdl.dropout_mask %[[SEED]], %[[COUNTER]] p = 2.000000e-01 id = 0
// GPT-NOT: mdl.attention %
// GPT: mdl.attention_forward {{.*}} causal {{.*}} -> tensor<32x4x128x32x{{[a-z0-9]+}}>, tensor<32x4x128xf32>
// GPT-NOT: tensor<32x4x128x128x
// GPT-NOT: mdl.attention %
// GPT: mdl.dropout_mask %[[SEED]], %[[COUNTER]] p = 2.000000e-01 id = 8
// GPT-NOT: mdl.attention %
// GPT: mdl.attention_backward
// GPT-NOT: tensor<32x4x128x128x
// GPT: mdl.store %{{.*}}, @"grad:transformer.wte.weight"
// GPT-LABEL: func.func @char_gpt.eval()
// GPT-NOT: mdl.dropout
// GPT-NOT: mdl.attention %
// GPT-LABEL: func.func @char_gpt.update()
// GPT: mdl.store %{{.*}}, @"char_gpt:flat:param.f32"
// GPT: mdl.store %{{.*}}, @"char_gpt:out:lr"
// GPT-LABEL: func.func @next_byte.infer()
// GPT-NOT: mdl.dropout
// GPT-NOT: mdl.attention %
// GPT: mdl.store %{{.*}}, @"next_byte:out:probs" : tensor<32x256xf32>
// GPT-NEXT: mdl.store %{{.*}}, @"next_byte:out:next" : tensor<32xi64>
