#!/bin/sh
# What streaming to an observer costs a run: `dsgd train` on 16 simulated nodes, alone, with
# an observer that reads everything, and with one that accepts and never reads (events are
# then dropped, never waited for). Wall time of each, RUNS times, alternated.
# Usage: bench/monitor_overhead.sh [RUNS] (from the source directory, after a build).
set -eu
runs=${1:-3}
dsgd=build/default/dsgd
py=/usr/bin/python3
observer() {  # port, read|stall: a listener on 127.0.0.1 that reads or never reads
  $py -c "
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $1)); s.listen(4)
c, _ = s.accept()
if '$2' == 'stall': time.sleep(3600)
while c.recv(1 << 20): pass
" >/dev/null 2>&1 &
  echo $!
}
train="$dsgd train --nodes 16 --steps 300 --batch 1024 --model mlp:64 -q"
i=0
while [ "$i" -lt "$runs" ]; do
  i=$((i + 1))
  /usr/bin/time -f "alone         %e s" $train >/dev/null
  pid=$(observer 29681 read); sleep 0.5
  /usr/bin/time -f "observer      %e s" $train --monitor 127.0.0.1:29681 | grep monitor
  kill "$pid" 2>/dev/null || true
  pid=$(observer 29682 stall); sleep 0.5
  /usr/bin/time -f "never reads   %e s" $train --monitor 127.0.0.1:29682 | grep monitor
  kill "$pid" 2>/dev/null || true
done
