// The peer bench's Gloo (Debian's libgloo): 4 processes on loopback TCP, joined through a
// FileStore rendezvous, each all-reducing float32 sums with gloo::allreduce and its ring
// algorithm (what PyTorch's gloo backend calls for CPU tensors), over the sweep of
// sweep.h: warm-up, then each iteration timed after a barrier; the median of each rank's
// times, the slowest rank's printed by rank 0 with the check. Run by bench/peers/run.sh:
//   bench_peer_gloo [--ranks 4]
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include "sweep.h"

namespace {

using Context = std::shared_ptr<gloo::Context>;

void barrier(const Context& ctx) {
  gloo::BarrierOptions opts(ctx);
  gloo::barrier(opts);
}

template <typename T>
void all_reduce(const Context& ctx, T* data, size_t count, gloo::AllreduceOptions::Func fn) {
  gloo::AllreduceOptions opts(ctx);
  opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
  opts.setOutput(data, count);
  opts.setReduceFunction(fn);
  gloo::allreduce(opts);
}

void sweep(const Context& ctx) {
  const int rank = ctx->rank, world = ctx->size;
  const auto sum =
      static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>);
  const auto max =
      static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::max<double>);
  for (size_t bytes : peers::sweep_bytes()) {
    std::vector<float> data(bytes / sizeof(float));
    std::vector<double> times;
    bool ok = true;
    for (int it = 0; it < peers::kWarmup + peers::iterations(bytes); ++it) {
      peers::fill(data, rank);  // in place: the input again each time
      barrier(ctx);
      const auto t0 = peers::Clock::now();
      all_reduce(ctx, data.data(), data.size(), sum);
      if (it >= peers::kWarmup) times.push_back(peers::seconds_since(t0));
      ok = ok && peers::summed(data, world);
    }
    double slowest[2] = {peers::median(times), ok ? 0.0 : 1.0};  // max: any rank wrong
    all_reduce(ctx, slowest, 2, max);
    if (rank == 0) peers::print_row("gloo", bytes, world, slowest[0], slowest[1] == 0);
  }
}

int run_rank(int rank, int world, const std::string& dir) {
  gloo::transport::tcp::attr attr("127.0.0.1");
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(dir);
  auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, world);
  ctx->connectFullMesh(store, device);
  sweep(ctx);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int world = 4;
  if (argc == 3 && std::strcmp(argv[1], "--ranks") == 0) world = std::atoi(argv[2]);
  if (world < 2 || world > 64) {
    std::fprintf(stderr, "bench_peer_gloo: --ranks %s: use 2 to 64 ranks\n", argv[2]);
    return 2;
  }
  char dir[] = "/tmp/bench_peer_gloo_XXXXXX";
  if (!mkdtemp(dir)) {
    std::perror("bench_peer_gloo: mkdtemp");
    return 1;
  }
  std::vector<pid_t> children;
  for (int r = 0; r < world; ++r) {
    const pid_t pid = fork();
    if (pid == 0) _exit(run_rank(r, world, dir));
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::system((std::string("rm -rf ") + dir).c_str());
  if (failed) std::fprintf(stderr, "bench_peer_gloo: %d of %d ranks failed\n", failed, world);
  return failed ? 1 : 0;
}
