#!/bin/bash
# A rank of `mpirun -np 2 dsgd train --backend mpi` is stopped mid-run; checks how the job
# ends. What each case checks is what Open MPI 4.1 allows (README, cluster guide):
#   kill      SIGKILL rank 1. mpirun notices the death and kills rank 0 itself, long before
#             any deadline: the job must end within 15 s (timeout 60 s), mpirun must exit
#             non-zero and name rank 1 ("process rank 1 ... exited on signal 9"), and rank 0
#             must report that mpirun stopped it (SIGTERM handler: exit 3).
#   stop      SIGSTOP rank 1 (a hung rank: alive, silent). Rank 0's receive deadline (3 s)
#             fires: exit code 3 from mpirun (MPI_Abort with 3) and a message naming rank 1.
#   stop-native  as stop, with --allreduce native: rank 0 is blocked inside MPI_Allreduce,
#             which MPI cannot interrupt; dsgd's watchdog ends it after the deadline, exit 3.
#             The message names the call, not the rank: MPI does not say whom it waits for.
#             (If rank 0 was waiting on one of the step's point-to-point messages instead,
#             that receive's deadline names rank 1, as in `stop`.)
#   kill-recovery  SIGKILL rank 1 under `mpirun --enable-recovery`, which keeps the others
#             running: rank 0's deadline fires and names rank 1. mpirun itself exits 0 in
#             this mode whatever the ranks return (Open MPI 4.1), so only the message and the
#             time are checked.
# Usage: rank_death.sh MPIEXEC DSGD CASE
set -u
mpiexec=$1 dsgd=$2 case=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"; [ -n "${mp:-}" ] && kill -9 $mp 2>/dev/null' EXIT
timeout=3s signal=KILL extra=() train=()
case $case in
  kill) timeout=60s ;;
  stop) signal=STOP ;;
  stop-native) signal=STOP; train=(--allreduce native) ;;
  kill-recovery) extra=(--enable-recovery) ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
# Long enough never to finish by itself: 1000 epochs of 32 steps.
"$mpiexec" "${extra[@]}" --oversubscribe -np 2 "$dsgd" train --backend mpi --model mlp:16 \
  --epochs 1000 --timeout "$timeout" "${train[@]}" >"$dir/log" 2>&1 &
mp=$!
# Wait until rank 0 has trained a step (so both ranks are past MPI_Init and preflight),
# then find rank 1 among mpirun's children by its OMPI_COMM_WORLD_RANK.
for _ in $(seq 600); do grep -q "^step 1/" "$dir/log" && break; sleep 0.05; done
grep -q "^step 1/" "$dir/log" || { echo "FAIL: training never started"; cat "$dir/log"; exit 1; }
sleep 0.5
victim=
for pid in $(pgrep -P $mp); do
  tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 && victim=$pid
done
[ -n "$victim" ] || { echo "FAIL: rank 1 not found among mpirun's children"; exit 1; }
start=$(date +%s.%N)
kill -$signal $victim
# Bound the wait ourselves: a hang must fail the test, not stall it.
for _ in $(seq 1200); do kill -0 $mp 2>/dev/null || break; sleep 0.05; done
if kill -0 $mp 2>/dev/null; then
  echo "FAIL: the job still runs 60 s after rank 1 was stopped (SIG$signal): a hang"
  cat "$dir/log"; kill -CONT $victim; exit 1
fi
wait $mp; rc=$?; mp=
elapsed=$(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $start }")
echo "--- mpirun exited $rc, ${elapsed} s after SIG$signal to rank 1 (pid $victim); its output:"
grep -v "^step " "$dir/log"
echo "---"
fail=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi; }
log=$dir/log
case $case in
  kill)
    check 'awk "BEGIN { exit !($elapsed < 15) }"' "the job ended within 15 s, before rank 0's 60 s deadline"
    check '[ $rc -ne 0 ]' "mpirun exited non-zero ($rc)"
    check 'grep -q "process rank 1 .*exited on signal 9" $log' "mpirun's message names rank 1"
    check 'grep -q "rank 0 (host .*): stopped by SIGTERM" $log' "rank 0 says mpirun stopped it" ;;
  stop)
    check 'awk "BEGIN { exit !($elapsed >= 2.5 && $elapsed < 20) }"' "ended after the 3 s deadline, within 20 s"
    check '[ $rc -eq 3 ]' "mpirun exited 3 (communication failure), got $rc"
    check 'grep -qE "rank 0 \(host .*\): (send to|recv from) rank 1 \(host .*passed its deadline" $log' \
      "rank 0 names rank 1 and its host" ;;
  stop-native)
    check 'awk "BEGIN { exit !($elapsed >= 2.5 && $elapsed < 20) }"' "ended after the 3 s deadline, within 20 s"
    check '[ $rc -eq 3 ]' "mpirun exited 3 (communication failure), got $rc"
    # Most often rank 0 is inside MPI_Allreduce; when the stop lands while it waits in one
    # of the step's other messages (dsgd's own point-to-point), its deadline names rank 1.
    check 'grep -qE "rank 0 \(host .*\): (MPI_Allreduce .*|(send to|recv from) rank 1 \(host .*)passed its deadline" $log' \
      "rank 0's watchdog names the stuck MPI_Allreduce, or its deadline names rank 1" ;;
  kill-recovery)
    check 'awk "BEGIN { exit !($elapsed >= 2.5 && $elapsed < 20) }"' "ended after the 3 s deadline, within 20 s"
    check 'grep -qE "rank 0 \(host .*\): (send to|recv from) rank 1 \(host .*passed its deadline" $log' \
      "rank 0 names rank 1 and its host" ;;
esac
exit $fail
