"""The example programs of docs/pytorch.md, run as a user runs them: the tutorial's
point-to-point script prints rank 1's tensor [1, -1]; the DDP tutorial's mp.spawn example
runs its 4 workers to the end with equal parameters; with DSGD_TRACE each process writes
its trace, and `dsgd trace merge` joins them into one the GUI replays.
Usage: test_examples.py SOURCE_DIR DSGD."""
import json
import os
import re
import subprocess
import sys
import tempfile

import common


def run(script, env, cwd):
    done = subprocess.run([sys.executable, script], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout


ENV_PROGRAM = """
import time
import torch, torch.distributed as dist
import dsgd_torch
dist.init_process_group("dsgd")  # env://: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE
x = torch.tensor([float(dist.get_rank())])
dist.barrier()
start = time.perf_counter()
dist.all_reduce(x)
took = time.perf_counter() - start
print(f"rank {dist.get_rank()} of {dist.get_world_size()}: {x.item():g} {took:.3f}", flush=True)
dist.destroy_process_group()
"""


def env_init(cwd, **extra):
    """Three processes started as torchrun starts them: only the four variables (and the
    network's, `extra`). Returns the slowest rank's all_reduce time."""
    port = str(common.free_port())
    procs = [subprocess.Popen([sys.executable, "-c", ENV_PROGRAM], cwd=cwd, text=True,
                              stdout=subprocess.PIPE,
                              env=dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                                       RANK=str(r), WORLD_SIZE="3", **extra))
             for r in range(3)]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    assert [o.rsplit(" ", 1)[0] for o in outs] == [f"rank {r} of 3: 3" for r in range(3)], outs
    took = max(float(o.rsplit(" ", 1)[1]) for o in outs)
    print(f"env:// {extra or ''}: each rank's all_reduce gives 3, in {took * 1e3:.1f} ms")
    return took


def main():
    common.require_backend()
    source, dsgd = sys.argv[1], sys.argv[2]
    examples = os.path.join(source, "pytorch", "examples")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MASTER_PORT=str(common.free_port()))
        out = run(os.path.join(examples, "p2p.py"), env, tmp)
        assert re.search(r"Rank\s+1\s+has data\s+tensor\(1\.\)\s+tensor\(-1\.\)", out), out
        print("p2p.py: rank 1 has data tensor(1.) tensor(-1.)")

        env = dict(os.environ, MASTER_PORT=str(common.free_port()), DSGD_TRACE="ddp.json")
        out = run(os.path.join(examples, "ddp_spawn.py"), env, tmp)
        # Each print is two writes (the text, then its newline): lines of 4 processes mix.
        done = re.findall(r"rank (\d): 10 steps done, weight\[0\]\[:3\] = (\[[^\]]*\])", out)
        assert sorted(rank for rank, _ in done) == ["0", "1", "2", "3"], out
        weights = {w for _, w in done}
        assert len(weights) == 1, f"the workers' parameters differ: {done}"
        print(f"ddp_spawn.py: 4 workers, 10 steps, equal parameters {weights.pop()}")

        env_init(tmp)
        # The scenario by name, found beside the module: 10 ms links, a ring of 4 exchanges.
        took = env_init(tmp, DSGD_SCENARIO="flaky-wan", DSGD_ALLREDUCE="ring")
        assert took >= 0.04, f"the ring all_reduce over flaky-wan took {took:.3f} s"

        parts = [os.path.join(tmp, f"ddp.rank{r}.json") for r in range(4)]
        subprocess.run([dsgd, "trace", "merge", os.path.join(tmp, "ddp.json"), *parts],
                       check=True, timeout=60)
        trace = json.load(open(os.path.join(tmp, "ddp.json")))
        ranks = {e["pid"] for e in trace["traceEvents"] if e.get("ph") == "X"}
        names = {e["name"] for e in trace["traceEvents"] if e.get("ph") == "X"}
        assert ranks == {0, 1, 2, 3}, ranks
        assert any("all_reduce" in n for n in names), names
        print(f"DSGD_TRACE: 4 per-rank traces merged, {len(trace['traceEvents'])} events "
              f"(all_reduce and broadcast among them)")


if __name__ == "__main__":
    sys.exit(main())
