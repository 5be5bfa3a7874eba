#!/usr/bin/env bash
# Installs the Debian 12 packages dsgd builds and tests with, only those missing.
#   scripts/setup.sh            core build + everything the test suite, the sanitizer
#                               runs and the fuzz targets use
#   scripts/setup.sh --bench    also the packages the benchmarks compare against
#   scripts/setup.sh --core     only what the core build needs
# Needs root (or sudo) for apt-get; does nothing when all packages are present.
set -euo pipefail

core=(build-essential cmake ninja-build pkg-config git
      libboost-dev zlib1g-dev libopenblas-dev libzip-dev libisal-dev
      libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libfmt-dev catch2
      dataset-fashion-mnist)
# clang-14, its sanitizer and libFuzzer runtimes (libclang-rt-14-dev) and llvm-symbolizer
# (llvm-14): the asan and tsan presets (scripts/sanitize.sh) and scripts/fuzz.sh.
# universal-ctags: scripts/long_functions.sh. PLplot: dsgd compare --plot. libtorch-dev,
# pybind11-dev, python3-dev and python3-torch: the PyTorch backend (pytorch/) and its tests.
# libsimgrid-dev: the virtual-time backend (sim/simgrid).
tests=(libopenmpi-dev openmpi-bin python3-mpi4py python3-numpy
       libtorch-dev pybind11-dev python3-dev python3-torch libsimgrid-dev
       libimgui-dev libglfw3-dev libgif-dev libgl-dev xvfb xauth libgl1-mesa-dri fonts-wqy-microhei
       clang-14 libclang-rt-14-dev llvm-14 universal-ctags
       libplplot-dev plplot-driver-cairo)
bench=(libgloo-dev)

want=("${core[@]}")
case "${1:-}" in
  --core) ;;
  --bench) want+=("${tests[@]}" "${bench[@]}") ;;
  "" ) want+=("${tests[@]}") ;;
  *) echo "setup.sh: unknown option '$1' (use --core, --bench or nothing)" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#want[@]} packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: installed ${#missing[@]} packages"
