#!/usr/bin/env bash
# Sets up, builds and runs every test; ends with one line "N passed, N failed".
# Usage: tools/check.sh [BUILD_DIR]   (default: build)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}

./setup.sh || exit 1
cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release || exit 1
ninja -C "$BUILD" -j2 || exit 1
# The sanitizer build (test/sanitized/CMakeLists.txt): the runtime, its unit
# tests and the fuzz targets with clang-19, ASan and UBSan, in a build
# directory of its own so that the main build keeps its compiler.
SANITIZED="$BUILD-sanitized"
cmake -G Ninja -S test/sanitized -B "$SANITIZED" -DCMAKE_C_COMPILER=clang-19 \
  -DCMAKE_CXX_COMPILER=clang++-19 -DMODELC_MAIN_BUILD="$(realpath "$BUILD")" \
  || exit 1
ninja -C "$SANITIZED" -j2 || exit 1

log=$(mktemp)
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv \
  "$BUILD/test" "$BUILD/test/unit" "$SANITIZED/test" "$SANITIZED/unit" 2>&1 \
  | tee "$log"
status=${PIPESTATUS[0]}

# lit's summary lines look like "  Passed    : 12 (100.00%)".
count() {
  grep -oE "^ +$1 *: *[0-9]+" "$log" | grep -oE "[0-9]+$" | awk '{s += $1} END {print s + 0}'
}
passed=$(( $(count Passed) + $(count "Expectedly Failed") ))
failed=$(( $(count Failed) + $(count "Unexpectedly Passed") + $(count Unresolved) + $(count "Timed Out") ))
skipped=$(( $(count Unsupported) + $(count Skipped) ))
rm -f "$log"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
