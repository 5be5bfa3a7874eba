#!/usr/bin/env bash
# bench/cuda_check.sh: checks the CUDA path on a machine with a GPU in one call, then prints
# a short table. Configures a CUDA build for this machine's GPU (CMAKE_CUDA_ARCHITECTURES=
# native unless CUDA_ARCH is set), builds only dsgd, dsgd_cuda_tests and bench_cuda, runs
# the CUDA tests, trains Fashion-MNIST (synthetic 784-feature data where the dataset is not
# installed, and says so) on the GPU and on the CPU and compares, runs 2 MPI ranks on the
# GPU where mpirun exists, runs --allreduce nccl (one rank per GPU; MPI ranks choosing NCCL
# themselves where there are 2 GPUs or more), and runs bench_cuda. Meant to finish in a few
# minutes on 16 cores.
# Usage: bench/cuda_check.sh [BUILD_DIR]     env: JOBS, CUDA_ARCH, STEPS (bench steps)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/cuda-check}
jobs=${JOBS:-$(nproc)}
arch=${CUDA_ARCH:-native}
logs=$build/check-logs
mkdir -p "$logs"
declare -a names results
record() { names+=("$1"); results+=("$2"); }
t_start=$(date +%s)
elapsed() { echo $(( $(date +%s) - t_start ))s; }

echo "== GPU =="
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || echo "nvidia-smi not available"

echo "== configure ($arch) =="
if cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDSGD_WITH_CUDA=ON \
     -DCMAKE_CUDA_ARCHITECTURES="$arch" -DDSGD_WITH_GUI=OFF -DDSGD_BUILD_TESTS=ON \
     -DDSGD_BUILD_BENCH=ON >"$logs/configure.txt" 2>&1; then
  grep -E "CUDA device|NCCL|MPI backend" "$logs/configure.txt"
  record configure "ok ($(elapsed))"
else
  tail -30 "$logs/configure.txt"
  record configure "FAILED (see $logs/configure.txt)"
  printf '\n%-34s %s\n' "${names[0]}" "${results[0]}"
  exit 1
fi

echo "== build (-j$jobs) =="
t0=$(date +%s)
if ninja -C "$build" -j"$jobs" dsgd dsgd_cuda_tests bench_cuda >"$logs/build.txt" 2>&1; then
  record build "ok ($(( $(date +%s) - t0 ))s)"
else
  tail -40 "$logs/build.txt"
  record build "FAILED (see $logs/build.txt)"
  for i in "${!names[@]}"; do printf '%-28s %s\n' "${names[$i]}" "${results[$i]}"; done
  exit 1
fi
dsgd=$build/dsgd

echo "== CUDA tests =="
(cd "$build" && timeout 600 ctest -R '^cuda_tests$' --output-on-failure -V) >"$logs/ctest.txt" 2>&1
rc=$?
grep -E "CUDA tests on|SKIPPED|test cases|assertions|FAILED|Passed|Failed|Skipped" "$logs/ctest.txt" | head -20
if grep -q "Skipped" "$logs/ctest.txt"; then record "CUDA tests" "SKIPPED (no device seen)";
elif [ $rc -eq 0 ]; then record "CUDA tests" "passed: $(grep -oE 'All tests passed \([^)]*\)' "$logs/ctest.txt" | head -1)";
else record "CUDA tests" "FAILED (see $logs/ctest.txt)"; fi

echo "== accuracy: --device cuda vs cpu =="
if [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
   [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte ]; then
  data=fashion-mnist; data_note="Fashion-MNIST"
else
  data="synthetic:train=60000,test=10000,features=784"
  data_note="synthetic 784-feature (Fashion-MNIST not installed here)"
fi
echo "data: $data_note"
acc() { grep -oE 'test accuracy +[0-9.]+' "$1" | grep -oE '[0-9.]+$'; }
# "ok" when two test accuracies (percent) are within 0.5 points, "DIFFERS" if not, "?".
agree() {
  python3 -c "print('ok' if abs(float('${1:-nan}') - float('${2:-nan}')) <= 0.5 else 'DIFFERS')" \
    2>/dev/null || echo "?"
}
# "max rel diff 3.1e-06" between two --save files (max |a - b| / max |b| per tensor).
rel_diff() {
  python3 - "$1" "$2" 2>/dev/null <<'PY'
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
print("max rel diff %.1e" % max(abs(a[k] - b[k]).max() / abs(b[k]).max() for k in b.files))
PY
}
per_step() { grep -oE '\(([0-9.]+) ms per step\)' "$1" | grep -oE '[0-9.]+'; }
common=(train --data "$data" --model mlp:128 --epochs 3 --batch 256 --seed 1 -q)
for dev in cuda cpu; do
  for nodes in 1 4; do
    out=$logs/train-$dev-$nodes.txt
    timeout 300 "$dsgd" "${common[@]}" --device "$dev" --nodes "$nodes" \
      --save "$logs/params-$dev-$nodes.npz" >"$out" 2>&1 || echo "dsgd train --device $dev --nodes $nodes FAILED: $(tail -2 "$out")"
  done
done
cat "$logs/train-cuda-4.txt"
for nodes in 1 4; do
  a_gpu=$(acc "$logs/train-cuda-$nodes.txt"); a_cpu=$(acc "$logs/train-cpu-$nodes.txt")
  note=""
  if command -v python3 >/dev/null && python3 -c "import numpy" 2>/dev/null &&
     [ -f "$logs/params-cuda-$nodes.npz" ] && [ -f "$logs/params-cpu-$nodes.npz" ]; then
    note="params $(rel_diff "$logs/params-cuda-$nodes.npz" "$logs/params-cpu-$nodes.npz")"
  fi
  ok=$(agree "$a_gpu" "$a_cpu")
  record "accuracy $nodes node(s)" "$ok: cuda ${a_gpu:-?} % vs cpu ${a_cpu:-?} % (${data_note%% *}, 3 epochs, $(per_step "$logs/train-cuda-$nodes.txt") vs $(per_step "$logs/train-cpu-$nodes.txt") ms/step) $note"
done

echo "== MPI ranks on the GPU =="
# --allreduce ring: gradients staged through pinned memory and MPI, even where 2 GPUs would
# let --allreduce auto pick NCCL (checked in the NCCL section below).
if command -v mpirun >/dev/null; then
  out=$logs/mpi.txt
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 180 \
    mpirun --oversubscribe -np 2 "$dsgd" train --backend mpi --device cuda --data "$data" \
    --model mlp:128 --steps 200 --seed 1 -q --allreduce ring --save "$logs/params-mpi.npz" \
    >"$out" 2>&1
  rc=$?
  timeout 120 "$dsgd" train --device cuda --nodes 2 --data "$data" --model mlp:128 --steps 200 \
    --seed 1 -q --allreduce ring --save "$logs/params-sim2.npz" >"$logs/sim2.txt" 2>&1
  cat "$out" | tail -8
  if [ $rc -eq 0 ]; then
    diff="vs 2 simulated: $(rel_diff "$logs/params-mpi.npz" "$logs/params-sim2.npz")"
    record "MPI 2 ranks --device cuda" "ok, test accuracy $(acc "$out") % ${diff}"
  else
    record "MPI 2 ranks --device cuda" "FAILED rc=$rc (see $out)"
  fi
else
  record "MPI 2 ranks --device cuda" "skipped: no mpirun"
fi

echo "== NCCL =="
# --allreduce nccl on one simulated rank per GPU (up to 4; a communicator of one on a
# single GPU) against the CPU; with 2 GPUs or more, MPI ranks that pick NCCL by themselves.
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  gpus=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
else
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
fi
n=$(( gpus > 4 ? 4 : (gpus < 1 ? 1 : gpus) ))
nccl_common=(train --data "$data" --model mlp:128 --steps 200 --seed 1 -q --nodes "$n")
timeout 180 "$dsgd" "${nccl_common[@]}" --device cuda --allreduce nccl \
  --save "$logs/params-nccl.npz" >"$logs/nccl.txt" 2>&1
rc=$?
timeout 180 "$dsgd" "${nccl_common[@]}" --device cpu --save "$logs/params-nccl-cpu.npz" \
  >"$logs/nccl-cpu.txt" 2>&1
rc_cpu=$?
tail -8 "$logs/nccl.txt"
a_nccl=$(acc "$logs/nccl.txt"); a_cpu=$(acc "$logs/nccl-cpu.txt")
close=$(agree "$a_nccl" "$a_cpu")
if [ $rc -eq 0 ] && [ $rc_cpu -eq 0 ] && grep -q "summed on the GPUs by NCCL" "$logs/nccl.txt"; then
  record "NCCL $n rank(s) --allreduce nccl" "$close: ${a_nccl:-?} % vs cpu ${a_cpu:-?} %, params $(rel_diff "$logs/params-nccl.npz" "$logs/params-nccl-cpu.npz")"
else
  record "NCCL $n rank(s) --allreduce nccl" "FAILED rc=$rc, cpu rc=$rc_cpu (see $logs/nccl.txt)"
fi
if [ "$gpus" -ge 2 ] && command -v mpirun >/dev/null; then
  out=$logs/nccl-mpi.txt
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 180 \
    mpirun --oversubscribe -np "$n" "$dsgd" train --backend mpi --device cuda --data "$data" \
    --model mlp:128 --steps 200 --seed 1 -q --save "$logs/params-nccl-mpi.npz" >"$out" 2>&1
  rc=$?
  tail -8 "$out"
  if [ $rc -eq 0 ] && grep -q "summed on the GPUs by NCCL" "$out"; then
    a_mpi=$(acc "$out")
    close=$(agree "$a_mpi" "$a_nccl")
    record "NCCL MPI $n ranks (auto)" "$close: ${a_mpi:-?} % vs ${a_nccl:-?} % simulated, params $(rel_diff "$logs/params-nccl-mpi.npz" "$logs/params-nccl.npz")"
  else
    record "NCCL MPI $n ranks (auto)" "FAILED rc=$rc or NCCL not chosen (see $out)"
  fi
else
  record "NCCL MPI ranks (auto)" "skipped: needs 2 GPUs and mpirun (this machine: $gpus GPU)"
fi

echo "== benchmark =="
timeout 300 "$build/bench/bench_cuda" --steps "${STEPS:-100}" | tee "$logs/bench.txt"
rc=${PIPESTATUS[0]}
if [ $rc -eq 0 ]; then record benchmark "ok (figures below)";
else record benchmark "FAILED or skipped rc=$rc (see $logs/bench.txt)"; fi

echo
echo "== summary ($(elapsed) in all; logs in $logs) =="
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
for i in "${!names[@]}"; do printf '%-34s %s\n' "${names[$i]}" "${results[$i]}"; done
grep -E "^==|ms/step" "$logs/bench.txt" 2>/dev/null
