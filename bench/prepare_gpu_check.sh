#!/usr/bin/env bash
# Builds what bench/gpu_check.sh runs on a GPU machine into gpu-out/ (ignored
# by git; pass it as `carry`): the example programs (default target
# cuda,cpu) and their data. Usage: bench/prepare_gpu_check.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
rm -rf gpu-out && mkdir -p gpu-out/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in fashion_mlp lenet char_gpt; do
  "$BUILD/bin/modelc" "examples/$p.mdl" -o "$tmp/$p"
  strip "$tmp/$p"
done
# Each in the other precision too (fashion_mlp and char_gpt say bf16, lenet
# f32): the f32 builds check the GPU's f32 kernels, the bf16 ones mixed
# precision (docs/passes/amp.md) against the CPU's emulation of it.
for p in fashion_mlp char_gpt; do
  "$BUILD/bin/modelc" "examples/$p.mdl" --precision f32 -o "$tmp/${p}_f32"
  strip "$tmp/${p}_f32"
done
"$BUILD/bin/modelc" examples/lenet.mdl --precision bf16 -o "$tmp/lenet_bf16"
strip "$tmp/lenet_bf16"
# f16 with dynamic loss scaling: the spec §1 MLP, and the small-batch MLP
# whose f16 gradients overflow now and then (test/E2E/Inputs/mlp_f16.mdl).
"$BUILD/bin/modelc" examples/fashion_mlp.mdl --precision f16 -o "$tmp/fashion_mlp_f16"
"$BUILD/bin/modelc" test/E2E/Inputs/mlp_f16.mdl -o "$tmp/mlp_f16"
strip "$tmp/fashion_mlp_f16" "$tmp/mlp_f16"
# ZeRO-1 (docs/runtime/zero.md): its update_chunk kernels against the CPU,
# and the refusal of a GPU run.
"$BUILD/bin/modelc" examples/fashion_mlp.mdl --precision f32 -D ZERO=1 -o "$tmp/fashion_mlp_zero"
strip "$tmp/fashion_mlp_zero"
# Long f32 sums (issue 16, acceptance 4): the cascade on the GPU too.
"$BUILD/bin/modelc" test/E2E/Inputs/sums.mdl -o "$tmp/sums"
strip "$tmp/sums"
# The same models in f64 (--widen-f64): GPU and CPU then agree to far
# tighter tolerances, so a wrong kernel cannot hide in f32 rounding.
for p in lenet char_gpt; do
  "$BUILD/bin/modelc" "examples/$p.mdl" --widen-f64 -o "$tmp/${p}_f64"
  strip "$tmp/${p}_f64"
done
# The Transformer-encoder classifier (issue 16: attention masks, composite
# ops): as written (bf16) and in f64, and its data.
"$BUILD/bin/modelc" examples/text_classifier.mdl -o "$tmp/text_classifier"
"$BUILD/bin/modelc" examples/text_classifier.mdl --widen-f64 -D DROPOUT=0.0 \
  -o "$tmp/text_classifier_f64"
strip "$tmp/text_classifier" "$tmp/text_classifier_f64"
/usr/bin/python3 examples/text_lines.py gpu-out/data/lines
# The ResNet (issue 16: batch norm, module buffers), f32 and in f64.
"$BUILD/bin/modelc" examples/resnet.mdl -o "$tmp/resnet"
"$BUILD/bin/modelc" examples/resnet.mdl --widen-f64 -D WIDTH=8 -o "$tmp/resnet_f64"
strip "$tmp/resnet" "$tmp/resnet_f64"
# The LSTM language model (issue 16: the time loop as a block kernel), as
# written (f32) and small in f64.
"$BUILD/bin/modelc" examples/lstm_lm.mdl -o "$tmp/lstm_lm"
"$BUILD/bin/modelc" examples/lstm_lm.mdl --widen-f64 -D DROPOUT=0.0 -D EMSIZE=32 -D NHID=32 \
  -o "$tmp/lstm_lm_f64"
# The GRU for kernelcheck: its forward (with the LSTM's, infer) and its
# backward (train).
"$BUILD/bin/modelc" test/E2E/Inputs/recurrent.mdl -o "$tmp/recurrent"
"$BUILD/bin/modelc" test/E2E/gradcheck/gru.mdl -o "$tmp/gru_grad"
strip "$tmp/lstm_lm" "$tmp/lstm_lm_f64" "$tmp/recurrent" "$tmp/gru_grad"
# Issue 16's other new ops, for kernelcheck: conv_transpose2d forward
# (infer) and backward (train), bilinear and nearest interpolate.
"$BUILD/bin/modelc" test/E2E/Inputs/conv_transpose.mdl -o "$tmp/conv_transpose"
"$BUILD/bin/modelc" test/E2E/gradcheck/conv-transpose.mdl -o "$tmp/conv_transpose_grad"
"$BUILD/bin/modelc" test/E2E/Inputs/upsample.mdl -o "$tmp/upsample"
strip "$tmp/conv_transpose" "$tmp/conv_transpose_grad" "$tmp/upsample"
# GPT-2 small's kernels at 2 layers: each kernel is launched by both
# layers (and by eval and infer) with other arguments, the way every deep
# model now runs (docs/codegen/kernels.md); f32 and bf16.
"$BUILD/bin/modelc" examples/gpt2_small.mdl -D N_LAYER=2 -D T=64 -D B=2 -D ACCUM=1 \
  --precision f32 -o "$tmp/gpt2_small_f32"
"$BUILD/bin/modelc" examples/gpt2_small.mdl -D N_LAYER=2 -D T=64 -D B=2 -D ACCUM=1 \
  -o "$tmp/gpt2_small_bf16"
strip "$tmp/gpt2_small_f32" "$tmp/gpt2_small_bf16"
# bench/gpu_attention.py: attention alone at GPT-2 small's shapes, and GPT-2
# small itself (bf16, batch 16, context 1024, one micro-batch per step).
"$BUILD/bin/modelc" bench/attention_gpt2.mdl -o "$tmp/attention_gpt2"
"$BUILD/bin/modelc" examples/gpt2_small.mdl -D ACCUM=1 -o "$tmp/gpt2_small"
strip "$tmp/attention_gpt2" "$tmp/gpt2_small"
# Each program carries its own static OpenBLAS (~10 MB). xz -9's 64 MiB
# dictionary spans several programs, so the copies compress to almost
# nothing (9.5 MB for the twenty-seven; fourteen took 33 MB at xz's default
# -6 when programs carried all of OpenBLAS, which with the data passed the
# device machine's 64 MiB carry limit; gpu-out/ is 46 MB now).
XZ_OPT=-9 tar -C "$tmp" -cJf gpu-out/programs.tar.xz fashion_mlp lenet char_gpt \
  fashion_mlp_f32 char_gpt_f32 lenet_bf16 lenet_f64 char_gpt_f64 \
  fashion_mlp_f16 mlp_f16 fashion_mlp_zero sums text_classifier \
  text_classifier_f64 resnet resnet_f64 conv_transpose conv_transpose_grad \
  upsample lstm_lm lstm_lm_f64 recurrent gru_grad gpt2_small_f32 gpt2_small_bf16 \
  attention_gpt2 gpt2_small
# The runtime's unit tests, for their real-GPU cases (CudaGpuDevice.*), with
# the shared libraries they need that a GPU machine's image may lack.
mkdir -p "$tmp/unit/lib"
cp "$BUILD/test/unit/runtime-unittests" "$tmp/unit/"
strip "$tmp/unit/runtime-unittests"
for lib in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$tmp/unit/lib/"
done
tar -C "$tmp/unit" -cJf gpu-out/unittests.tar.xz runtime-unittests lib
cp /usr/share/datasets/fashion-mnist/*.gz gpu-out/data/
cp /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/GPL-2 gpu-out/data/
du -sh gpu-out
