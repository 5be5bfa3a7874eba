#!/bin/bash
# dsgd lesson 2 beside an mpi4py program in one MPMD job, both ways round: the mpi4py rank
# (lesson2_peer.py) is rank 0 and dsgd rank 1, then the reverse. dsgd's preflight runs among
# its own ranks, so neither side waits for the other to join it.
# Usage: lesson_foreign.sh MPIEXEC DSGD PEER_PY. Exit 77 (CTest: skipped) without mpi4py
# (skip_without_mpi4py.sh).
set -u
mpiexec=$1 dsgd=$2 peer_py=$3
source "$(dirname "$0")/skip_without_mpi4py.sh"
lesson=("$dsgd" lesson 2 --backend mpi --auto --timeout 20s)
fail=0
check() {  # NAME OUTPUT RC EXPECTED-TEXT...
  local name=$1 out=$2 rc=$3
  shift 3
  [ "$rc" -eq 0 ] || { echo "FAIL ($name): the MPMD job exited with $rc"; fail=1; }
  for want in "$@"; do
    grep -qF -- "$want" <<<"$out" || { echo "FAIL ($name): no '$want' in the output"; fail=1; }
  done
}
out=$(timeout 120 "$mpiexec" --oversubscribe -np 1 /usr/bin/python3 "$peer_py" : -np 1 \
  "${lesson[@]}" 2>&1)
check "mpi4py rank 0, dsgd rank 1" "$out" $? "Rank 1 has data [1, -1]" \
  "lesson2_peer.py: rank 0 as expected"
echo "$out"
out=$(timeout 120 "$mpiexec" --oversubscribe -np 1 "${lesson[@]}" : -np 1 /usr/bin/python3 \
  "$peer_py" 2>&1)
check "dsgd rank 0, mpi4py rank 1" "$out" $? "lesson2_peer.py: Rank 1 has data [1.0, -1.0]" \
  "lesson2_peer.py: rank 1 as expected" "collected"
echo "$out"
exit $fail
