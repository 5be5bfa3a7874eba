#!/bin/bash
# mpi4py interop: one MPMD job, rank 0 = peer.py (Debian's python3-mpi4py), rank 1 = the
# dsgd program interop_peer; they exchange a tensor both ways with send/recv.
# Usage: interop.sh MPIEXEC INTEROP_PEER PEER_PY. Exit 77 (CTest: skipped) without mpi4py
# (skip_without_mpi4py.sh).
set -u
mpiexec=$1 dsgd_peer=$2 peer_py=$3
source "$(dirname "$0")/skip_without_mpi4py.sh"
timeout 120 "$mpiexec" --oversubscribe -np 1 /usr/bin/python3 "$peer_py" : -np 1 "$dsgd_peer"
rc=$?
[ $rc -eq 77 ] && rc=1  # 77 means "skipped" to CTest; a failure must not read as one
[ $rc -eq 0 ] || echo "FAIL: the MPMD job exited with $rc"
exit $rc
