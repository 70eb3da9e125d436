#!/usr/bin/env bash
# Trains every example a few steps on the CPU and prints a SHA-256 of its
# JSON log and of its saved parameters, one line per program. Two compilers
# that compute the same arithmetic print the same lines: a change to code
# generation that must leave training bitwise unchanged is checked by
# running this with the compiler before and after it and diffing the two.
#
#   tools/training_fingerprints.sh MODELC RUNTIME_DIR WORK_DIR
#
# MODELC is the compiler, RUNTIME_DIR the libmodelc_rt*.a it links (its
# --runtime-dir), WORK_DIR a scratch directory (created). One BLAS thread
# and the default seed, so that each line depends only on the program.
# GPT-2 small is compiled at its own width but 2 layers, context 64 and
# batch 2 on generated token shards, and narrow with its 12 layers (148
# parameters: more than one block of the gradient norm's sum); everything
# else as written.
set -euo pipefail
MODELC=$(realpath "$1")
RUNTIME=$(realpath "$2")
WORK=$3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$WORK"
cd "$WORK"
export OPENBLAS_NUM_THREADS=1

/usr/bin/python3 "$ROOT/examples/text_lines.py" lines >/dev/null
# llm.c token shards: a 256-int32 header (magic, version, count), u16 tokens.
/usr/bin/python3 - <<'EOF'
import numpy as np
rng = np.random.default_rng(0)
for name, count, vocab in (("train", 4096, 50257), ("val", 2048, 50257),
                           ("small", 4096, 512)):
    header = np.zeros(256, np.int32)
    header[:3] = (20240520, 1, count)
    tokens = rng.integers(0, vocab, count).astype(np.uint16)
    with open(f"shard_{name}.bin", "wb") as f:
        f.write(header.tobytes())
        f.write(tokens.tobytes())
EOF

# name, example, compile flags, run flags
run() {
  local name=$1 example=$2 flags=$3 runflags=$4
  # shellcheck disable=SC2086
  "$MODELC" "$ROOT/examples/$example.mdl" --target cpu --runtime-dir "$RUNTIME" \
    $flags -o "$name"
  # shellcheck disable=SC2086
  "./$name" --cpu --set log.every=1 $runflags --log "$name.jsonl" \
    --save "$name.safetensors" >/dev/null 2>&1
  # The log's times and throughputs differ from run to run: only numbers
  # the training computes are kept.
  /usr/bin/python3 - "$name.jsonl" >"$name.numbers" <<'EOF'
import json, sys
keep = ("step", "loss", "lr", "grad_norm", "eval_loss", "accuracy", "loss_scale")
for line in open(sys.argv[1]):
    record = json.loads(line)
    print({k: v for k, v in record.items() if k in keep or k.startswith("eval")
           and not k.endswith("seconds")})
EOF
  echo "$name $(sha256sum <"$name.numbers" | cut -c1-16) $(sha256sum <"$name.safetensors" | cut -c1-16)"
}

run fashion_mlp fashion_mlp "" "--set warmup=2 --steps 20 --set eval.every=10 --set eval.steps=2"
run fashion_mlp_f32 fashion_mlp "--precision f32" "--set warmup=2 --steps 20 --set eval.every=10 --set eval.steps=2"
run lenet lenet "" "--set warmup=2 --steps 10 --set eval.every=5 --set eval.steps=2"
run char_gpt char_gpt "" "--set warmup=2 --steps 6 --set eval.every=3 --set eval.steps=2"
run char_gpt_f32 char_gpt "--precision f32" "--set warmup=2 --steps 6 --set eval.every=3 --set eval.steps=2"
run lstm_lm lstm_lm "" "--steps 6 --set eval.every=3 --set eval.steps=2"
run resnet resnet "" "--set warmup=2 --steps 4 --set eval.every=2 --set eval.steps=1"
run text_classifier text_classifier "" "--set warmup=2 --steps 6 --set eval.every=3 --set eval.steps=2"
run gpt2_small gpt2_small "-D N_LAYER=2 -D T=64 -D B=2 -D ACCUM=2" \
  "--set warmup=2 --steps 3 --set eval.every=3 --set eval.steps=1 --data tokens=shard_train.bin --eval-data tokens=shard_val.bin"
run gpt2_narrow gpt2_small "-D N_EMBD=64 -D N_HEAD=2 -D VOCAB=512 -D T=32 -D B=2 -D ACCUM=1" \
  "--set warmup=2 --steps 3 --set eval.every=3 --set eval.steps=1 --data tokens=shard_small.bin --eval-data tokens=shard_small.bin"
