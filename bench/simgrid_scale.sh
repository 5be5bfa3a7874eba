#!/usr/bin/env bash
# bench/simgrid_scale.sh: how the SimGrid backend's wall time and memory grow with ranks. For
# each rank count, one `dsgd bench collective --backend simgrid --payload phantom` run of a
# ring all_reduce (100 MB by default, as issue 22's goal states it), each in a process of
# its own (SimGrid runs one simulation per process), timed by /usr/bin/time: wall seconds,
# peak memory, messages (ring: 2 (R-1) R; halving-doubling on a power of two: 2 R log2 R)
# and wall microseconds per message. The virtual time is SimGrid's, the prediction dsgd's cost model.
# Usage: bench/simgrid_scale.sh [DSGD] [RANKS...]
#   env: BYTES (100M), ALGORITHM (ring), LATENCY (5us), BANDWIDTH (100Gbit), TOPOLOGY (switch)
# Example: bench/simgrid_scale.sh build/default/dsgd 256 1024 4096
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dsgd=${1:-$root/build/default/dsgd}
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(256 1024)
bytes=${BYTES:-100M}
algorithm=${ALGORITHM:-ring}
latency=${LATENCY:-5us}
bandwidth=${BANDWIDTH:-100Gbit}
topology=${TOPOLOGY:-switch}
[ -x "$dsgd" ] || { echo "simgrid_scale: no dsgd at $dsgd (build it, or give its path)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "simgrid_scale: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "# $algorithm all_reduce of $bytes, phantom payloads, $topology, $latency, $bandwidth;" \
  "$(nproc) cores, $(uname -m)"
printf '%8s %12s %12s %10s %10s %12s %12s\n' ranks messages virtual_us predict_us wall_s \
  us/message peak_MiB
for r in "${ranks[@]}"; do
  /usr/bin/time -f '%e %M' -o "$out/time" "$dsgd" bench collective --backend simgrid \
    --payload phantom --algorithm "$algorithm" --nodes "$r" --min-bytes "$bytes" \
    --max-bytes "$bytes" --latency "$latency" --bandwidth "$bandwidth" --topology "$topology" \
    --json "$out/rows.json" >"$out/log" 2>&1 || { cat "$out/log" >&2; exit 1; }
  read -r wall kib <"$out/time"
  # Ring: 2 (R-1) steps of one message per rank while a chunk fits in a segment (4 MiB);
  # halving-doubling on a power of two: 2 log2 R steps. Others print 0 rather than guess.
  log2=$(awk -v r="$r" 'BEGIN { l = log(r) / log(2); print (l == int(l)) ? l : -1 }')
  case $algorithm in
    ring) messages=$((2 * (r - 1) * r)) ;;
    halving_doubling) messages=$([ "$log2" -ge 0 ] && echo $((2 * log2 * r)) || echo 0) ;;
    *) messages=0 ;;
  esac
  /usr/bin/python3 - "$out/rows.json" "$r" "$wall" "$kib" "$messages" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
r, wall, kib, messages = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
row = rows[0]
per = f"{wall / messages * 1e6:.2f}" if messages else "-"
predicted = "-" if row["predicted_us"] is None else format(row["predicted_us"], ".1f")
print(f"{r:8d} {messages:12d} {row['time_us']:12.1f} {predicted:>10} {wall:10.2f} "
      f"{per:>12} {kib / 1024:12.0f}")
EOF
done
