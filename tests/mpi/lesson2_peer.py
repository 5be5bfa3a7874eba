#!/usr/bin/python3
"""One rank of lesson 2 (point-to-point) in mpi4py, beside dsgd's other rank in an MPMD job
(tests/mpi/lesson_foreign.sh). First the PyTorch tutorial's program ("Blocking
point-to-point communication") with mpi4py in place of torch.distributed, then the rest of
lesson 2 (tags, collect) so that dsgd's rank runs the whole lesson. Exits 1 on a wrong value.
Usage: lesson2_peer.py (as rank 0 or rank 1 of 2)
"""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
if comm.Get_size() != 2:
    print("lesson2_peer.py: run as one of 2 ranks", file=sys.stderr)
    sys.exit(2)

# The tutorial's program.
tensor = np.zeros(2, dtype=np.float32)
if rank == 0:
    tensor += np.array([1, -1], dtype=np.float32)
    comm.Send([tensor, MPI.FLOAT], dest=1, tag=0)
else:
    comm.Recv([tensor, MPI.FLOAT], source=0, tag=0)
print(f"lesson2_peer.py: Rank {rank} has data {tensor.tolist()}")
ok = tensor.tolist() == [1.0, -1.0]

# Lesson 2's tags and collect sections.
if rank == 0:
    comm.Send([np.array([10], dtype=np.float32), MPI.FLOAT], dest=1, tag=1)
    comm.Send([np.array([20], dtype=np.float32), MPI.FLOAT], dest=1, tag=2)
    value = np.zeros(1, dtype=np.float32)
    comm.Recv([value, MPI.FLOAT], source=1, tag=0)
    ok = ok and value[0] == 1.0
else:
    first, second = np.zeros(1, dtype=np.float32), np.zeros(1, dtype=np.float32)
    comm.Recv([first, MPI.FLOAT], source=0, tag=2)
    comm.Recv([second, MPI.FLOAT], source=0, tag=1)
    ok = ok and first[0] == 20 and second[0] == 10
    comm.Send([np.array([1], dtype=np.float32), MPI.FLOAT], dest=0, tag=0)
print(f"lesson2_peer.py: rank {rank} {'as expected' if ok else 'WRONG'}")
sys.exit(0 if ok else 1)
