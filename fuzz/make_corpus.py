#!/usr/bin/env python3
"""Writes the small seed corpora under fuzz/corpus/<target>/ (committed; rerun to refresh).
Layouts follow sim/frame.cpp, sim/handshake.h, core/data/*.cpp and core/io/npz.cpp."""
import io, os, shutil, struct, zipfile, gzip

HERE = os.path.dirname(os.path.abspath(__file__))

def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

assert crc32c(b"123456789") == 0xE3069283

def header(kind, source, tag, seq, length, crc):
    return struct.pack("<IB3xiiQqqII", 0x44534744, kind, source, tag, seq, 1000, 2000, length, crc)

def hello_payload(token=b"sesame", version=2, world=4, rank=1):
    padded = token + b"\0" * (-len(token) % 4)
    return struct.pack("<IHHiiqQQH6x", 0x48475344, version, len(token), world, rank, 1, 2, 3,
                       29500) + padded

def npy(shape, values, descr="<f4"):
    head = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d," % d for d in shape))
    head += " " * (-(10 + len(head) + 1) % 64) + "\n"
    fmt = {"<f4": "<%df", "<f8": "<%dd"}[descr]
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode() + \
        struct.pack(fmt % len(values), *values)

def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def main():
    shutil.rmtree(os.path.join(HERE, "corpus"), ignore_errors=True)
    payload = struct.pack("<4f", 1, -1, 0.5, 2)
    write("fuzz_frame", "data", header(2, 1, 7, 3, len(payload), crc32c(payload)) + payload)
    write("fuzz_frame", "empty", header(2, 0, 0, 0, 0, 0))
    hp = hello_payload()
    write("fuzz_frame", "hello", header(1, 1, 0, 0, len(hp), crc32c(hp)) + hp)
    write("fuzz_handshake", "hello", hp)
    write("fuzz_handshake", "long-token", hello_payload(b"0123456789abcdef" * 2))
    write("fuzz_handshake", "version1", hello_payload(version=1))

    csv = b"f1,f2,label\n0.5,1,0\n-2,3e-2,1\n# comment\n\n" + b"".join(
        b"%d,%d,%d\n" % (i, -i, i % 3) for i in range(10))
    write("fuzz_csv", "classification", b"\0" + csv)
    write("fuzz_csv", "regression", b"\1" + b"".join(b"%d.5,%d,%g\n" % (i, i, i / 4) for i in range(12)))
    write("fuzz_csv", "ragged", b"\0" + b"1,2,3\n4,5\n")

    def idx_pair(n, h, w):
        images = struct.pack(">IIII", 0x803, n, h, w) + bytes((i * 37) % 256 for i in range(n * h * w))
        labels = struct.pack(">II", 0x801, n) + bytes(i % 10 for i in range(n))
        return images, labels
    images, labels = idx_pair(10, 2, 2)
    write("fuzz_idx", "plain", struct.pack("<H", len(images)) + images + labels)
    gz = gzip.compress(images, mtime=0)
    write("fuzz_idx", "gzip-images", struct.pack("<H", len(gz)) + gz + labels)
    write("fuzz_idx", "bad-magic", struct.pack("<H", 8) + struct.pack(">II", 0x809, 1) + labels)

    write("fuzz_npz", "npy", npy((2, 3), [1, 2, 3, 4, 5, 6]))
    for name, compression in (("stored", zipfile.ZIP_STORED), ("deflated", zipfile.ZIP_DEFLATED)):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression) as z:
            for entry, data in (("layers.0.weight.npy", npy((2, 2), [1, 2, 3, 4])),
                                ("layers.0.bias.npy", npy((2,), [0.5, -0.5], "<f8")),
                                ("checkpoint.json", b'{"step": 3}')):
                info = zipfile.ZipInfo(entry, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = compression
                z.writestr(info, data)
        write("fuzz_npz", name, buf.getvalue())

    scenarios = os.path.join(HERE, "..", "assets", "scenarios")
    for name in ("classroom-lan.toml", "flaky-wan.toml", "partition.toml", "straggler.toml"):
        with open(os.path.join(scenarios, name), "rb") as f:
            write("fuzz_scenario", name, f.read())
    write("fuzz_scenario", "links.toml", b'nodes = 4\n[network]\nlatency = "1ms"\n'
          b'[[network.link]]\nfrom = 0\nto = 1\nlatency = "30ms"\n'
          b'[[network.node]]\nrank = 3\nbandwidth = "10Mbit"\n')
    # Floats where integers go: 4.0 is taken, 2e116 must be refused (not cast).
    write("fuzz_scenario", "floats.toml", b'nodes = 4.0\n[network]\nseed = 2e116\n')

    send = {"name": "send", "cat": "comm", "ph": "X", "pid": 0, "tid": 2, "ts": 1.0, "dur": 2.0,
            "args": {"dir": "send", "src": 0, "dst": 1, "tag": 0, "k": 0, "bytes": 8}}
    recv = {"name": "recv", "cat": "comm", "ph": "X", "pid": 1, "tid": 2, "ts": 2.0, "dur": 3.0,
            "args": {"dir": "recv", "src": 0, "dst": 1, "tag": 0, "k": 0, "bytes": 8}}
    import json
    flow = [{"name": "msg", "cat": "flow", "ph": "s", "id": 1, "pid": 0, "tid": 2, "ts": 1.0},
            {"name": "msg", "cat": "flow", "ph": "f", "bp": "e", "id": 1, "pid": 1, "tid": 2, "ts": 2.0}]
    meta = [{"name": "process_name", "ph": "M", "pid": r, "args": {"name": "rank %d" % r}} for r in (0, 1)]
    doc = {"traceEvents": meta + [send, recv] + flow, "displayTimeUnit": "ns",
           "otherData": {"time_base": "wall"}}
    write("fuzz_trace", "pair.json", json.dumps(doc).encode())
    write("fuzz_trace", "empty.json", b'{"traceEvents": []}')
    write("fuzz_trace", "array.json", json.dumps([send, recv]).encode())
    # A number past double's range: nlohmann::json throws out_of_range (406), not parse_error.
    write("fuzz_trace", "overflow.json", b'[{"name": "send", "ph": "X", "pid": 0, "tid": 2, '
          b'"ts": 1e999, "dur": 2.0}]')
    # Fields of unexpected types, and an unchecked kind ("C") without a pid.
    write("fuzz_trace", "odd_fields.json", b'[{"ph": "M", "pid": 0, "name": 5}, '
          b'{"ph": "X", "pid": 0, "tid": 1, "ts": 1, "dur": 1, "name": 7}, '
          b'{"ph": "C", "tid": 2, "ts": 10}]')

if __name__ == "__main__":
    main()
