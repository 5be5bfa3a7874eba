"""What the PyTorch backend's tests share: start W processes that join one group with a
given backend, run a function, and hand back each rank's result (or its error), with a
deadline on everything. Run by CTest with /usr/bin/python3 and PYTHONPATH at the build
folder; exit code 77 means skipped."""
import datetime
import os
import queue
import socket
import sys
import traceback

SKIP = 77


def require_backend():
    """Imports torch and dsgd_torch, or exits 77 (skipped) saying which is missing."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print("skipped: torch is not installed (apt-get install python3-torch)")
        sys.exit(SKIP)
    try:
        import dsgd_torch  # noqa: F401
    except ImportError as e:
        print(f"skipped: dsgd was built without its PyTorch backend ({e})")
        sys.exit(SKIP)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Results travel as torch.save bytes: a tensor put on a torch.multiprocessing queue as such
# is shared memory that dies with the process that made it.
def _to_bytes(value):
    import io

    import torch
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


def _from_bytes(data):
    import io

    import torch
    return torch.load(io.BytesIO(data))


def _worker(fn, rank, world, backend, port, env, timeout_s, results, last_barrier):
    import torch.distributed as dist

    import dsgd_torch  # noqa: F401

    os.environ.update(env)
    try:
        dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=world,
                                timeout=datetime.timedelta(seconds=timeout_s))
        out = fn(rank, world)
        # Rank 0's process hosts the store: it must not end while a rank still polls it
        # (init_process_group's store barrier).
        if last_barrier:
            dist.barrier()
        dist.destroy_process_group()
        results.put((rank, "ok", _to_bytes(out)))
    except Exception as e:  # noqa: BLE001  handed to the test, which decides
        results.put((rank, "error", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))


def spawn(fn, world, backend="dsgd", env=None, timeout_s=60, last_barrier=True):
    """Runs fn(rank, world) on `world` processes in one group, then a barrier (unless the
    group is expected to break); returns [(status, value)] by rank: ("ok", fn's result) or
    ("error", the exception's text). A process that ends without a result (killed,
    os._exit) gives ("exited", its exit code)."""
    import torch.multiprocessing as mp

    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_worker,
                         args=(fn, r, world, backend, port, env or {}, timeout_s, results,
                               last_barrier))
             for r in range(world)]
    for p in procs:
        p.start()
    out = {}
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=timeout_s + 30)
    while len(out) < world:
        left = (deadline - datetime.datetime.now()).total_seconds()
        if left <= 0:
            break
        try:
            rank, status, value = results.get(timeout=min(left, 0.5))
            out[rank] = (status, _from_bytes(value) if status == "ok" else value)
        except queue.Empty:
            if all(not p.is_alive() for p in procs) and results.empty():
                break
    for p in procs:
        p.join(timeout=10)
        if p.is_alive():
            p.kill()
    return [out.get(r, ("exited", procs[r].exitcode)) for r in range(world)]


def values(results):
    """The ranks' results, failing with every rank's error when any rank did not succeed."""
    bad = [(r, s, v) for r, (s, v) in enumerate(results) if s != "ok"]
    if bad:
        raise AssertionError("\n".join(f"rank {r}: {s}: {v}" for r, s, v in bad))
    return [v for _, v in results]
