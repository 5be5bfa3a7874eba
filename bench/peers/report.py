"""The peer bench's report (bench/peers/run.sh writes its input): for each size, each
peer's time and busbw as the median over the rounds with their range, dsgd's algorithm,
dsgd's busbw over the best peer's, and how many rounds met each goal:
  4 KiB            dsgd's time at or under Open MPI's (same round)
  1 MiB, 64 MiB    dsgd's busbw at least 1.1 x the best peer's (same round)
  ring 16, 64 MiB  dsgd's busbw at least 85 % of its paired loopback flows

    /usr/bin/python3 bench/peers/report.py build/default/peers.jsonl
"""
import collections
import json
import statistics
import sys

PEERS = ["dsgd", "openmpi", "gloo", "torch_gloo"]


def size_text(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def spread(values, fmt):
    if not values:
        return "-"
    lo, mid, hi = min(values), statistics.median(values), max(values)
    return fmt.format(mid) + (f" ({fmt.format(lo)}-{fmt.format(hi)})" if len(values) > 1 else "")


def table(title, key, fmt, last, last_of, cell, peers, sizes):
    """One table: a row per size, a column per peer (median and range of `key`), and `last`."""
    print(title)
    print("size      " + "".join(f"{p:>26}" for p in peers) + "   " + last)
    for b in sizes:
        line = f"{size_text(b):<10}"
        for p in peers:
            line += f"{spread([r[key] for r in cell[(p, b)]], fmt):>26}"
        print(line + "   " + last_of(b))


def goals(rows, sizes, rounds):
    """Lines saying in how many rounds each goal held."""
    by = {(r["peer"], r["bytes"], r["round"]): r for r in rows}
    lines = []

    def count(test):
        met = [test(k) for k in range(rounds)]
        return sum(bool(m) for m in met if m is not None), sum(m is not None for m in met)

    def best_other(b, k):
        others = [by[(p, b, k)]["busbw_GBps"] for p in PEERS[1:] if (p, b, k) in by]
        return max(others) if others else None

    if 4 << 10 in sizes:
        def small(k):
            d, m = by.get(("dsgd", 4 << 10, k)), by.get(("openmpi", 4 << 10, k))
            return None if not d or not m else d["time_us"] <= m["time_us"]
        met, n = count(small)
        lines.append(f"4 KiB: dsgd at or under Open MPI's time in {met} of {n} rounds")
    for b in (1 << 20, 64 << 20):
        def big(k, b=b):
            d, best = by.get(("dsgd", b, k)), best_other(b, k)
            return None if not d or best is None else d["busbw_GBps"] >= 1.1 * best
        met, n = count(big)
        lines.append(f"{size_text(b)}: dsgd's busbw >= 1.1 x the best peer's in {met} of {n} rounds")
    for b in (16 << 20, 64 << 20):
        def ring(k, b=b):
            d = by.get(("dsgd", b, k))
            if not d or d.get("algorithm") != "ring" or d.get("vs_loopback_pct") is None:
                return None
            return d["vs_loopback_pct"] >= 85
        met, n = count(ring)
        lines.append(f"ring {size_text(b)}: >= 85 % of the paired loopback flows in {met} of {n} "
                     "rounds")
    return lines


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    bad = [r for r in rows if not r["ok"]]
    for r in bad:
        print(f"WRONG RESULT: {r['peer']} at {size_text(r['bytes'])} in round {r['round'] + 1}")
    rounds = 1 + max(r["round"] for r in rows)
    sizes = sorted({r["bytes"] for r in rows})
    peers = [p for p in PEERS if any(r["peer"] == p for r in rows)]
    cell = collections.defaultdict(list)
    for r in rows:
        cell[(r["peer"], r["bytes"])].append(r)
    print(f"all_reduce, float32 sum, 4 ranks on loopback TCP; median (range) over {rounds} rounds")
    algorithm = lambda b: ",".join(sorted({r.get("algorithm", "") for r in cell[("dsgd", b)]}))
    table("time (us)", "time_us", "{:.0f}", "dsgd's algorithm", algorithm, cell, peers, sizes)

    def ratio(b):
        ratios = []
        for k in range(rounds):
            d = [r for r in cell[("dsgd", b)] if r["round"] == k]
            o = [r["busbw_GBps"] for p in peers[1:] for r in cell[(p, b)] if r["round"] == k]
            if d and o:
                ratios.append(d[0]["busbw_GBps"] / max(o))
        return spread(ratios, "{:.2f}")
    table("busbw (GB/s), and dsgd's over the best peer's", "busbw_GBps", "{:.3f}", "dsgd / best",
          ratio, cell, peers, sizes)
    for line in goals(rows, sizes, rounds):
        print(line)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
