#!/bin/sh
# Runs lesson N on another backend's ranks and compares its transcript with the golden file of
# the simulated run (tests/golden/lessons/NN.txt): the lesson's program, the merge of the
# ranks' logs and the text are the same on every backend, so the transcripts are equal.
# Usage: backend_transcript.sh simgrid DSGD LESSON GOLDEN
#        backend_transcript.sh mpi DSGD LESSON GOLDEN MPIEXEC NP
# Exit 77 (skipped) when lesson 7's Fashion-MNIST is not installed.
set -eu
backend=$1 dsgd=$2 lesson=$3 golden=$4
if [ "${lesson#0}" = 7 ] && [ ! -d /usr/share/datasets/fashion-mnist ]; then
  echo "skipped: lesson 7 needs Fashion-MNIST (apt-get install dataset-fashion-mnist)"
  exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
case $backend in
  simgrid)
    "$dsgd" lesson "$lesson" --backend simgrid --auto --lang en >"$out"
    ranks="SimGrid ranks"
    ;;
  mpi)
    "$5" -np "$6" --oversubscribe "$dsgd" lesson "$lesson" --backend mpi --auto --lang en >"$out"
    ranks="$6 MPI ranks"
    ;;
  *)
    echo "backend_transcript.sh: backend '$backend': use simgrid or mpi" >&2
    exit 2
    ;;
esac
diff -u "$golden" "$out"
echo "lesson $lesson on $ranks: transcript equals $golden"
