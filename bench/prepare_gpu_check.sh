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
# Each program carries its own static OpenBLAS (~25 MB): compressed, the
# three fit in the device machine's carry limit with the data.
tar -C "$tmp" -cJf gpu-out/programs.tar.xz fashion_mlp lenet char_gpt
cp /usr/share/datasets/fashion-mnist/*.gz gpu-out/data/
cp /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/GPL-2 gpu-out/data/
du -sh gpu-out
