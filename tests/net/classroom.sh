#!/bin/sh
# The classroom mode on one machine (room.sh: network namespaces on a bridge). First class:
# the teacher's headless `dsgd-gui --classroom --start-when 4` on 10.77.0.1; an intruder
# with the wrong token is refused; four students join with `dsgd node --rendezvous
# 10.77.0.1:29500 --name`, train the window's run and report it finished; a fifth who joins
# once the run started waits for the next; the window's closing ends the class for all.
# Second class: three students, one killed mid-run: the window shows them gone, the others
# report the error naming a rank and end cleanly when the class does. Third class: lesson 4 on
# four laptops, stepped a message at a time from the window: its transcript is the golden
# one, and each laptop printed its own rank's part. Fourth class: an elastic training run
# (--elastic in-process): bob's laptop dies and the others go on; erin, who joins during the
# run, is added to it; all three finish.
# Usage: classroom.sh DSGD DSGD_GUI
set -eu
dsgd=$1
gui=$2
students="s0 s1 s2 s3 s4 x"
. "$(dirname "$0")/room.sh"
for k in 0 1 2 3 4; do machine "s$k" $((10 + k)); done
machine x 99

# teacher LOG START_WHEN RUN_FLAGS...: the teacher's window, in the background ($teacher).
teacher() {
  log=$1
  when=$2
  shift 2
  in_ns t xvfb-run -a -s "-screen 0 1280x720x24" "$gui" --classroom --listen 10.77.0.1 \
    --token classroom --start-when "$when" --headless --frames 5 --wait 120 \
    --screenshot "$dir/class.png" "$@" >"$log" 2>&1 &
  teacher=$!
  until_listening 10.77.0.1:29500 "$log"
}
# student NS NAME: a student's dsgd node in the background, its output in $dir/$class$NAME.log;
# its pid appended to $pids.
student() {
  in_ns "$1" timeout 150 "$dsgd" node --rendezvous 10.77.0.1:29500 --token classroom \
    --name "$2" >"$dir/$class$2.log" 2>&1 &
  pids="$pids $!"
}

# seat NAME...: students in namespaces s0, s1, ... in this order (seats 1, 2, ...), each
# once the one before has joined; their pids in $pids (a new list).
seat() {
  pids=""
  k=0
  for name in "$@"; do
    student "s$k" "$name"
    until_in_log "(seat $((k + 1)))" "$dir/$class$name.log"
    k=$((k + 1))
  done
}

# First class.
class=""
teacher "$dir/gui.log" 4 --steps 300 --latency 2ms
in_ns x "$dsgd" node --rendezvous 10.77.0.1:29500 --token guess --name mallory \
  >"$dir/mallory.log" 2>&1 && fail "the intruder was let in: $(cat "$dir/mallory.log")"
grep -q "refused this node: wrong job token" "$dir/mallory.log" ||
  fail "the intruder's message: $(cat "$dir/mallory.log")"
seat alice bob carol dave
until_in_log "run 1: rank" "$dir/dave.log"
student s4 erin # late: the run has started
wait $teacher || fail "the teacher's window failed: $(cat "$dir/gui.log")"
for p in $pids; do wait "$p" || fail "a student's node failed: $(cat "$dir"/*.log)"; done
cat "$dir/gui.log"
k=0
for name in alice bob carol dave; do
  grep -q "student $((k + 1)) $name (10.77.0.$((10 + k))): rank $k of run 1: finished" \
    "$dir/gui.log" || fail "$name's line"
  grep -q "the class is over" "$dir/$name.log" || fail "$name's end: $(cat "$dir/$name.log")"
  k=$((k + 1))
done
grep -q "student 5 erin (10.77.0.14): waiting" "$dir/gui.log" || fail "erin's line"
grep -q "run 1" "$dir/erin.log" && fail "erin took part in a run she joined late"
grep -q "1 refused (latest: 10.77.0.99: wrong job token)" "$dir/gui.log" ||
  fail "the intruder's refusal"
line=$(grep "dsgd-gui: watched" "$dir/gui.log") || fail "no watch line"
for name in alice bob carol dave; do
  echo "$line" | grep -q "$name" || fail "$name not watched: $line"
done
grep -q "monitor          10.77.0.1:29501 (.* events sent, 0 dropped)" "$dir/alice.log" ||
  fail "rank 0's summary: $(cat "$dir/alice.log")"
echo "ok: the first class"

# Second class: bob's laptop dies in the middle of a long run.
class="2-"
teacher "$dir/gui2.log" 3 --steps 100000 --latency 2ms
seat alice bob carol
until_in_log "step 1/" "$dir/2-alice.log" # rank 0's progress: every laptop has sent
in_ns s1 pkill -KILL -f "^$dsgd node .*--name bob" || fail "bob's node was not running"
wait $teacher || fail "the teacher's window failed: $(cat "$dir/gui2.log")"
for p in $pids; do wait "$p" || true; done # bob's was killed
cat "$dir/gui2.log"
grep -q "student 2 bob (10.77.0.11): left" "$dir/gui2.log" || fail "bob not shown as gone"
for name in alice carol; do
  grep -Eq "student [13] $name .*of run 1: rank [0-9]: .*rank 1" "$dir/gui2.log" ||
    fail "$name's error does not name bob's rank"
  grep -q "the class is over" "$dir/2-$name.log" || fail "$name's end: $(cat "$dir/2-$name.log")"
done
echo "ok: the second class"

# Third class: lesson 4 stepped from the teacher's window.
class="3-"
teacher "$dir/gui3.log" 4 --lesson 4 --latency 2ms
seat alice bob carol dave
wait $teacher || fail "the teacher's window failed: $(cat "$dir/gui3.log")"
for p in $pids; do wait "$p" || fail "a student's node failed: $(cat "$dir"/3-*.log)"; done
sed -n '/^# Lesson 4/,/^-- end of lesson/p' "$dir/gui3.log" >"$dir/transcript.txt"
diff -u "$(dirname "$0")/../golden/lessons/04.txt" "$dir/transcript.txt" ||
  fail "the stepped lesson's transcript differs from the golden one"
k=0
for name in alice bob carol dave; do
  grep -q "student $((k + 1)) $name (10.77.0.$((10 + k))): rank $k of run 1: finished" \
    "$dir/gui3.log" || fail "$name's line: $(cat "$dir/gui3.log")"
  grep -q "^\[rank $k\] " "$dir/3-$name.log" || fail "$name's rank $k lines: $(cat "$dir/3-$name.log")"
  k=$((k + 1))
done
echo "ok: the third class"

# Fourth class: an elastic run loses bob and takes erin.
class="4-"
teacher "$dir/gui4.log" 3 --elastic in-process --steps 1500 --latency 2ms
seat alice bob carol
until_in_log "step 1/" "$dir/4-alice.log"
in_ns s1 pkill -KILL -f "^$dsgd node .*--name bob" || fail "bob's node was not running"
student s4 erin
wait $teacher || fail "the teacher's window failed: $(cat "$dir/gui4.log")"
for p in $pids; do wait "$p" || true; done # bob's was killed
cat "$dir/gui4.log"
grep -q "student 2 bob (10.77.0.11): left" "$dir/gui4.log" || fail "bob not shown as gone"
for line in "1 alice (10.77.0.10): rank 0 of run 1: finished" \
  "3 carol (10.77.0.12): rank 2 of run 1: finished" "4 erin (10.77.0.14): rank 3 of run 1: finished"; do
  grep -q "student $line" "$dir/gui4.log" || fail "no line 'student $line'"
done
grep -q "rank 1 lost after step" "$dir/4-alice.log" || fail "bob's loss: $(cat "$dir/4-alice.log")"
grep -q "rank 3 joined after step" "$dir/4-alice.log" || fail "erin's join: $(cat "$dir/4-alice.log")"
echo "ok: the fourth class"
