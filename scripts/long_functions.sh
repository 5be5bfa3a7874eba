#!/usr/bin/env bash
# Lists the C++ functions longer than N lines (default 80) in the given folders, longest
# first, one a line: LINES  FILE:LINE  NAME. Lambdas count as part of the function they are
# in. Uses universal-ctags (apt-get install universal-ctags; scripts/setup.sh installs it).
#   scripts/long_functions.sh                 core sim cli gui lessons bench tests fuzz
#   scripts/long_functions.sh -n 60 core sim  functions over 60 lines in core/ and sim/
set -euo pipefail
cd "$(dirname "$0")/.."

limit=80
if [ "${1:-}" = "-n" ]; then
  limit=${2:?"-n needs a number of lines"}
  shift 2
fi
case "$limit" in
  '' | *[!0-9]*) echo "long_functions.sh: -n $limit: give a whole number of lines" >&2; exit 2 ;;
esac
folders=("$@")
[ ${#folders[@]} -gt 0 ] || folders=(core sim cli gui lessons bench tests fuzz)
for f in "${folders[@]}"; do
  [ -d "$f" ] || { echo "long_functions.sh: $f: no such folder" >&2; exit 2; }
done
command -v ctags >/dev/null && ctags --version 2>/dev/null | grep -q Universal || {
  echo "long_functions.sh: needs universal-ctags: apt-get install universal-ctags" >&2
  exit 2
}

# Tag lines: NAME<TAB>FILE<TAB>PATTERN;"<TAB>f<TAB>line:N<TAB>[scope:KIND:SCOPE<TAB>]...end:M
ctags -f - -u -R --languages=C++ --langmap=C++:+.cu --kinds-C++=f --fields=+neZ \
  "${folders[@]}" |
  awk -F'\t' -v limit="$limit" '
    $1 ~ /^__anon/ { next }
    {
      line = 0; end = 0; scope = ""
      for (i = 4; i <= NF; i++) {
        if ($i ~ /^line:/) line = substr($i, 6)
        else if ($i ~ /^end:/) end = substr($i, 5)
        else if ($i ~ /^scope:/) { scope = $i; sub(/^scope:[^:]*:/, "", scope) }
      }
      n = end - line + 1
      name = scope == "" ? $1 : scope "::" $1
      gsub(/__anon[0-9a-f]+::/, "", name)
      if (end > 0 && n > limit) printf "%5d  %s:%d  %s\n", n, $2, line, name
    }' |
  sort -k1,1nr -k2,2
