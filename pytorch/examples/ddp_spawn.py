"""The basic DistributedDataParallel example of PyTorch's DDP tutorial, on dsgd's simulated
network: 4 processes each wrap nn.Linear(10, 10) in DDP and train it with SGD for 10 steps.
Only the backend's name and the import differ; set DSGD_LATENCY=5ms (or DSGD_SCENARIO,
DSGD_TRACE, ...) to change the network without touching the program.

    PYTHONPATH=build/default /usr/bin/python3 pytorch/examples/ddp_spawn.py
"""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP

import dsgd_torch  # noqa: F401  registers the backend "dsgd"


def example(rank, world_size):
    # create default process group
    dist.init_process_group("dsgd", rank=rank, world_size=world_size)
    # create local model
    model = nn.Linear(10, 10)
    # construct DDP model
    ddp_model = DDP(model)
    # define optimizer
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.01)
    for _ in range(10):
        # forward pass
        outputs = ddp_model(torch.randn(1, 10))
        # backward pass
        outputs.sum().backward()
        # update parameters
        optimizer.step()
        optimizer.zero_grad()
    print(f"rank {rank}: 10 steps done, weight[0][:3] = {model.weight[0][:3].tolist()}", flush=True)
    dist.destroy_process_group()


def main():
    world_size = 4
    mp.spawn(example, args=(world_size,), nprocs=world_size, join=True)


if __name__ == "__main__":
    # Environment variables which need to be
    # set when using c10d's default "env"
    # initialization mode.
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ.setdefault("MASTER_PORT", "29500")
    main()
