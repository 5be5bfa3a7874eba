#!/usr/bin/python3
"""Writes lenet.npz: PyTorch's forward, loss and gradients of dsgd's cnn:lenet on fixed
batches, and where the model is small three SGD steps, for tests/test_cnn.cpp (which needs
no torch).

The network is written here as a PyTorch user would (nn.Conv2d, F.max_pool2d, nn.Linear),
its layers with parameters in a ModuleList `layers`, so its state_dict has the names dsgd's
.npz files use (layers.{i}.weight, layers.{i}.bias). Its
parameters come from torch's own initialisation (torch.manual_seed), the batch from numpy;
the loss is the mean cross-entropy, the optimiser torch.optim.SGD (lr 0.1, momentum 0.9).
Two image sides: 28 (Fashion-MNIST's) and 13, whose poolings round down (13 -> 6, 2 -> 1).
Entries are float32 arrays named "side{S}/{what}" (x, y, logits, loss, and params.NAME,
grads.NAME, after.NAME for each parameter). Run with Debian's /usr/bin/python3
(python3-torch) from this directory:
    /usr/bin/python3 make_lenet.py
"""
import json

import numpy as np
import torch
import torch.nn.functional as F

CASES = [(28, 8, 10, 0), (13, 3, 4, 3)]  # (image side, batch, classes, SGD steps)
LR, MOMENTUM = 0.1, 0.9


class LeNet(torch.nn.Module):
    def __init__(self, side, classes):
        super().__init__()
        flat = 16 * ((side // 2 - 4) // 2) ** 2
        self.layers = torch.nn.ModuleList([
            torch.nn.Conv2d(1, 6, 5, padding=2), torch.nn.Conv2d(6, 16, 5),
            torch.nn.Linear(flat, 120), torch.nn.Linear(120, classes)])

    def forward(self, x):
        conv1, conv2, fc1, fc2 = self.layers
        x = F.max_pool2d(F.relu(conv1(x)), 2)
        x = F.max_pool2d(F.relu(conv2(x)), 2)
        return fc2(F.relu(fc1(torch.flatten(x, 1))))


def arr(t):
    return t.detach().numpy().astype(np.float32)


def case(side, batch, classes, steps):
    torch.manual_seed(side)
    net = LeNet(side, classes)
    rng = np.random.RandomState(side)
    x = rng.uniform(0, 1, (batch, side * side)).astype(np.float32)
    y = rng.randint(0, classes, batch).astype(np.int64)
    out = {"x": x, "y": y.astype(np.float32)}
    out.update({f"params.{n}": arr(p) for n, p in net.named_parameters()})
    opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
    xt = torch.from_numpy(x).view(batch, 1, side, side)
    for step in range(max(steps, 1)):
        opt.zero_grad()
        logits = net(xt)
        loss = F.cross_entropy(logits, torch.from_numpy(y))
        loss.backward()
        if step == 0:
            out["logits"] = arr(logits)
            out["loss"] = np.array([float(loss)], np.float32)
            out.update({f"grads.{n}": arr(p.grad) for n, p in net.named_parameters()})
        opt.step()
    if steps:
        out.update({f"after.{n}": arr(p) for n, p in net.named_parameters()})
    return {f"side{side}/{k}": v for k, v in out.items()}


def main():
    entries = {}
    for c in CASES:
        entries.update(case(*c))
    np.savez_compressed("lenet.npz", **entries)
    print(f"lenet.npz: {len(entries)} arrays from torch {torch.__version__}")


if __name__ == "__main__":
    main()
