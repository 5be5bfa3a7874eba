"""The peer bench's PyTorch: torch.distributed's gloo backend, 4 processes on loopback TCP,
all_reduce of float32 sums over the sweep of bench/peers/sweep.h (the same sizes, warm-up,
iterations, inputs and check): each iteration timed after a barrier, the median of each
rank's times, the slowest rank's printed by rank 0 as one JSON line per size.

    /usr/bin/python3 bench/peers/torch_allreduce.py [--ranks 4]
"""
import argparse
import json
import os
import socket
import statistics
import sys
import time

WARMUP = 3


def sweep_bytes():
    sizes, b = [], 4 << 10
    while b <= 64 << 20:
        sizes.append(b)
        b *= 4
    return sizes


def iterations(nbytes):
    return max(5, min(200, (256 << 20) // nbytes))


def run_rank(rank, world, port):
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    for nbytes in sweep_bytes():
        n = nbytes // 4
        index = torch.arange(n, dtype=torch.int64) % 7
        start = (rank + 1 + index).to(torch.float32)
        expected = (world * (world + 1) // 2 + world * index).to(torch.float32)
        x = torch.empty(n, dtype=torch.float32)
        times, ok = [], True
        for it in range(WARMUP + iterations(nbytes)):
            x.copy_(start)
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(x)
            if it >= WARMUP:
                times.append(time.perf_counter() - t0)
            ok = ok and bool(torch.equal(x, expected))
        summary = torch.tensor([statistics.median(times), 0.0 if ok else 1.0],
                               dtype=torch.float64)
        dist.all_reduce(summary, op=dist.ReduceOp.MAX)
        if rank == 0:
            seconds = summary[0].item()
            busbw = 2.0 * (world - 1) / world * nbytes / seconds / 1e9
            print(json.dumps({"peer": "torch_gloo", "bytes": nbytes, "ranks": world,
                              "time_us": round(seconds * 1e6, 3),
                              "busbw_GBps": round(busbw, 4), "ok": summary[1].item() == 0}),
                  flush=True)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=4)
    ranks = parser.parse_args().ranks
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pids = []
    for rank in range(ranks):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                run_rank(rank, ranks, port)
            except Exception as e:  # noqa: BLE001 - report and fail the rank
                print(f"torch_allreduce.py: rank {rank}: {e}", file=sys.stderr)
                code = 1
            os._exit(code)
        pids.append(pid)
    failed = sum(os.waitpid(pid, 0)[1] != 0 for pid in pids)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
