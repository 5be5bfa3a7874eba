# A classroom's machines as network namespaces on one machine, sourced by the tests beside
# it: the teacher's namespace holds a bridge (10.77.0.1/24), and `machine NAME HOST` adds a
# student's namespace on it at 10.77.0.HOST. Needs root (ip netns); a test that cannot make
# namespaces exits 77 (skipped). Removes every namespace and the scratch folder at exit.
# The sourcing script sets `students` (namespace names to clean up) first.
skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAILED: $*"
  exit 1
}
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "no ip (iproute2)"
command -v xvfb-run >/dev/null || skip "no xvfb-run"
tag=dc$$
dir=$(mktemp -d)
cleanup() {
  for n in t $students; do ip netns del "${tag}$n" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
ip netns add "${tag}t" 2>/dev/null || skip "cannot make network namespaces here"
in_ns() { # in_ns NAMESPACE COMMAND...
  ns=$1
  shift
  ip netns exec "${tag}$ns" "$@"
}
in_ns t ip link set lo up
in_ns t ip link add br0 type bridge
in_ns t ip addr add 10.77.0.1/24 dev br0
in_ns t ip link set br0 up
machine() { # machine NAME HOST: a namespace on the bridge at 10.77.0.HOST
  ip netns add "${tag}$1"
  in_ns "$1" ip link set lo up
  ip link add "${tag}a$1" type veth peer name "${tag}b$1"
  ip link set "${tag}a$1" netns "${tag}t"
  ip link set "${tag}b$1" netns "${tag}$1"
  in_ns t ip link set "${tag}a$1" master br0 up
  in_ns "$1" ip addr add "10.77.0.$2/24" dev "${tag}b$1"
  in_ns "$1" ip link set "${tag}b$1" up
}
# until_listening ADDRESS:PORT LOG: waits (up to 60 s) for the teacher's window to listen.
until_listening() {
  i=0
  until in_ns t ss -ltn | grep -q "$1 "; do
    i=$((i + 1))
    [ $i -lt 600 ] || fail "the teacher's window never listened on $1: $(cat "$2")"
    sleep 0.1
  done
}
# until_in_log TEXT FILE: waits (up to 60 s) for a line in a student's log.
until_in_log() {
  i=0
  until grep -q "$1" "$2" 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 600 ] || fail "no '$1' in $2: $(cat "$2")"
    sleep 0.1
  done
}
