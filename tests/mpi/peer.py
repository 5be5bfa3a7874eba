#!/usr/bin/python3
"""Rank 0 of the mpi4py interop test (tests/mpi/interop.sh); rank 1 is interop_peer (dsgd).

Sends a float32 tensor with tag 11, expects it back doubled with tag 12, sends one more
with tag 13 for dsgd's any-source receive. Exits 1 on any wrong value.
"""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
if comm.Get_size() != 2 or comm.Get_rank() != 0:
    print("peer.py: run as rank 0 of 2 (rank 1: interop_peer)", file=sys.stderr)
    sys.exit(2)

tensor = np.arange(12, dtype=np.float32) * np.float32(1.5)
comm.Send([tensor, MPI.FLOAT], dest=1, tag=11)
back = np.empty(12, dtype=np.float32)
status = MPI.Status()
comm.Recv([back, MPI.FLOAT], source=1, tag=12, status=status)
comm.Send([np.array([-1, 0, 1], dtype=np.float32), MPI.FLOAT], dest=1, tag=13)

ok = np.array_equal(back, tensor * 2) and status.Get_source() == 1 and status.Get_count(MPI.FLOAT) == 12
print(f"peer.py (mpi4py {__import__('mpi4py').__version__}, rank 0): got back {back[:4]}... "
      f"{'as expected' if ok else 'WRONG'}")
sys.exit(0 if ok else 1)
