#!/bin/bash
# dsgd train beside another program in one MPMD job, both ways round: with an mpi4py rank
# before or after dsgd's two ranks, training runs among dsgd's own ranks (numbered from 0
# among them) and saves parameters byte-identical to the same job without the other program.
# Usage: train_foreign.sh MPIEXEC DSGD PEER_PY. Exit 77 (CTest: skipped) without mpi4py
# (skip_without_mpi4py.sh).
set -u
mpiexec=$1 dsgd=$2 peer_py=$3
source "$(dirname "$0")/skip_without_mpi4py.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
train=("$dsgd" train --backend mpi --steps 5 --timeout 20s -q)
fail=0
timeout 120 "$mpiexec" --oversubscribe -np 2 "${train[@]}" --save "$dir/alone.npz" \
  >"$dir/alone.log" 2>&1 || { echo "FAIL: dsgd train alone:"; cat "$dir/alone.log"; exit 1; }
run() {  # NAME SAVE MPIRUN-ARGS...: the job must end with 0 and save what `alone` saved
  local name=$1 save=$2
  shift 2
  if ! timeout 120 "$mpiexec" --oversubscribe "$@" >"$dir/$name.log" 2>&1; then
    echo "FAIL ($name): the MPMD job failed:"; cat "$dir/$name.log"; fail=1; return
  fi
  grep -q "idle_peer.py: rank" "$dir/$name.log" || { echo "FAIL ($name): no peer"; fail=1; }
  cmp "$save" "$dir/alone.npz" || { echo "FAIL ($name): other parameters than alone"; fail=1; }
  echo "ok ($name)"
}
run peer-first "$dir/a.npz" -np 1 /usr/bin/python3 "$peer_py" : -np 2 "${train[@]}" \
  --save "$dir/a.npz"
run peer-last "$dir/b.npz" -np 2 "${train[@]}" --save "$dir/b.npz" : -np 1 /usr/bin/python3 \
  "$peer_py"
exit $fail
