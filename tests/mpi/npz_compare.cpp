// npz_compare A.npz B.npz [--rel R]: exits 0 when both archives hold the same tensor names
// and shapes and every value of A is within R * |b| of B's (R = 1e-6; equal values always
// pass, so two zeros do); 1 otherwise, printing the worst element. A test tool, used by
// the MPI equivalence test (tests/mpi/equivalence.sh) to compare saved parameters.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/npz.h"

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 5 && std::string(argv[3]) == "--rel")) {
    fmt::print(stderr, "usage: npz_compare A.npz B.npz [--rel 1e-6]\n");
    return 2;
  }
  const double rel = argc == 5 ? std::atof(argv[4]) : 1e-6;
  try {
    const auto a = dsgd::read_npz(argv[1]);
    const auto b = dsgd::read_npz(argv[2]);
    if (a.size() != b.size()) {
      fmt::print(stderr, "FAIL: {} has {} tensors, {} has {}\n", argv[1], a.size(), argv[2],
                 b.size());
      return 1;
    }
    double worst = 0;
    std::string worst_at = "(none)";
    size_t values = 0, bad = 0;
    for (size_t t = 0; t < a.size(); ++t) {
      if (a[t].name != b[t].name || a[t].tensor.shape() != b[t].tensor.shape()) {
        fmt::print(stderr, "FAIL: entry {} is {} in {} but {} in {} (or shapes differ)\n", t,
                   a[t].name, argv[1], b[t].name, argv[2]);
        return 1;
      }
      const float* x = a[t].tensor.data();
      const float* y = b[t].tensor.data();
      for (int64_t i = 0; i < a[t].tensor.numel(); ++i, ++values) {
        const double diff = std::fabs(double(x[i]) - double(y[i]));
        const double scaled = diff == 0 ? 0 : diff / std::max(std::fabs(double(y[i])), 1e-30);
        if (diff > rel * std::fabs(double(y[i]))) ++bad;
        if (scaled > worst) {
          worst = scaled;
          worst_at = fmt::format("{}[{}]: {} vs {}", a[t].name, i, x[i], y[i]);
        }
      }
    }
    fmt::print("{} values, {} beyond {:g} relative; worst relative difference {:.3g} at {}\n",
               values, bad, rel, worst, worst_at);
    return bad == 0 ? 0 : 1;
  } catch (const dsgd::Error& e) {
    fmt::print(stderr, "npz_compare: {}\n", e.what());
    return 2;
  }
}
