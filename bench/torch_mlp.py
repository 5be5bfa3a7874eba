#!/usr/bin/python3
"""PyTorch's training throughput for the same MLP, batch and thread count as bench_train.

Usage: torch_mlp.py SIZES BATCH STEPS [--device cpu|cuda]   (SIZES e.g. 784,128,10)
Prints samples_per_s=<float> and, on CUDA, device_name=<name>. Run with Debian's
/usr/bin/python3 (python3-torch). On CUDA the model and one fixed batch live on the GPU, the
matmuls use FP32 (no TF32, PyTorch's default for matmul), and the clock is read after
torch.cuda.synchronize(), so the figure is the GPU's time per step.
"""
import argparse
import time

import torch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sizes")
    ap.add_argument("batch", type=int)
    ap.add_argument("steps", type=int)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    if cuda:
        if not torch.cuda.is_available():
            raise SystemExit("torch has no CUDA here")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        print(f"device_name={torch.cuda.get_device_name(device)}")
    else:
        torch.set_num_threads(1)
    torch.manual_seed(0)
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.rand(args.batch, sizes[0], device=device)
    y = torch.randint(0, sizes[-1], (args.batch,), device=device)

    def step() -> None:
        opt.zero_grad(set_to_none=False)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(device)

    for _ in range(max(args.steps // 10, 5)):
        step()
    sync()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(args.steps):
            step()
        sync()
        best = min(best, time.perf_counter() - t0)
    print(f"samples_per_s={args.batch * args.steps / best:.1f}")


if __name__ == "__main__":
    main()
