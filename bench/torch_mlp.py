#!/usr/bin/python3
"""PyTorch's training throughput for the same MLP, batch and thread count as bench_train.

Prints one line: samples_per_s=<float>. Run with Debian's /usr/bin/python3 (python3-torch).
"""
import sys
import time

import torch


def main() -> None:
    sizes = [int(s) for s in sys.argv[1].split(",")]  # e.g. 784,128,10
    batch = int(sys.argv[2])
    steps = int(sys.argv[3])
    torch.set_num_threads(1)
    torch.manual_seed(0)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.rand(batch, sizes[0])
    y = torch.randint(0, sizes[-1], (batch,))

    def step() -> None:
        opt.zero_grad(set_to_none=False)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(max(steps // 10, 5)):
        step()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        best = min(best, time.perf_counter() - t0)
    print(f"samples_per_s={batch * steps / best:.1f}")


if __name__ == "__main__":
    main()
