#!/usr/bin/python3
"""Writes ddp_buckets.json: how PyTorch's DistributedDataParallel buckets the gradients of
nn.Linear stacks, for tests/test_buckets.cpp (which needs no torch).

DDP's Reducer rebuilds its buckets after the first iteration from the order the gradients
became ready (the reverse of model.parameters() for these models), with limits
[_DEFAULT_FIRST_BUCKET_BYTES, bucket_cap_mb]: this script asks torch for exactly that
assignment. Run with Debian's /usr/bin/python3 (python3-torch) from this directory:
    /usr/bin/python3 make_ddp_buckets.py > ddp_buckets.json
"""
import json

import torch
import torch.distributed as dist

CASES = [  # (layer sizes, bucket_cap_mb, first bucket MB)
    ([784, 64, 10], 25, 1),
    ([784, 1024, 1024, 10], 25, 1),
    ([784, 1024, 1024, 10], 1, 1),
    ([784, 512, 512, 512, 10], 0.5, 1),
    ([32, 64, 32, 10], 0.001, 0.001),
    ([32, 64, 32, 10], 0.01, 0.005),
    ([100, 300, 200, 100, 10], 0.1, 0.05),
]


def params(sizes):
    out = []
    for i in range(len(sizes) - 1):
        out.append(torch.empty(sizes[i + 1], sizes[i]))  # layers.{i}.weight
        out.append(torch.empty(sizes[i + 1]))  # layers.{i}.bias
    return out


def main() -> None:
    cases = []
    for sizes, cap_mb, first_mb in CASES:
        ps = params(sizes)
        ready = list(reversed(range(len(ps))))
        limits = [int(first_mb * 1024 * 1024), int(cap_mb * 1024 * 1024)]
        buckets, _ = dist._compute_bucket_assignment_by_size(
            [ps[i] for i in ready], limits, [False] * len(ps), ready)
        cases.append({"sizes": sizes, "bucket_cap_mb": cap_mb, "first_bucket_mb": first_mb,
                      "buckets": [list(b) for b in buckets]})
    print(json.dumps({"torch": torch.__version__, "cases": cases}, indent=1))


if __name__ == "__main__":
    main()
