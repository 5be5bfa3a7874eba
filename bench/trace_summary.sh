#!/bin/sh
# Traces of many ranks: what --trace costs on a 1,024-rank SimGrid run, summarised (the
# default past 64 ranks) and in full (--trace-groups 0), the files' sizes, and how long
# dsgd-gui takes to open each and draw 20 frames at 1920x1080 (under Xvfb).
# Usage: bench/trace_summary.sh [RUNS] (from the source directory, after a build).
set -eu
runs=${1:-3}
bin=build/default
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run="$bin/dsgd train --backend simgrid --payload phantom --nodes 1024 --steps 2 --batch 4096
     --allreduce halving_doubling --latency 5us --bandwidth 10Gbit -q"
measure() {  # label, command...: wall seconds and peak memory
  label=$1
  shift
  /usr/bin/time -f "$label %e s %M KB" "$@" >/dev/null 2>"$dir/time" || { cat "$dir/time"; exit 1; }
  tail -1 "$dir/time"
}
i=0
while [ "$i" -lt "$runs" ]; do
  i=$((i + 1))
  echo "# run $i"
  measure "train, no trace      " $run
  measure "train, summary       " $run --trace "$dir/s.json"
  measure "train, full trace    " $run --trace "$dir/f.json" --trace-groups 0
  measure "trace summarize      " "$bin/dsgd" trace summarize "$dir/f.json" "$dir/s2.json"
  for t in s f; do
    measure "gui, $t ($(du -k "$dir/$t.json" | cut -f1) KB) " xvfb-run -a -s "-screen 0 1920x1080x24" \
      "$bin/gui/dsgd-gui" --replay "$dir/$t.json" --headless --frames 20 --seek 0.5 \
      --width 1920 --height 1080 --screenshot "$dir/$t.png"
  done
done
