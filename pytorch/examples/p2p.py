"""The point-to-point program of PyTorch's tutorial "Writing Distributed Applications with
PyTorch", on dsgd's simulated network: only the backend's name and the import differ.

    PYTHONPATH=build/default /usr/bin/python3 pytorch/examples/p2p.py
"""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import dsgd_torch  # noqa: F401  registers the backend "dsgd"


def run(rank, size):
    tensor = torch.zeros(2)
    if rank == 0:
        tensor = torch.tensor([1.0, -1.0])
        # Send the tensor to process 1
        dist.send(tensor=tensor, dst=1)
    else:
        # Receive tensor from process 0
        dist.recv(tensor=tensor, src=0)
    # The tutorial's print("Rank ", rank, " has data ", tensor[0], tensor[1]), as one write:
    # the two processes share the terminal.
    print(f"Rank  {rank}  has data  {tensor[0]!s} {tensor[1]!s}", flush=True)


def init_process(rank, size, fn, backend="dsgd"):
    """Initialize the distributed environment."""
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ.setdefault("MASTER_PORT", "29500")
    dist.init_process_group(backend, rank=rank, world_size=size)
    fn(rank, size)


if __name__ == "__main__":
    size = 2
    processes = []
    mp.set_start_method("spawn")
    for rank in range(size):
        p = mp.Process(target=init_process, args=(rank, size, run))
        p.start()
        processes.append(p)

    for p in processes:
        p.join()
