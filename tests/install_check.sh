#!/usr/bin/env bash
# CTest `install`: installs the build into a temporary prefix and runs the installed dsgd
# from another directory. The lesson texts, scenarios and exercise headers must come from
# PREFIX/share/dsgd (core/io/data_dir.h): removing one there must make dsgd name it.
# Usage: install_check.sh CMAKE BUILD_DIR
set -euo pipefail
cmake=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log"
mkdir "$work/elsewhere"
cd "$work/elsewhere"
dsgd=$prefix/bin/dsgd

fail() {
  echo "install_check: $*" >&2
  exit 1
}
expect_error() {  # expect_error WORD ARGS...: exit 2, one line containing WORD
  local word=$1 rc=0
  shift
  "$dsgd" "$@" >out.txt 2>err.txt || rc=$?
  [ "$rc" -eq 2 ] || fail "dsgd $* exited $rc, expected 2: $(cat err.txt)"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "dsgd $* printed more than one line: $(cat err.txt)"
  grep -qF -- "$word" err.txt || fail "dsgd $* did not say '$word': $(cat err.txt)"
}

"$dsgd" lesson 1 --auto >lesson1.txt || fail "dsgd lesson 1 --auto failed"
"$dsgd" lesson 1 --auto --lang zh >lesson1_zh.txt || fail "dsgd lesson 1 --auto --lang zh failed"
"$dsgd" train --steps 5 -q || fail "dsgd train --steps 5 -q failed"
"$dsgd" train --steps 5 -q --scenario classroom-lan || fail "--scenario classroom-lan failed"
expect_error "flaky-wan" train --steps 5 -q --scenario no-such-scenario
"$dsgd" lesson 5 --check "$prefix/share/dsgd/lessons/05-own-allreduce/solution.cpp" \
  >check.txt || fail "lesson 5 --check of the installed solution failed: $(tail -5 check.txt)"

mv "$prefix/share/dsgd/lessons/01-ranks/README.md" "$work/"
expect_error "$prefix/share/dsgd/lessons/01-ranks/README.md" lesson 1 --auto
echo "install_check: dsgd installed in $prefix runs from $PWD"
