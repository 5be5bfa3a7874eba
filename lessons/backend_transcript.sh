#!/bin/sh
# Runs lesson N on another backend's ranks and compares its transcript with the golden file of
# the simulated run (tests/golden/lessons/NN.txt): the lesson's program, the merge of the
# ranks' logs and the text are the same on every backend, so the transcripts are equal.
# simgrid-step: `--step` on SimGrid's ranks with Enter at every pause, against NN.step.txt.
# There a step lets through the message that arrives first in virtual time, where simulated
# nodes step by a clock that each step moves on: where ranks run side by side (lessons 4
# and 5) the messages of a part may come in another order, so ORDER "lines" compares the
# lines and the number of pauses, not their order.
# Usage: backend_transcript.sh simgrid DSGD LESSON GOLDEN
#        backend_transcript.sh simgrid-step DSGD LESSON GOLDEN [exact|lines]
#        backend_transcript.sh mpi DSGD LESSON GOLDEN MPIEXEC NP
# Exit 77 (skipped) when lesson 7's Fashion-MNIST is not installed.
set -eu
backend=$1 dsgd=$2 lesson=$3 golden=$4
if [ "${lesson#0}" = 7 ] && [ ! -d /usr/share/datasets/fashion-mnist ]; then
  echo "skipped: lesson 7 needs Fashion-MNIST (apt-get install dataset-fashion-mnist)"
  exit 77
fi
out=$(mktemp)
enter=$(mktemp)
trap 'rm -f "$out" "$enter"' EXIT
case $backend in
  simgrid-step)
    awk 'BEGIN { for (i = 0; i < 1000; i++) print "" }' >"$enter"
    "$dsgd" lesson "$lesson" --backend simgrid --step --lang en <"$enter" >"$out" 2>&1
    if [ "${5:-exact}" = lines ]; then
      pauses() { grep -c '^-- next' "$1"; }
      lines() { grep -v '^-- next' "$1" | sort; }
      [ "$(pauses "$golden")" = "$(pauses "$out")" ] || {
        echo "$(pauses "$out") pauses, $golden has $(pauses "$golden")"
        exit 1
      }
      lines "$golden" >"$enter"
      lines "$out" | diff -u "$enter" -
      echo "lesson $lesson stepped on SimGrid ranks: the lines and pauses of $golden"
      exit 0
    fi
    ranks="SimGrid ranks, stepped"
    ;;
  simgrid)
    "$dsgd" lesson "$lesson" --backend simgrid --auto --lang en >"$out"
    ranks="SimGrid ranks"
    ;;
  mpi)
    "$5" -np "$6" --oversubscribe "$dsgd" lesson "$lesson" --backend mpi --auto --lang en >"$out"
    ranks="$6 MPI ranks"
    ;;
  *)
    echo "backend_transcript.sh: backend '$backend': use simgrid, simgrid-step or mpi" >&2
    exit 2
    ;;
esac
diff -u "$golden" "$out"
echo "lesson $lesson on $ranks: transcript equals $golden"
