"""all_reduce among 4 local processes on PyTorch's gloo backend and on dsgd's ("dsgd",
pytorch/), float32 SUM, 1 MiB and 64 MiB: the median time of each over several iterations,
and dsgd's time as a share of gloo's. Both run on loopback TCP on this machine, dsgd with
its default (unlimited) links.

    PYTHONPATH=build/default /usr/bin/python3 bench/torch_allreduce.py [--iters N]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "torch"))
import common  # noqa: E402

SIZES = [1 << 20, 64 << 20]


def timed(rank, world):
    import torch
    import torch.distributed as dist
    iters = int(os.environ["BENCH_ITERS"])
    out = {}
    for size in SIZES:
        x = torch.ones(size // 4)
        for _ in range(2):  # warm up: connections, buffers
            dist.all_reduce(x)
        times = []
        for _ in range(iters):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(x)
            times.append(time.perf_counter() - start)
        out[size] = statistics.median(times)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=10)
    args = parser.parse_args()
    common.require_backend()
    env = {"BENCH_ITERS": str(args.iters)}
    results = {b: common.values(common.spawn(timed, 4, b, env, timeout_s=600))
               for b in ("gloo", "dsgd")}
    print(f"# all_reduce, float32 SUM, 4 processes, median of {args.iters} (the slowest rank's)")
    print(f"{'size':>8} {'gloo (ms)':>10} {'dsgd (ms)':>10} {'dsgd/gloo':>10}")
    for size in SIZES:
        gloo = max(r[size] for r in results["gloo"]) * 1e3
        dsgd = max(r[size] for r in results["dsgd"]) * 1e3
        print(f"{size >> 20:>6} MiB {gloo:>10.2f} {dsgd:>10.2f} {dsgd / gloo:>9.0%}")


if __name__ == "__main__":
    sys.exit(main())
