#!/bin/bash
# scripts/mpirun-elastic, torchrun's restart policy for MPI jobs: rank 2 of a 3-rank
# `dsgd train --backend mpi --elastic restart` job is killed (SIGKILL) mid-run; Open MPI ends
# the job, and the agent starts it again with 2 ranks from the newest checkpoint. Checks: the
# agent exits 0 and says so, the second job resumed, and its parameters equal those of 2
# simulated nodes resumed from the same checkpoint, byte for byte (dsgd's own ring on both).
# Usage: elastic_restart.sh AGENT MPIEXEC DSGD NPZ_COMPARE
set -u
agent=$1 mpiexec=$2 dsgd=$3 npz_compare=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"; [ -n "${ag:-}" ] && kill -9 $ag 2>/dev/null' EXIT
flags=(--model mlp:16 --steps 8000 --allreduce ring --elastic restart --checkpoint-every 500
  --keep-checkpoints 100)
MPIRUN=$mpiexec "$agent" -np 3 --oversubscribe -- "$dsgd" train --backend mpi "${flags[@]}" \
  --checkpoint-dir "$dir/ck" --save "$dir/mpi.npz" >"$dir/log" 2>&1 &
ag=$!
# Once rank 0 has trained past the first checkpoint, find rank 2 by its OMPI_COMM_WORLD_RANK
# among the processes of this job (their command line names its checkpoint directory).
for _ in $(seq 1200); do [ -e "$dir/ck/ckpt-0000000500.npz" ] && break; sleep 0.05; done
[ -e "$dir/ck/ckpt-0000000500.npz" ] || { echo "FAIL: no checkpoint written"; cat "$dir/log"; exit 1; }
victim=
for pid in $(pgrep -f -- "--checkpoint-dir $dir/ck"); do
  tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=2 && victim=$pid
done
[ -n "$victim" ] || { echo "FAIL: rank 2 not found"; cat "$dir/log"; exit 1; }
kill -9 "$victim"
for _ in $(seq 1800); do kill -0 $ag 2>/dev/null || break; sleep 0.05; done
kill -0 $ag 2>/dev/null && { echo "FAIL: still running 90 s after the kill"; cat "$dir/log"; exit 1; }
wait $ag; rc=$?; ag=
grep -av "^step " "$dir/log"
fail=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi; }
log=$dir/log
check '[ $rc -eq 0 ]' "the agent exited 0 (got $rc)"
check 'grep -aq "mpirun-elastic: the job failed (exit [0-9]*); restart 1 of 3: 2 ranks from the newest checkpoint" $log' \
  "the agent says it started 2 ranks again from the newest checkpoint"
check 'grep -aq "dsgd train on 2 MPI ranks" $log' "the second job ran on 2 ranks"
resumed=$(grep -ao "resumed from  *[^ ]*ckpt-[0-9]*.npz" "$log" | awk '{print $3}')
check '[ -n "$resumed" ]' "the second job resumed from a checkpoint ($resumed)"
[ -n "$resumed" ] || exit 1
"$dsgd" train -q --nodes 2 "${flags[@]}" --checkpoint-dir "$dir/ck2" --resume "$resumed" \
  --save "$dir/sim.npz" >/dev/null
check '"$npz_compare" "$dir/mpi.npz" "$dir/sim.npz" --rel 0' \
  "the parameters equal 2 simulated nodes resumed from it, byte for byte"
exit $fail
