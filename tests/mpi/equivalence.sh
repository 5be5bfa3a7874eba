#!/bin/bash
# Same numbers as the simulator: `mpirun -np N dsgd train --backend mpi FLAGS --save` must
# save parameters equal, to 1e-6 relative, to `dsgd train --backend sim --nodes N FLAGS`
# (DSGD_EQUIVALENCE_REL, when set, is the bound instead).
# Usage: equivalence.sh MPIEXEC DSGD NPZ_COMPARE N [train flags...]
set -u
mpiexec=$1 dsgd=$2 compare=$3 n=$4
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$dsgd" train --backend sim --nodes "$n" "$@" --save "$dir/sim.npz" -q >"$dir/sim.log" 2>&1 || {
  echo "FAIL: the simulated run failed:"; cat "$dir/sim.log"; exit 1; }
timeout 300 "$mpiexec" --oversubscribe -np "$n" "$dsgd" train --backend mpi "$@" \
  --save "$dir/mpi.npz" -q >"$dir/mpi.log" 2>&1 || {
  echo "FAIL: the MPI run failed:"; cat "$dir/mpi.log"; exit 1; }
grep -E "dsgd train on|final loss" "$dir/mpi.log"
"$compare" "$dir/mpi.npz" "$dir/sim.npz" --rel "${DSGD_EQUIVALENCE_REL:-1e-6}"
