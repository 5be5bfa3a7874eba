#!/bin/sh
# A classroom on one machine: the teacher's and four students' machines are network
# namespaces on one bridge (10.77.0.0/24), one student behind 20 ms of netem delay (a laptop
# on Wi-Fi) when tc can add it. The teacher's dsgd-gui --watch --token listens on the
# bridge; the students run `dsgd node --name` with the job token, streaming to it; an
# intruder with the wrong token is refused. Needs root (ip netns); exits 77 (skipped) where
# namespaces cannot be made.
# Usage: classroom_watch.sh DSGD DSGD_GUI
set -eu
dsgd=$1
gui=$2
students="s0 s1 s2 s3 x"
. "$(dirname "$0")/room.sh"
for k in 0 1 2 3; do machine "s$k" $((10 + k)); done
machine x 99
delay="no delay (tc netem unavailable: that part skipped)"
if in_ns s3 tc qdisc add dev "${tag}bs3" root netem delay 20ms 2>/dev/null; then
  delay="20 ms delay on dave's link"
fi
echo "classroom: 4 students, $delay"

in_ns t xvfb-run -a -s "-screen 0 1280x720x24" "$gui" --watch 10.77.0.1:29600 \
  --token classroom --headless --frames 5 --wait 120 --screenshot "$dir/watch.png" \
  >"$dir/gui.log" 2>&1 &
teacher=$!
until_listening 10.77.0.1:29600 "$dir/gui.log"
# The intruder: a run with the wrong token, refused by the window.
DSGD_TOKEN=guess in_ns x "$dsgd" node --rank 0 --world 1 --rendezvous 10.77.0.99:29500 \
  --listen 10.77.0.99 --steps 2 -q --monitor 10.77.0.1:29600 >"$dir/x.log" 2>&1 ||
  fail "the intruder's own run failed: $(cat "$dir/x.log")"
pids=""
k=0
for name in alice bob carol dave; do
  DSGD_TOKEN=classroom in_ns "s$k" timeout 120 "$dsgd" node --rank $k --world 4 \
    --rendezvous 10.77.0.10:29500 --listen "10.77.0.$((10 + k))" --name $name --steps 20 \
    --latency 1ms -q --monitor 10.77.0.1:29600 >"$dir/$name.log" 2>&1 &
  pids="$pids $!"
  k=$((k + 1))
done
for p in $pids; do wait "$p" || fail "a student's node failed: $(cat "$dir"/*.log)"; done
wait $teacher || fail "the teacher's window failed: $(cat "$dir/gui.log")"
cat "$dir/gui.log"
grep -q "monitor          10.77.0.1:29600 (.* events sent, 0 dropped)" "$dir/alice.log" ||
  fail "alice's summary: $(cat "$dir/alice.log")"
line=$(grep "dsgd-gui: watched" "$dir/gui.log") || fail "no watch summary"
for name in alice bob carol dave; do
  echo "$line" | grep -q "$name" || fail "$name not watched: $line"
done
# The intruder's monitor says hello again after each refusal: refused once or more.
echo "$line" | grep -Eq "0 dropped, [1-9][0-9]* refused" || fail "the intruder not refused: $line"
echo "ok: $line"
