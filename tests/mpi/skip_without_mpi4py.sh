# Sourced by the tests that run an mpi4py rank: exits 77 (CTest: skipped) when Debian's
# /usr/bin/python3 cannot import mpi4py and numpy, or when DSGD_TEST_WITHOUT names mpi4py
# (tests/CMakeLists.txt).
if ! /usr/bin/python3 -c 'import mpi4py, numpy' 2>/dev/null ||
   [[ ",${DSGD_TEST_WITHOUT:-}," == *,mpi4py,* ]]; then
  echo "SKIP: /usr/bin/python3 cannot import mpi4py and numpy (apt-get install python3-mpi4py)"
  exit 77
fi
