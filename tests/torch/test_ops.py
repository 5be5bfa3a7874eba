"""Every operation the backend offers, on every tensor type it moves, against gloo's result
on the same inputs: send, recv, isend, irecv (with tags), broadcast, all_reduce (SUM, AVG,
MAX, MIN, PRODUCT), reduce, all_gather, gather, scatter, reduce_scatter and barrier, on
float32, float64, float16, int32 and int64 tensors of 4 processes. Where gloo lacks the
operation (AVG, reduce_scatter) its result is built from gloo's SUM all_reduce. Also: an
operation the backend does not have raises an error naming it."""
import sys

import common

TYPES = ["float32", "float64", "float16", "int32", "int64"]
OPS = ["SUM", "AVG", "MAX", "MIN", "PRODUCT"]


def inputs(rank, dtype, n=5):
    import torch
    # Small integers, so that products and sums are exact in every type.
    base = torch.tensor([(rank + 1) * (i % 3 + 1) - 2 * i for i in range(n)], dtype=torch.float64)
    return base.to(getattr(torch, dtype))


def all_reduce(t, op):
    import torch.distributed as dist
    if op == "AVG" and dist.get_backend() == "gloo":  # gloo has no AVG
        dist.all_reduce(t, dist.ReduceOp.SUM)
        t.copy_(t / dist.get_world_size())
    else:
        dist.all_reduce(t, getattr(dist.ReduceOp, op))
    return t


def reduce_scatter(out, chunks):
    import torch
    import torch.distributed as dist
    if dist.get_backend() == "gloo":  # gloo has no reduce_scatter
        whole = torch.cat(chunks)
        dist.all_reduce(whole)
        out.copy_(whole.view(dist.get_world_size(), -1)[dist.get_rank()])
    else:
        dist.reduce_scatter(out, chunks)
    return out


def collectives(rank, world, dtype):
    import torch
    import torch.distributed as dist
    got = {}
    for op in OPS:
        if op == "AVG" and dtype in ("int32", "int64"):
            continue
        got[f"all_reduce {op}"] = all_reduce(inputs(rank, dtype), op)
    t = inputs(rank, dtype)
    dist.broadcast(t, src=1)
    got["broadcast"] = t
    t = inputs(rank, dtype)
    dist.reduce(t, dst=2)
    if rank == 2:
        got["reduce"] = t
    gathered = [torch.zeros(5, dtype=t.dtype) for _ in range(world)]
    dist.all_gather(gathered, inputs(rank, dtype))
    got["all_gather"] = torch.stack(gathered)
    gathered = [torch.zeros(5, dtype=t.dtype) for _ in range(world)] if rank == 0 else None
    dist.gather(inputs(rank, dtype), gathered, dst=0)
    if rank == 0:
        got["gather"] = torch.stack(gathered)
    out = torch.zeros(5, dtype=t.dtype)
    dist.scatter(out, [inputs(r + 10, dtype) for r in range(world)] if rank == 0 else None, src=0)
    got["scatter"] = out
    chunks = [inputs(rank + 3 * r, dtype) for r in range(world)]
    got["reduce_scatter"] = reduce_scatter(torch.zeros(5, dtype=t.dtype), chunks)
    return got


def point_to_point(rank, world, dtype):
    import torch
    import torch.distributed as dist
    got = {}
    # A ring of isend/irecv with tag 7: every rank posts both before it waits.
    nxt, prev = (rank + 1) % world, (rank - 1) % world
    incoming = torch.zeros(5, dtype=getattr(torch, dtype))
    reqs = [dist.isend(inputs(rank, dtype), nxt, tag=7), dist.irecv(incoming, prev, tag=7)]
    for r in reqs:
        r.wait()
    got["isend/irecv ring"] = incoming
    # Two messages 0 -> 1, received by tag in the other order than sent. Posted with isend:
    # gloo's blocking send waits for its receive (dsgd's only above the eager limit).
    if rank == 0:
        sends = [dist.isend(inputs(20, dtype), 1, tag=1), dist.isend(inputs(21, dtype), 1, tag=2)]
        for s in sends:
            s.wait()
    elif rank == 1:
        second, first = torch.zeros(5, dtype=getattr(torch, dtype)), torch.zeros(5, dtype=getattr(torch, dtype))
        dist.recv(second, 0, tag=2)
        dist.recv(first, 0, tag=1)
        got["send/recv by tag"] = torch.stack([first, second])
    dist.barrier()
    return got


def everything(rank, world):
    got = {}
    for dtype in TYPES:
        for name, value in {**collectives(rank, world, dtype),
                            **point_to_point(rank, world, dtype)}.items():
            got[f"{dtype} {name}"] = value
    return got


def unsupported(rank, world):
    import torch
    import torch.distributed as dist
    try:
        out = list(torch.zeros(world).chunk(world))
        dist.all_to_all(out, list(torch.ones(world).chunk(world)))
    except RuntimeError as e:
        return str(e)
    return "no error"


def main():
    common.require_backend()
    import torch
    dsgd = common.values(common.spawn(everything, 4, "dsgd"))
    gloo = common.values(common.spawn(everything, 4, "gloo"))
    checked = 0
    for rank in range(4):
        assert dsgd[rank].keys() == gloo[rank].keys(), (rank, dsgd[rank].keys() ^ gloo[rank].keys())
        for name, want in gloo[rank].items():
            have = dsgd[rank][name]
            assert have.dtype == want.dtype, (rank, name, have.dtype, want.dtype)
            rtol = 1e-3 if want.dtype == torch.float16 else 1e-6
            assert torch.allclose(have.double(), want.double(), rtol=rtol, atol=0), \
                f"rank {rank}, {name}: dsgd {have.tolist()}, gloo {want.tolist()}"
            checked += 1
    kinds = sorted({name.split(" ", 1)[1] for name in dsgd[0]})
    print(f"{checked} results of 4 ranks equal gloo's: {', '.join(kinds)}; "
          f"on {', '.join(TYPES)}")
    errors = common.values(common.spawn(unsupported, 2, "dsgd"))
    assert all("does not support alltoall" in e for e in errors), errors
    print(f"all_to_all raises: {errors[0]}")


if __name__ == "__main__":
    sys.exit(main())
