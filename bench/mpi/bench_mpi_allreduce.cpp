// What MpiCommunicator adds to MPI: for each size from 1 MiB to 64 MiB, times a bare
// MPI_Allreduce loop, dsgd's all_reduce with Algorithm::native through MpiCommunicator
// (the same MPI_Allreduce behind the Communicator, the dispatch and the watchdog), and
// dsgd's ring over MPI point-to-point, in the same run, interleaved, and prints the
// medians and the overhead. A program that prints figures, never a test.
// Run: mpirun -np 2 build/bench/mpi/bench_mpi_allreduce [--max-mib 64] [--reps 7]
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/comm/collectives.h"
#include "core/errors.h"
#include "core/mpi/mpi_check.h"
#include "core/mpi/mpi_communicator.h"
#include "core/mpi/mpi_session.h"

namespace {

struct Options {
  size_t max_mib = 64;
  int reps = 7;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call of `body`, run `iters` times after a barrier; the slowest rank's time,
// as a collective is done when the last rank is done.
double time_loop(int iters, const std::function<void()>& body) {
  DSGD_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i)
    body();
  double mine = (MPI_Wtime() - t0) / iters, slowest = 0;
  DSGD_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return slowest;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--max-mib")) o.max_mib = std::strtoul(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--reps")) o.reps = std::max(1, std::atoi(argv[i + 1]));
  }
  try {
    dsgd::mpi::MpiSession session({.report_sigterm = false});
    dsgd::mpi::MpiCommunicator comm;
    comm.set_timeout(std::chrono::seconds(120));
    const bool root = comm.rank() == 0;
    if (root)
      fmt::print(
          "# all_reduce SUM of float32 on {} MPI ranks, in place; median of {} interleaved "
          "repetitions, slowest rank\n",
          comm.size(), o.reps);
    {
      // The fixed cost per call, where the transfer costs least: one float.
      std::vector<float> one(1, 0.f);
      auto bare = [&] {
        DSGD_MPI_CHECK(
            MPI_Allreduce(MPI_IN_PLACE, one.data(), 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
      };
      auto native = [&] {
        dsgd::all_reduce(comm, one, dsgd::ReduceOp::SUM, {.algorithm = dsgd::Algorithm::native});
      };
      std::vector<double> t_bare, t_native;
      for (int r = 0; r < o.reps; ++r) {
        t_bare.push_back(time_loop(2000, bare));
        t_native.push_back(time_loop(2000, native));
      }
      const double b = median(t_bare), n = median(t_native);
      if (root)
        fmt::print("# one float: bare {:.2f} us, native {:.2f} us per call: dsgd adds {:+.2f} us\n",
                   b * 1e6, n * 1e6, (n - b) * 1e6);
    }
    if (root)
      fmt::print("# {:>8} {:>12} {:>12} {:>9} {:>12} {:>9}\n", "MiB", "bare ms", "native ms",
                 "overhead", "ring ms", "vs bare");
    for (size_t mib = 1; mib <= o.max_mib; mib *= 2) {
      const size_t count = mib * 1024 * 1024 / sizeof(float);
      // Zeros stay zeros under repeated SUM: no overflow, no denormals, steady timings.
      std::vector<float> data(count, 0.f);
      const int iters = static_cast<int>(std::clamp<size_t>(64 / mib, 2, 32));
      auto bare = [&] {
        DSGD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(count), MPI_FLOAT,
                                     MPI_SUM, MPI_COMM_WORLD));
      };
      auto native = [&] {
        dsgd::all_reduce(comm, data, dsgd::ReduceOp::SUM, {.algorithm = dsgd::Algorithm::native});
      };
      auto ring = [&] {
        dsgd::all_reduce(comm, data, dsgd::ReduceOp::SUM, {.algorithm = dsgd::Algorithm::ring});
      };
      bare(), native(), ring();  // warm-up: connections, buffers, page faults
      std::vector<double> t_bare, t_native, t_ring;
      for (int r = 0; r < o.reps; ++r) {
        t_bare.push_back(time_loop(iters, bare));
        t_native.push_back(time_loop(iters, native));
        t_ring.push_back(time_loop(iters, ring));
      }
      const double b = median(t_bare), n = median(t_native), g = median(t_ring);
      if (root)
        fmt::print("  {:>8} {:>12.3f} {:>12.3f} {:>+8.1f}% {:>12.3f} {:>8.2f}x\n", mib, b * 1e3,
                   n * 1e3, 100 * (n / b - 1), g * 1e3, g / b);
    }
  } catch (const dsgd::Error& e) {
    fmt::print(stderr, "bench_mpi_allreduce: {}\n", e.what());
    return e.exit_code();
  }
  return 0;
}
