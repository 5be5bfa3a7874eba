#!/usr/bin/env bash
# Regenerates the GUI screenshots in docs/screenshots/ (docs/gui.md shows them): headless
# dsgd-gui under Xvfb at 1920x1080, one PNG per situation a teacher shows. Needs a build
# with the GUI (cmake --preset default; cmake --build --preset default).
# Usage: scripts/screenshots.sh [build dir]   (default build/default)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
gui=$build/gui/dsgd-gui
dsgd=$build/dsgd
out=docs/screenshots
[[ -x $gui ]] || { echo "screenshots.sh: $gui not found: build with the GUI first" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

shot() {  # shot NAME [dsgd-gui flags...]
  local name=$1
  shift
  xvfb-run -a -s "-screen 0 1920x1080x24" "$gui" --headless --width 1920 --height 1080 \
    --screenshot "$out/$name.png" "$@" | tail -1
}
stepped() {  # stepped NAME ALGORITHM MESSAGES: the all_reduce demo with 8 nodes, stepped
  shot "$1" --mode allreduce --nodes 8 --algorithm "$2" --step-mode --step-messages "$3" \
    --frames 30
}

shot dashboard --min-steps 120 --frames 30
stepped allreduce_ring_step ring 20
stepped allreduce_tree_step tree 6
stepped allreduce_halving_doubling_step halving_doubling 12
stepped allreduce_naive_step naive 9
shot message_log --tab messages --nodes 8 --step-mode --step-messages 30 --frames 30
# Where the time goes, in model time (a replay): a model big enough that rank 2's threefold
# compute shows, and the others' waiting for it.
"$dsgd" train --scenario straggler --steps 20 --model mlp:256 --trace "$tmp/straggler.json" \
  --metrics "$tmp/straggler.jsonl" >/dev/null 2>&1
shot time_breakdown --tab time --replay "$tmp/straggler.json" --metrics "$tmp/straggler.jsonl" \
  --seek 0.9 --frames 30
shot nodes32 --nodes 32 --min-steps 20 --frames 30
shot straggler --scenario straggler --min-steps 40 --frames 30
shot crash --scenario crash --min-steps 1 --frames 600 --wait 60
shot partition --scenario partition --step-mode --step-messages 200 --frames 30  # t = 51 ms: cut
shot projector_en --theme projector --scale 1.75 --min-steps 60 --frames 30
shot projector_zh --theme projector --scale 1.75 --lang zh --min-steps 60 --frames 30
shot light --theme light --min-steps 60 --frames 30
shot lesson_zh --lesson 4 --lang zh --step-messages 11 --frames 30
# A classroom of eight students' `dsgd node`s at projector scale: the window starts the run
# once all eight have joined, then draws it beside the class's list.
shot classroom --classroom --listen 127.0.0.1 --port 29650 --token screens --start-when 8 \
  --steps 40 --latency 2ms --theme projector --scale 1.5 --frames 10 --wait 120 &
for _ in $(seq 300); do ss -ltn | grep -q ':29650 ' && break; sleep 0.1; done
for name in ana ben chen dara eli fatima gus hana; do
  "$dsgd" node --rendezvous 127.0.0.1:29650 --token screens --name "$name" >/dev/null 2>&1 &
done
wait
"$dsgd" train --nodes 4 --steps 40 --model mlp:32 --latency 2ms --trace "$tmp/run.json" \
  --metrics "$tmp/run.jsonl" >/dev/null 2>&1
shot replay_light --replay "$tmp/run.json" --metrics "$tmp/run.jsonl" --seek 0.6 \
  --theme light --frames 30
# Watching four `dsgd node` processes, each named as a student would name it, at projector
# scale: the window waits for them to join and finish (--wait), then draws. A run that ends
# before its observer listens sends nothing, so the nodes start once the window listens.
shot watch_named --watch 29640 --theme projector --scale 1.5 --frames 10 --wait 120 &
for _ in $(seq 300); do ss -ltn | grep -q ':29640 ' && break; sleep 0.1; done
names=(teacher alice bob carol)
for rank in 0 1 2 3; do
  DSGD_TOKEN=screenshots "$dsgd" node --rank $rank --world 4 --rendezvous 127.0.0.1:29541 \
    --name "${names[$rank]}" --steps 30 --latency 2ms -q --monitor 127.0.0.1:29640 \
    >/dev/null 2>&1 &
done
wait
