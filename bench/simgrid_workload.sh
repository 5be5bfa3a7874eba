#!/usr/bin/env bash
# bench/simgrid_workload.sh: the wall time and memory one DDP training step of a real model
# takes to simulate on the SimGrid backend, as the rank count grows. For each rank count, one
# `dsgd bench workload --backend simgrid` run (phantom payloads) in a process of its own
# (SimGrid runs one simulation per process), timed by /usr/bin/time; it prints the step's
# virtual time, its compute and exposed communication (rank means), the wall seconds and
# the peak memory.
# Usage: bench/simgrid_workload.sh [DSGD] [RANKS...]
#   env: WORKLOAD (resnet50), ALGORITHM (halving_doubling), TOPOLOGY (fat-tree), LATENCY (1us),
#        BANDWIDTH (100Gbit), GFLOPS (100000), BATCH (32 per rank)
# Example: bench/simgrid_workload.sh build/default/dsgd 256 1024 4096
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dsgd=${1:-$root/build/default/dsgd}
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(256 1024 4096)
workload=${WORKLOAD:-resnet50}
algorithm=${ALGORITHM:-halving_doubling}
topology=${TOPOLOGY:-fat-tree}
latency=${LATENCY:-1us}
bandwidth=${BANDWIDTH:-100Gbit}
gflops=${GFLOPS:-100000}
batch=${BATCH:-32}
[ -x "$dsgd" ] || { echo "simgrid_workload: no dsgd at $dsgd (build it, or give its path)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "simgrid_workload: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "# $workload, $batch samples a rank at $gflops GFLOP/s, $algorithm all_reduce, $topology," \
  "$latency a link, $bandwidth; $(nproc) cores, $(uname -m)"
printf '%8s %12s %12s %12s %10s %10s\n' ranks step_ms compute_ms exposed_ms wall_s peak_MiB
for r in "${ranks[@]}"; do
  /usr/bin/time -f '%e %M' -o "$out/time" "$dsgd" bench workload --backend simgrid \
    --workload "$workload" --nodes "$r" --topology "$topology" --latency "$latency" \
    --bandwidth "$bandwidth" --gflops "$gflops" --batch-per-rank "$batch" \
    --algorithm "$algorithm" --links 0 --json "$out/step.json" >"$out/log" 2>&1 ||
    { cat "$out/log" >&2; exit 1; }
  read -r wall kib <"$out/time"
  /usr/bin/python3 - "$out/step.json" "$r" "$wall" "$kib" <<'PY'
import json, sys
ranks = json.load(open(sys.argv[1]))["steps"][0]["ranks"]
r, wall, kib = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
mean = lambda key: sum(x[key] for x in ranks) / len(ranks)
step = max(x["total_s"] for x in ranks)
print(f"{r:8d} {step * 1e3:12.3f} {mean('compute_s') * 1e3:12.3f} {mean('exposed_s') * 1e3:12.3f} "
      f"{wall:10.2f} {kib / 1024:10.0f}")
PY
done
