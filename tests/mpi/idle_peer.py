# Another program of an MPMD job that has nothing to say to dsgd: it joins MPI, names its
# rank and leaves (train_foreign.sh runs dsgd train beside it).
from mpi4py import MPI

world = MPI.COMM_WORLD
print(f"idle_peer.py: rank {world.Get_rank()} of {world.Get_size()}", flush=True)
