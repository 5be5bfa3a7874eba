#!/usr/bin/env bash
# Errors that every rank of a job finds alike reach the user once, on every try: a flag
# that differs between ranks (preflight names it), simulated nodes under mpirun, and bad
# flags found before MPI starts, on every rank or on one (that rank's line, naming it).
#   reported_once.sh MPIEXEC DSGD TRIES
set -u
mpiexec=$1 dsgd=$2 tries=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/rank.sh" <<SH
#!/usr/bin/env bash
lr=0.1; [ "\${OMPI_COMM_WORLD_RANK:-0}" = 1 ] && lr=0.05
exec "$dsgd" train -q --steps 3 --backend mpi --lr \$lr
SH
chmod +x "$work/rank.sh"
cat >"$work/bad_on_1.sh" <<SH
#!/usr/bin/env bash
extra=(); [ "\${OMPI_COMM_WORLD_RANK:-0}" = 1 ] && extra=(--latency 2ms)
exec "$dsgd" train -q --steps 3 --backend mpi "\${extra[@]}"
SH
chmod +x "$work/bad_on_1.sh"
fail=0
check() {  # name, expected words, then the command
  local name=$1 want=$2; shift 2
  for ((i = 1; i <= tries; ++i)); do
    "$@" >"$work/out" 2>"$work/err"
    local rc=$? lines
    lines=$(grep -c '^dsgd: error: ' "$work/err")
    if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$want" "$work/err"; then
      echo "FAIL $name (try $i): exit $rc, $lines error lines, want '$want' once"
      cat "$work/err"
      fail=1
      return
    fi
  done
  echo "ok   $name: exit 2 and one line, $tries of $tries tries"
}
check "a flag that differs" "--lr 0.05 on rank 1, 0.1 on rank 0" \
      "$mpiexec" -np 2 --oversubscribe "$work/rank.sh"
check "simulated nodes under mpirun" "add --backend mpi" \
      "$mpiexec" -np 2 --oversubscribe "$dsgd" train -q --steps 3
check "a flag for simulated nodes, on every rank" "--latency is for simulated nodes" \
      "$mpiexec" -np 2 --oversubscribe "$dsgd" train -q --steps 3 --backend mpi --latency 2ms
check "a value that does not parse, on every rank" "see 'dsgd train --help'" \
      "$mpiexec" -np 2 --oversubscribe "$dsgd" train -q --steps 3 --backend mpi --lr abc
check "a flag for simulated nodes, on rank 1 only" "rank 1 (host .*): --latency is for" \
      "$mpiexec" -np 2 --oversubscribe "$work/bad_on_1.sh"
exit $fail
