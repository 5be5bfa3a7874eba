"""A process of a dsgd group that dies (os._exit, as a crash or a kill) makes the others'
next operation raise a Python error that names its rank, well within the group's timeout,
instead of hanging: the ranks that talk to it see its connections drop; a rank that hears
of it only through a rank that gave up is told why that rank left (its farewell frame)."""
import sys
import time

import common

TIMEOUT_S = 30


def one_dies(rank, world):
    import os

    import torch
    import torch.distributed as dist
    x = torch.ones(4)
    dist.all_reduce(x)  # everyone is there
    if rank == 2:
        os._exit(9)
    start = time.monotonic()
    try:
        for _ in range(100):
            dist.all_reduce(x)
            time.sleep(0.01)
    except RuntimeError as e:
        return {"error": str(e), "after_s": time.monotonic() - start}
    return {"error": None}


def main():
    common.require_backend()
    results = common.spawn(one_dies, 3, "dsgd", timeout_s=TIMEOUT_S, last_barrier=False)
    assert results[2] == ("exited", 9), results[2]
    survivors = common.values(results[:2])
    for rank, value in enumerate(survivors):
        assert value["error"], f"rank {rank} did not notice rank 2's death"
        assert "lost rank 2" in value["error"], f"rank {rank}'s error does not name rank 2: {value}"
        assert value["after_s"] < TIMEOUT_S / 2, value
        print(f"rank {rank} raised after {value['after_s']:.2f} s: {value['error']}")


if __name__ == "__main__":
    sys.exit(main())
