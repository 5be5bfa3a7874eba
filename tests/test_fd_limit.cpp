// The descriptor limit (sim/fd_limit.h): 256 simulated nodes train with the ring under
// `ulimit -n 1024`; a run that cannot fit is refused before any node starts, in one line
// with the numbers and what to do (exit code 2); running out during a run names the limit,
// never a peer. The shell's `ulimit -n N` sets the soft and the hard limit, so dsgd's own
// raise of the soft limit to the hard one gains nothing there: the run must really fit.
#include <sys/resource.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli_runner.h"
#include "core/errors.h"
#include "sim/cluster.h"
#include "sim/fd_limit.h"
#include "skip.h"

using namespace dsgd;
using dsgd::test::CliResult;
using dsgd::test::count_lines;
using dsgd::test::run_program;

namespace {

// `dsgd args` under a soft and hard open-file limit of `limit`.
CliResult run_dsgd_limited(int limit, const std::string& args) {
  return run_program(fmt::format("ulimit -n {}; exec {}", limit, DSGD_BINARY), args);
}

constexpr const char* kSmallRun =
    "--model mlp:8 --data synthetic:train=512,test=256,features=8,classes=4 --batch 256 -q";

// The soft limit lowered for this scope (the hard one stays), restored after.
class LoweredLimit {
 public:
  explicit LoweredLimit(rlim_t soft) {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    ::setrlimit(RLIMIT_NOFILE, &lowered);
  }
  ~LoweredLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  LoweredLimit(const LoweredLimit&) = delete;
  LoweredLimit& operator=(const LoweredLimit&) = delete;

 private:
  rlimit saved_{};
};

}  // namespace

TEST_CASE("256 simulated nodes train with the ring under ulimit -n 1024", "[fd][cli]") {
  const auto t0 = std::chrono::steady_clock::now();
  const CliResult r = run_dsgd_limited(
      1024, fmt::format("train --nodes 256 --allreduce ring --steps 3 {}", kSmallRun));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.err << "\n" << took << " s");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("256 simulated nodes"));
  CHECK(r.err.empty());
}

TEST_CASE("a run that cannot fit the descriptor limit is refused before it starts, in one line",
          "[fd][cli]") {
  // 256 nodes with halving-doubling talk over 1024 pairs: about 2300 descriptors.
  const CliResult hd = run_dsgd_limited(
      1024, fmt::format("train --nodes 256 --allreduce halving_doubling --steps 1 {}", kSmallRun));
  INFO(hd.err);
  CHECK(hd.exit_code == 2);
  CHECK(count_lines(hd.err) == 1);
  CHECK(hd.out.empty());
  CHECK_THAT(hd.err, Catch::StartsWith("dsgd: error: 256 simulated nodes talking over 1024 "
                                       "rank pairs need ") &&
                         Catch::Contains("may open 1024 (ulimit -n)") &&
                         Catch::Contains("ulimit -n ") && Catch::Contains("fewer --nodes") &&
                         Catch::Contains("--allreduce ring (256 pairs"));
  // The ring itself does not fit 512: no ring to suggest then.
  const CliResult ring = run_dsgd_limited(
      512, fmt::format("train --nodes 256 --allreduce ring --steps 1 {}", kSmallRun));
  INFO(ring.err);
  CHECK(ring.exit_code == 2);
  CHECK(count_lines(ring.err) == 1);
  CHECK_THAT(ring.err, Catch::Contains("256 rank pairs need") && Catch::Contains("may open 512") &&
                           !Catch::Contains("--allreduce ring ("));
}

TEST_CASE("running out of descriptors during a run names the limit, not a peer", "[fd][sim]") {
#ifdef DSGD_SANITIZE
  // UBSan checks a virtual call's object through a pipe it opens (IsAccessibleMemoryRange):
  // with every descriptor taken, each what() reads as "invalid vptr", a report about the
  // check, not about dsgd.
  DSGD_SKIP_UNLESS("a descriptor for UBSan's vptr check",
                   std::string_view(DSGD_SANITIZE).find("undefined") == std::string_view::npos,
                   "UBSan cannot check a virtual call while every file descriptor is taken");
#endif
  constexpr int kNodes = 16;
  // Room for the nodes themselves (the check before the run counts them, not knowing the
  // pairs), not for the 120 pairs of everyone sending to everyone.
  const LoweredLimit limit(sim::open_file_count() + sim::kFdReserve + kNodes + 24);
  std::string error;
  try {
    sim::run_cluster({.nodes = kNodes}, [](Communicator& comm) {
      std::vector<float> v(1, 1.0f), got(1);
      for (int peer = 0; peer < comm.size(); ++peer)
        if (peer != comm.rank()) comm.send(v, peer, 0);
      for (int peer = 0; peer < comm.size(); ++peer)
        if (peer != comm.rank()) comm.recv(got, peer, 0);
    });
  } catch (const UsageError& e) {
    error = e.what();
  } catch (const std::exception& e) {
    error = std::string("not a UsageError: ") + e.what();
  }
  INFO(error);
  CHECK_THAT(error, Catch::Contains("out of file descriptors") && Catch::Contains("ulimit -n") &&
                        Catch::Contains("--allreduce ring"));
  CHECK_THAT(error, !Catch::Contains("did not connect") && !Catch::Contains("lost rank"));
}
