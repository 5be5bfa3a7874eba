# Both ranks send N float32 to each other with a blocking Send, then receive: the program of
# lesson 3's "Sending first is no fix". Under Open MPI over TCP it completes while N * 4
# bytes fit the eager limit and hangs above it. Usage: mpirun -np 2 python3 send_first.py N
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
n = int(sys.argv[1])
other = 1 - comm.rank
mine = np.full(n, comm.rank + 1, dtype=np.float32)
theirs = np.empty(n, dtype=np.float32)
comm.Send(mine, dest=other, tag=0)
comm.Recv(theirs, source=other, tag=0)
assert (theirs == other + 1).all()
print(f"send_first.py: rank {comm.rank} received {n} floats", flush=True)
