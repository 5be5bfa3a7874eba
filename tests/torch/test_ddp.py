"""DistributedDataParallel on the dsgd backend: a small MLP trained by 4 processes on fixed
data ends with the parameters gloo gives (within 1e-6 relative), and with DSGD_LATENCY=5ms
each step takes longer by what dsgd's alpha-beta model predicts for its all_reduce (within
10 %; the fastest of 20 steps, so that other work on the machine does not count): `dsgd
bench collective --json` gives the prediction. The timed runs use halving-doubling, whose
ranks move in step: with recursive doubling (auto's choice for this size) eager sends let
the ranks drift out of phase, so part of a step's compute hides behind the latency, which a
collective's prediction does not model. Usage: test_ddp.py DSGD."""
import json
import subprocess
import sys
import tempfile
import time

import common

STEPS = 20


def train(rank, world):
    import torch
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.manual_seed(0)  # the same start everywhere (DDP broadcasts rank 0's anyway)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
    ddp = DDP(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(100 + rank)  # each rank its own shard
    x, y = torch.randn(16, 10, generator=g), torch.randn(16, 5, generator=g)
    steps = []
    for _ in range(STEPS):
        start = time.perf_counter()
        optimizer.zero_grad()
        nn.functional.mse_loss(ddp(x), y).backward()
        optimizer.step()
        steps.append(time.perf_counter() - start)
    params = [p.detach().clone() for p in model.parameters()]
    # The fastest step: what the step costs when nothing else on the machine gets in the way.
    return {"params": params, "step_s": min(steps), "bytes": sum(p.numel() * 4 for p in params)}


def predicted_all_reduce_s(dsgd, world, nbytes, latency, algorithm):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([dsgd, "bench", "collective", "--nodes", str(world), "--latency", latency,
                        "--algorithm", algorithm,
                        "--min-bytes", str(nbytes), "--max-bytes", str(nbytes), "--iters", "1",
                        "--warmup", "0", "--no-baseline", "--json", out.name],
                       check=True, stdout=subprocess.DEVNULL, timeout=120)
        return json.load(open(out.name))["rows"][0]["predicted_us"] / 1e6


def main():
    common.require_backend()
    import torch
    dsgd_cli = sys.argv[1]
    timed = "halving_doubling"
    runs = {name: common.values(common.spawn(train, 4, backend, env))
            for name, backend, env in [
                ("dsgd", "dsgd", {}), ("gloo", "gloo", {}),
                ("dsgd timed", "dsgd", {"DSGD_ALLREDUCE": timed}),
                ("dsgd 5ms", "dsgd", {"DSGD_ALLREDUCE": timed, "DSGD_LATENCY": "5ms"})]}
    worst = 0.0
    for mine, theirs in zip(runs["dsgd"][0]["params"], runs["gloo"][0]["params"]):
        worst = max(worst, ((mine - theirs).abs().max() / theirs.abs().max()).item())
    assert worst <= 1e-6, f"parameters differ from gloo's by {worst:.3g} relative"
    print(f"DDP, 4 ranks, {STEPS} steps: parameters within {worst:.2g} relative of gloo's")
    for rank in range(1, 4):
        for a, b in zip(runs["dsgd"][0]["params"], runs["dsgd"][rank]["params"]):
            assert torch.equal(a, b), f"rank {rank}'s parameters differ from rank 0's"
    grew = runs["dsgd 5ms"][0]["step_s"] - runs["dsgd timed"][0]["step_s"]
    want = predicted_all_reduce_s(dsgd_cli, 4, runs["dsgd"][0]["bytes"], "5ms", timed)
    error = (grew - want) / want
    print(f"DSGD_LATENCY=5ms: the fastest step takes {grew * 1e3:.2f} ms longer; the alpha-beta model "
          f"predicts {want * 1e3:.2f} ms for its {timed} all_reduce of {runs['dsgd'][0]['bytes']} "
          f"bytes ({error:+.1%})")
    assert abs(error) <= 0.10, f"step time grew by {grew:.4f} s, predicted {want:.4f} s"


if __name__ == "__main__":
    sys.exit(main())
