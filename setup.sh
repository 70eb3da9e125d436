#!/usr/bin/env bash
# Installs everything modelc needs on a Debian 12 machine; safe to run again.
set -euo pipefail

PACKAGES=(
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools clang-19 libclang-rt-19-dev
  libflatbuffers-dev flatbuffers-compiler libfmt-dev nlohmann-json3-dev
  libcli11-dev zlib1g-dev libopenblas-dev gfortran libgtest-dev ninja-build cmake g++ lld
  python3-numpy dataset-fashion-mnist ccache libgloo-dev libcpp-httplib-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done

if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$CUDA_HOME/bin/ptxas" ] || [ ! -f "$CUDA_HOME/include/cuda.h" ]; then
  echo "setup: error: the CUDA toolkit was not found at $CUDA_HOME (need bin/ptxas and include/cuda.h)." >&2
  echo "setup: install CUDA 12 or 13 there, or set CUDA_HOME to where it is." >&2
  exit 1
fi
echo "setup: CUDA toolkit at $CUDA_HOME ($("$CUDA_HOME/bin/ptxas" --version | tail -1))"

# nvdisasm, to check the tensor-core instructions in the kernels' SASS
# (test/Driver/attention-kernels-sass.test): the toolkit's, else NVIDIA's
# PyPI wheel in MODELC_TOOLS_DIR. Optional: without it that test is skipped.
TOOLS_DIR=${MODELC_TOOLS_DIR:-$HOME/.cache/modelc-tools}
if [ -x "$CUDA_HOME/bin/nvdisasm" ] || [ -x "$TOOLS_DIR/nvidia/cu13/bin/nvdisasm" ]; then
  echo "setup: nvdisasm present"
elif python3 -m pip install -q --no-deps --target "$TOOLS_DIR" nvidia-cuda-nvdisasm 2>/dev/null \
    || /usr/bin/python3 -m pip install -q --no-deps --target "$TOOLS_DIR" nvidia-cuda-nvdisasm 2>/dev/null; then
  echo "setup: nvdisasm installed in $TOOLS_DIR (PyPI nvidia-cuda-nvdisasm)"
else
  echo "setup: note: no nvdisasm (PyPI nvidia-cuda-nvdisasm could not be installed); the SASS test will be skipped"
fi
