#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang in build/fuzz and runs each for a bounded
# number of inputs, starting from the seed corpora in fuzz/corpus/<target>/. Fails on any
# crash, leak, sanitizer report or timeout; the input that did it is left in
# build/fuzz/artifacts/ (reproduce: build/fuzz/fuzz/<target> build/fuzz/artifacts/<file>).
# Usage: scripts/fuzz.sh [RUNS] [TARGET...]   (RUNS defaults to 20000 inputs per target)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-20000}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_frame fuzz_handshake fuzz_csv fuzz_idx fuzz_npz fuzz_scenario fuzz_trace)
fi
build=build/fuzz
cc=${FUZZ_CC:-clang-14}
cxx=${FUZZ_CXX:-clang++-14}
command -v "$cxx" >/dev/null ||
  { echo "fuzz.sh: $cxx not found: run scripts/setup.sh" >&2; exit 2; }
# Reports are symbolized by llvm-symbolizer (package llvm-14), found on PATH.
export PATH=$PATH:/usr/lib/llvm-14/bin

start=$(date +%s)
CC=$cc CXX=$cxx cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDSGD_FUZZ=ON \
  -DCMAKE_UNITY_BUILD=ON \
  -DDSGD_BUILD_TESTS=OFF -DDSGD_BUILD_BENCH=OFF -DDSGD_WITH_MPI=OFF -DDSGD_WITH_GUI=OFF \
  -DDSGD_WITH_CUDA=OFF -DDSGD_WITH_TORCH=OFF -DDSGD_WITH_SIMGRID=OFF >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; exit 1; }
cmake --build "$build" --target "${targets[@]}" -j "${FUZZ_JOBS:-2}"
echo "fuzz.sh: built in $(($(date +%s) - start)) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$build/artifacts"
failed=()
for target in "${targets[@]}"; do
  # New inputs go to the scratch corpus (the first directory), never into fuzz/corpus.
  scratch="$build/corpus/$target"
  mkdir -p "$scratch"
  t0=$(date +%s)
  if "$build/fuzz/$target" -runs="$runs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
      -seed=1 -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" \
      "$scratch" "fuzz/corpus/$target" >"$build/$target.log" 2>&1; then
    echo "fuzz.sh: $target: $runs inputs, no crash ($(($(date +%s) - t0)) s)"
  else
    echo "fuzz.sh: $target FAILED; see $build/$target.log:" >&2
    grep -E "ERROR|runtime error|SUMMARY|Test unit written" "$build/$target.log" | head -20 >&2 || true
    failed+=("$target")
  fi
done
echo "fuzz.sh: done in $(($(date +%s) - start)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: crashes in ${failed[*]}" >&2
  exit 1
fi
