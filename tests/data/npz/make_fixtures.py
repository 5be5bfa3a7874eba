# Regenerates the NumPy-written fixtures read by tests/test_npz.cpp. The tests themselves
# never run Python; the fixtures are committed. Run: python3 make_fixtures.py (numpy >= 1.17).
# They end in .npz.fixture, not .npz, because the repository's .gitignore ignores *.npz.
import numpy as np


def savez(name, compressed=False, **arrays):
    # A file object stops np.savez from appending ".npz" to the name.
    with open(name + ".npz.fixture", "wb") as f:
        (np.savez_compressed if compressed else np.savez)(f, **arrays)


good = {
    "layers.0.weight": (np.arange(12, dtype=np.float32) / 8 - 0.5).reshape(3, 4),
    "layers.0.bias": np.array([1.5, -2.0, 0.25], dtype=np.float32),
    "scalar": np.array(2.5, dtype=np.float32),
    "as_f64": np.array([[1 / 3, -2 / 3], [1e-3, 4.0]], dtype=np.float64),
}
savez("numpy_savez", **good)
savez("numpy_savez_compressed", compressed=True, **good)
savez("bad_int64", **{"layers.0.weight": np.arange(6, dtype=np.int64).reshape(2, 3)})
savez("bad_fortran", **{"layers.0.weight": np.asfortranarray(np.ones((2, 3), dtype=np.float32))})
savez("bad_bigendian", **{"layers.0.weight": np.ones((2, 3), dtype=">f4")})
