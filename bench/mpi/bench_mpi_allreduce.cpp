// What MpiCommunicator adds to MPI: for each size from 1 MiB to 64 MiB, times a bare
// MPI_Allreduce, dsgd's all_reduce with Algorithm::native through MpiCommunicator (the same
// MPI_Allreduce behind the Communicator, the dispatch and the watchdog) and dsgd's ring over
// MPI point-to-point, in the same run, and prints the medians and the overhead. A program
// that prints figures, never a test. Run: mpirun -np 2 bench_mpi_allreduce [--max-mib 64]
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/comm/collectives.h"
#include "core/errors.h"
#include "core/mpi/mpi_check.h"
#include "core/mpi/mpi_communicator.h"
#include "core/mpi/mpi_session.h"

namespace {

constexpr int kMethods = 3;  // bare MPI_Allreduce, dsgd native, dsgd ring
using Bodies = std::array<std::function<void()>, kMethods>;

struct Options {
  size_t max_mib = 64;
  int samples = 0;  // per method and size; 0: by size
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times `calls` single calls of each method, one method after another in a rotating order,
// each after a barrier: on a shared machine every method meets the same load, so their
// medians compare. Each sample is the slowest rank's time (a collective is done when the
// last rank is). Returns the median per method.
std::array<double, kMethods> paired_medians(int calls, const Bodies& bodies) {
  std::vector<double> mine(static_cast<size_t>(calls) * kMethods);
  for (int k = 0; k < calls; ++k)
    for (int j = 0; j < kMethods; ++j) {
      const int m = (j + k) % kMethods;
      DSGD_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      const double t0 = MPI_Wtime();
      bodies[m]();
      mine[k * kMethods + m] = MPI_Wtime() - t0;
    }
  std::vector<double> slowest(mine.size());
  DSGD_MPI_CHECK(MPI_Allreduce(mine.data(), slowest.data(), static_cast<int>(mine.size()),
                               MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  std::array<double, kMethods> out{};
  for (int m = 0; m < kMethods; ++m) {
    std::vector<double> t;
    for (int k = 0; k < calls; ++k)
      t.push_back(slowest[k * kMethods + m]);
    out[m] = median(t);
  }
  return out;
}

Bodies bodies_for(dsgd::mpi::MpiCommunicator& comm, std::vector<float>& data) {
  return {
      [&] {
        DSGD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()),
                                     MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
      },
      [&] {
        dsgd::all_reduce(comm, data, dsgd::ReduceOp::SUM, {.algorithm = dsgd::Algorithm::native});
      },
      [&] {
        dsgd::all_reduce(comm, data, dsgd::ReduceOp::SUM, {.algorithm = dsgd::Algorithm::ring});
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "bench_mpi_allreduce: bare MPI_Allreduce against dsgd's over MPI (run it under "
      "mpirun -np 2 or more)"};
  app.add_option("--max-mib", o.max_mib, "Largest size in MiB (from 1 MiB, doubling)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--samples", o.samples, "Calls per method and size (default: by size)")
      ->check(CLI::Range(1, 1000000));
  CLI11_PARSE(app, argc, argv);  // --help and bad flags end here, before MPI starts
  try {
    dsgd::mpi::MpiSession session({.report_sigterm = false});
    dsgd::mpi::MpiCommunicator comm;
    comm.set_timeout(std::chrono::seconds(120));
    const bool root = comm.rank() == 0;
    if (root)
      fmt::print(
          "# all_reduce SUM of float32, in place, on {} MPI ranks: median of single calls, "
          "the three methods in turn, slowest rank\n",
          comm.size());
    {
      // The fixed cost per call, where the transfer costs least: one float.
      std::vector<float> one(1, 0.f);
      const auto t = paired_medians(o.samples ? o.samples : 3000, bodies_for(comm, one));
      if (root)
        fmt::print("# one float: bare {:.2f} us, native {:.2f} us per call: dsgd adds {:+.2f} us\n",
                   t[0] * 1e6, t[1] * 1e6, (t[1] - t[0]) * 1e6);
    }
    if (root)
      fmt::print("# {:>6} {:>8} {:>12} {:>12} {:>9} {:>12} {:>9}\n", "MiB", "samples", "bare ms",
                 "native ms", "overhead", "ring ms", "vs bare");
    for (size_t mib = 1; mib <= o.max_mib; mib *= 2) {
      // Zeros stay zeros under repeated SUM: no overflow, no denormals, steady timings.
      std::vector<float> data(mib * 1024 * 1024 / sizeof(float), 0.f);
      const Bodies bodies = bodies_for(comm, data);
      for (const auto& body : bodies)
        body();  // warm-up: connections, buffers, page faults
      const int samples =
          o.samples ? o.samples : static_cast<int>(std::clamp<size_t>(512 / mib, 9, 201));
      const auto t = paired_medians(samples, bodies);
      if (root)
        fmt::print("  {:>6} {:>8} {:>12.3f} {:>12.3f} {:>+8.1f}% {:>12.3f} {:>8.2f}x\n", mib,
                   samples, t[0] * 1e3, t[1] * 1e3, 100 * (t[1] / t[0] - 1), t[2] * 1e3,
                   t[2] / t[0]);
    }
  } catch (const dsgd::Error& e) {
    fmt::print(stderr, "bench_mpi_allreduce: {}\n", e.what());
    return e.exit_code();
  }
  return 0;
}
