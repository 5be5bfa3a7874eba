#!/usr/bin/python3
"""Writes comm_hooks.json: PyTorch DistributedDataParallel trained with DDP communication
hooks (fp16, PowerSGD) and with post-local SGD, on 2 gloo processes, for
tests/test_comm_hooks.cpp (which needs no torch). (torch 1.13 refuses bf16_compress_hook
without CUDA and NCCL, so bf16 has no reference here.)

The same MLP (12 -> 16 -> ReLU -> 3), data, batches (16 rows a step, in file order, rank r
taking rows [8r, 8r + 8) of each) and SGD (lr 0.1, momentum 0.9) as dsgd's trainer on 2
simulated nodes. PowerSGD draws its first Q with torch.randn: this script records each one
(by the tensor it is for) so that the test can hand dsgd the same. Run with Debian's
/usr/bin/python3 (python3-torch) from this directory:
    /usr/bin/python3 make_comm_hooks.py > comm_hooks.json
"""
import json
import os
import sys
import tempfile

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from torch.distributed.algorithms.ddp_comm_hooks import post_localSGD_hook
from torch.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager

SIZES = [12, 16, 3]
SAMPLES, BATCH, STEPS, WORLD = 64, 16, 10, 2
LR, MOMENTUM = 0.1, 0.9
REAL_RANDN = torch.randn
CASES = [  # (name, hook options)
    ("none", {}),
    ("fp16", {"hook": "fp16"}),
    ("powersgd:1", {"hook": "powersgd", "rank": 1, "start": 3}),
    ("powersgd:2", {"hook": "powersgd", "rank": 2, "start": 3}),
    ("local_sgd", {"local_period": 3, "local_start": 2}),
]


def data():
    rng = np.random.RandomState(7)
    x = rng.standard_normal((SAMPLES, SIZES[0])).astype(np.float32)
    y = rng.randint(0, SIZES[-1], SAMPLES).astype(np.int64)
    return x, y


def model():
    torch.manual_seed(0)
    layers = [torch.nn.Linear(SIZES[0], SIZES[1]), torch.nn.ReLU(),
              torch.nn.Linear(SIZES[1], SIZES[2])]
    return torch.nn.Sequential(*layers)


def named(net):  # dsgd's names: layers.{i} counts the Linear layers
    out, i = {}, 0
    for m in net:
        if isinstance(m, torch.nn.Linear):
            out[f"layers.{i}.weight"] = m.weight.detach().numpy().ravel().tolist()
            out[f"layers.{i}.bias"] = m.bias.detach().numpy().ravel().tolist()
            i += 1
    return out


def register(ddp, options, drawn):
    hook = options.get("hook")
    if hook == "fp16":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif hook == "powersgd":
        state = powerSGD_hook.PowerSGDState(
            process_group=None, matrix_approximation_rank=options["rank"],
            start_powerSGD_iter=options["start"])
        def recording_randn(*shape, **kwargs):  # the hook's first Q of each tensor, by width
            q = REAL_RANDN(*shape, **kwargs)
            drawn.setdefault(str(shape[1]), q.numpy().ravel().tolist())
            return q
        powerSGD_hook.torch.randn = recording_randn
        ddp.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    elif "local_period" in options:
        # After the start each rank is alone (new_subgroups() wants CUDA: one group per rank).
        subgroup = [dist.new_group([r]) for r in range(WORLD)][dist.get_rank()]
        state = post_localSGD_hook.PostLocalSGDState(
            process_group=None, subgroup=subgroup, start_localSGD_iter=options["local_start"])
        ddp.register_comm_hook(state, post_localSGD_hook.post_localSGD_hook)
        return PeriodicModelAverager(period=options["local_period"],
                                     warmup_steps=options["local_start"])
    return None


def train(rank, options, out_dir, name):
    x, y = data()
    net = model()
    init = named(net)
    ddp = torch.nn.parallel.DistributedDataParallel(net)
    drawn = {}
    averager = register(ddp, options, drawn)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR, momentum=MOMENTUM)
    per_epoch = SAMPLES // BATCH
    for step in range(STEPS):
        lo = (step % per_epoch) * BATCH + rank * (BATCH // WORLD)
        xb = torch.from_numpy(x[lo:lo + BATCH // WORLD])
        yb = torch.from_numpy(y[lo:lo + BATCH // WORLD])
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(ddp(xb), yb)
        loss.backward()
        opt.step()
        if averager:
            averager.average_parameters(ddp.parameters())
    powerSGD_hook.torch.randn = REAL_RANDN
    result = {"init": init, "final": named(net), "initial_q": drawn}
    with open(os.path.join(out_dir, f"{name}.{rank}.json"), "w") as f:
        json.dump(result, f)


def worker(rank, out_dir, port):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    for name, options in CASES:
        train(rank, options, out_dir, name)
        dist.barrier()
    dist.destroy_process_group()


def main() -> None:
    x, y = data()
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(worker, args=(out_dir, 29517), nprocs=WORLD)
        cases = []
        for name, options in CASES:
            ranks = [json.load(open(os.path.join(out_dir, f"{name}.{r}.json")))
                     for r in range(WORLD)]
            cases.append({"name": name, "options": options, "init": ranks[0]["init"],
                          "initial_q": ranks[0]["initial_q"],
                          "final": [r["final"] for r in ranks]})
    json.dump({"torch": torch.__version__, "sizes": SIZES, "batch": BATCH, "steps": STEPS,
               "world": WORLD, "lr": LR, "momentum": MOMENTUM,
               "x": x.ravel().tolist(), "y": y.tolist(), "cases": cases}, sys.stdout)


if __name__ == "__main__":
    main()
