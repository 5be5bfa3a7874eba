#!/bin/bash
# The eager limit dsgd's simulated nodes model (sim/node.h: 64 KiB, as Open MPI over TCP),
# checked against Open MPI itself: two ranks that both send first, then receive, finish
# with 16000 floats (64000 bytes) and are still blocked after 5 s with 17000 (68000 bytes).
# tests/test_eager_limit.cpp runs the same program on simulated nodes with the same sizes.
# Usage: eager_limit.sh MPIEXEC SEND_FIRST_PY. Exit 77 (CTest: skipped) without mpi4py.
set -u
mpiexec=$1 script=$2
source "$(dirname "$0")/skip_without_mpi4py.sh"
run() {  # FLOATS SECONDS: the job's exit code (124: still running at the deadline)
  timeout "$2" "$mpiexec" --oversubscribe --mca btl self,tcp -np 2 /usr/bin/python3 "$script" \
    "$1" >/tmp/eager_limit.$$.out 2>&1
}
fail=0
run 16000 60
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: 16000 floats each way exited $rc, expected to finish"; fail=1; }
cat /tmp/eager_limit.$$.out
run 17000 5
rc=$?
[ "$rc" -eq 124 ] || { echo "FAIL: 17000 floats each way exited $rc, expected to hang"; fail=1; }
rm -f /tmp/eager_limit.$$.out
[ "$fail" -eq 0 ] && echo "ok: Open MPI over TCP: 64000 bytes eager, 68000 bytes rendezvous"
exit $fail
