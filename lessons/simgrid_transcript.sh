#!/bin/sh
# Runs lesson N on SimGrid ranks (virtual time) and compares its transcript with the golden
# file of the simulated run (tests/golden/lessons/NN.txt): the lesson's program, the merge of
# the ranks' logs and the text are the same on every backend, so the transcripts are equal.
# Usage: simgrid_transcript.sh DSGD LESSON GOLDEN. Exit 77 (skipped) when lesson 7's
# Fashion-MNIST is not installed.
set -eu
dsgd=$1 lesson=$2 golden=$3
if [ "${lesson#0}" = 7 ] && [ ! -d /usr/share/datasets/fashion-mnist ]; then
  echo "skipped: lesson 7 needs Fashion-MNIST (apt-get install dataset-fashion-mnist)"
  exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$dsgd" lesson "$lesson" --backend simgrid --auto --lang en >"$out"
diff -u "$golden" "$out"
echo "lesson $lesson on SimGrid ranks: transcript equals $golden"
