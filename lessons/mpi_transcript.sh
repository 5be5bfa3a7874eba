#!/bin/sh
# Runs lesson N under mpirun on NP ranks and compares its transcript with the golden file of
# the simulated run (tests/golden/lessons/NN.txt): the lesson's program, the merge of the
# ranks' logs and the text are the same on both backends, so the transcripts are equal.
# Usage: mpi_transcript.sh MPIEXEC DSGD LESSON NP GOLDEN. Exit 77 (skipped) when lesson 7's
# Fashion-MNIST is not installed.
set -eu
mpiexec=$1 dsgd=$2 lesson=$3 np=$4 golden=$5
if [ "$lesson" = 7 ] && [ ! -d /usr/share/datasets/fashion-mnist ]; then
  echo "skipped: lesson 7 needs Fashion-MNIST (apt-get install dataset-fashion-mnist)"
  exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$mpiexec" -np "$np" --oversubscribe "$dsgd" lesson "$lesson" --backend mpi --auto --lang en \
  >"$out"
diff -u "$golden" "$out"
echo "lesson $lesson on $np MPI ranks: transcript equals $golden"
