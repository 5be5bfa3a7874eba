#!/usr/bin/env bash
# The peer bench (issue: ahead of every peer): the same all_reduce sweep, 4 ranks on
# loopback TCP, float32 sums from 4 KiB to 64 MiB with every result checked, through dsgd
# (`dsgd bench collective`, its automatic choice, with its loopback baseline), Open MPI
# (bench_peer_mpi: MPI_Allreduce over --mca btl tcp,self), Gloo (bench_peer_gloo: Debian's
# libgloo, ring) and PyTorch's gloo backend (torch_allreduce.py), alternated: each round runs
# every peer once, starting with a different one. Then bench/peers/report.py prints each
# peer's time and busbw per size (median and range over the rounds), dsgd's ratio to the
# best peer, and in how many rounds each goal was met. Not part of CI.
# Usage: bench/peers/run.sh [ROUNDS]   (default 5; needs scripts/setup.sh --bench and a
#        build: DSGD_BUILD=build/default; results in $DSGD_BUILD/peers.jsonl)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
build=${DSGD_BUILD:-build/default}
results=$build/peers.jsonl
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -x "$build/dsgd" ] || { echo "run.sh: $build/dsgd not found: build dsgd first" >&2; exit 2; }

run_dsgd() {
  local json=$build/peers-dsgd.json
  "$build/dsgd" bench collective --nodes 4 --algorithm auto --min-bytes 4K --max-bytes 64M \
    --step-factor 4 --json "$json" >/dev/null
  /usr/bin/python3 - "$json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    print(json.dumps({"peer": "dsgd", "bytes": r["bytes"], "ranks": d["nodes"],
                      "time_us": r["time_us"], "busbw_GBps": r["busbw_GBps"],
                      "ok": r["wrong"] == 0, "algorithm": r["algorithm"],
                      "vs_loopback_pct": r["busbw_vs_loopback_pct"]}))
PY
}
run_openmpi() {
  mpirun -np 4 --oversubscribe --mca btl tcp,self "$build/bench/peers/bench_peer_mpi"
}
run_gloo() { "$build/bench/peers/bench_peer_gloo" --ranks 4; }
run_torch_gloo() { /usr/bin/python3 bench/peers/torch_allreduce.py --ranks 4; }

peers=(dsgd)
[ -x "$build/bench/peers/bench_peer_mpi" ] && command -v mpirun >/dev/null && peers+=(openmpi)
[ -x "$build/bench/peers/bench_peer_gloo" ] && peers+=(gloo)
/usr/bin/python3 -c "import torch.distributed" 2>/dev/null && peers+=(torch_gloo)
if [ ${#peers[@]} -lt 4 ]; then
  echo "run.sh: measuring ${peers[*]} only: run scripts/setup.sh --bench and build again for the rest" >&2
fi
: >"$results"
for ((round = 0; round < rounds; round++)); do
  for ((i = 0; i < ${#peers[@]}; i++)); do
    peer=${peers[$(((round + i) % ${#peers[@]}))]}
    echo "run.sh: round $((round + 1)) of $rounds: $peer" >&2
    "run_$peer" | /usr/bin/python3 -c "
import json, sys
for line in sys.stdin:
    row = json.loads(line)
    row['round'] = $round
    print(json.dumps(row))" >>"$results"
  done
done
/usr/bin/python3 bench/peers/report.py "$results"
