#!/bin/bash
# mpi4py interop: one MPMD job, rank 0 = peer.py (Debian's python3-mpi4py), rank 1 = the
# dsgd program interop_peer; they exchange a tensor both ways with send/recv.
# Usage: interop.sh MPIEXEC INTEROP_PEER PEER_PY. Exit 77 (CTest: skipped) without mpi4py,
# or when DSGD_TEST_WITHOUT names mpi4py (tests/CMakeLists.txt).
set -u
mpiexec=$1 dsgd_peer=$2 peer_py=$3
if ! /usr/bin/python3 -c 'import mpi4py, numpy' 2>/dev/null ||
   [[ ",${DSGD_TEST_WITHOUT:-}," == *,mpi4py,* ]]; then
  echo "SKIP: /usr/bin/python3 cannot import mpi4py and numpy (apt-get install python3-mpi4py)"
  exit 77
fi
timeout 120 "$mpiexec" --oversubscribe -np 1 /usr/bin/python3 "$peer_py" : -np 1 "$dsgd_peer"
rc=$?
[ $rc -eq 77 ] && rc=1  # 77 means "skipped" to CTest; a failure must not read as one
[ $rc -eq 0 ] || echo "FAIL: the MPMD job exited with $rc"
exit $rc
