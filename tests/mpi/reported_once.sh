#!/usr/bin/env bash
# Errors that every rank of a job finds alike reach the user once, on every try: a flag
# that differs between ranks (preflight names it), and simulated nodes under mpirun.
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
exit $fail
