// NCCL's set-up without a GPU: bytes in float messages (how the NCCL id and GPU UUIDs
// travel), the gather of every rank's answer on simulated nodes, the decision each rank
// reaches from it, and --allreduce nccl refused with one line where it cannot run. The NCCL
// all_reduce itself needs GPUs: dsgd_cuda_tests and bench/cuda_check.sh run it.
#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>

#include "cli_runner.h"
#include "skip.h"
#include "core/comm/byte_floats.h"
#include "core/errors.h"
#include "sim/cluster.h"
#ifdef DSGD_HAVE_CUDA
#include "core/cuda/nccl_choice.h"
#endif
#ifdef DSGD_HAVE_NCCL
#include "core/cuda/cuda_check.h"
#include "core/cuda/cuda_device.h"
#include "core/cuda/nccl.h"
#endif

using namespace dsgd;

#ifdef DSGD_HAVE_CUDA
using dsgd::cuda::decide_nccl;
using dsgd::cuda::gather_nccl_peers;
using dsgd::cuda::nccl_request;
using dsgd::cuda::NcclPeer;
using dsgd::cuda::NcclRequest;

namespace {

NcclPeer peer(uint8_t gpu, bool loaded = true) {
  NcclPeer p{.loaded = loaded};
  p.gpu_uuid.fill(0xA0);
  p.gpu_uuid[15] = gpu;
  return p;
}

}  // namespace

TEST_CASE("allreduce auto picks NCCL by itself only on MPI ranks", "[nccl]") {
  CHECK(nccl_request("nccl", false) == NcclRequest::required);
  CHECK(nccl_request("nccl", true) == NcclRequest::required);
  CHECK(nccl_request("auto", true) == NcclRequest::automatic);
  CHECK(nccl_request("auto", false) == NcclRequest::off);  // simulated nodes: the network
  CHECK(nccl_request("ring", true) == NcclRequest::off);
  CHECK(nccl_request("native", true) == NcclRequest::off);
}

TEST_CASE("every rank gathers every rank's GPU and NCCL answer in rank order", "[nccl]") {
  const int nodes = 4;
  std::mutex mu;
  std::vector<std::vector<NcclPeer>> seen(nodes);
  std::vector<int> decided(nodes, -1);
  sim::run_cluster({.nodes = nodes}, [&](Communicator& comm) {
    const NcclPeer mine = peer(static_cast<uint8_t>(10 + comm.rank()), comm.rank() != 2);
    std::vector<NcclPeer> peers = gather_nccl_peers(comm, mine);
    const bool use = decide_nccl(NcclRequest::automatic, peers, comm.rank(), "");
    std::lock_guard lock(mu);
    seen[comm.rank()] = std::move(peers);
    decided[comm.rank()] = use;
  });
  for (int r = 0; r < nodes; ++r) {
    INFO("rank " << r);
    REQUIRE(seen[r].size() == nodes);
    for (int q = 0; q < nodes; ++q) {
      CHECK(seen[r][q].gpu_uuid == peer(static_cast<uint8_t>(10 + q)).gpu_uuid);
      CHECK(seen[r][q].loaded == (q != 2));
    }
    CHECK(decided[r] == 0);  // rank 2 has no NCCL: automatic falls back everywhere
  }
}

TEST_CASE("the NCCL decision: automatic falls back, required says why not", "[nccl]") {
  const std::vector<NcclPeer> own{peer(0), peer(1), peer(2)};
  const std::vector<NcclPeer> shared{peer(0), peer(1), peer(1)};
  const std::vector<NcclPeer> missing{peer(0), peer(1, false), peer(2)};
  CHECK(decide_nccl(NcclRequest::automatic, own, 0, ""));
  CHECK_FALSE(decide_nccl(NcclRequest::off, own, 0, ""));
  CHECK_FALSE(decide_nccl(NcclRequest::automatic, shared, 0, ""));
  CHECK_FALSE(decide_nccl(NcclRequest::automatic, missing, 0, ""));
  CHECK_FALSE(decide_nccl(NcclRequest::automatic, {peer(0)}, 0, ""));  // one rank: no sum
  CHECK(decide_nccl(NcclRequest::required, {peer(0)}, 0, ""));         // asked: a 1-rank NCCL
  CHECK(decide_nccl(NcclRequest::required, own, 1, ""));
  CHECK_THROWS_WITH(
      decide_nccl(NcclRequest::required, shared, 0, ""),
      Catch::Contains("ranks 1 and 2 are on the same GPU") && Catch::Contains("--allreduce auto"));
  // The rank that could not load libnccl says why; the others name it.
  CHECK_THROWS_WITH(decide_nccl(NcclRequest::required, missing, 1, "dlopen(libnccl.so.2) failed"),
                    Catch::Contains("rank 1 cannot load NCCL (dlopen(libnccl.so.2) failed)"));
  CHECK_THROWS_WITH(decide_nccl(NcclRequest::required, missing, 0, ""),
                    Catch::Contains("rank 1 cannot load NCCL;"));
  CHECK_THROWS_AS(decide_nccl(NcclRequest::required, missing, 0, ""), UsageError);
}

#endif  // DSGD_HAVE_CUDA: the decision lives in core/cuda

TEST_CASE("bytes survive the trip through floats, every value and odd lengths", "[nccl]") {
  std::vector<uint8_t> bytes(257);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(255 - i % 256);
  const std::vector<float> floats = bytes_to_floats(bytes);
  CHECK(floats.size() == 129);
  for (float f : floats)
    CHECK((f >= 0 && f <= 65535 && std::floor(f) == f));
  std::vector<uint8_t> back(bytes.size(), 0);
  floats_to_bytes(floats, back);
  CHECK(back == bytes);
}

TEST_CASE("a float message that bytes_to_floats did not make is refused", "[nccl]") {
  std::vector<uint8_t> out(4);
  const float bad[] = {65536.0f, -1.0f, 0.5f, std::numeric_limits<float>::quiet_NaN()};
  for (float f : bad) {
    INFO("value " << f);
    const std::vector<float> message{1.0f, f};
    CHECK_THROWS_AS(floats_to_bytes(message, out), CommError);
  }
  CHECK_THROWS_AS(floats_to_bytes(std::vector<float>(3, 0.0f), out), CommError);  // 3 != 2
  std::vector<uint8_t> odd(3);
  CHECK_THROWS_AS(floats_to_bytes(std::vector<float>{1.0f, 256.0f}, odd), CommError);
  floats_to_bytes(std::vector<float>{258.0f, 255.0f}, odd);
  CHECK(odd == std::vector<uint8_t>{2, 1, 255});
}

TEST_CASE("dsgd train --allreduce nccl on the CPU is one line and exit 2", "[nccl][cli]") {
  const test::CliResult r = test::run_dsgd("train --allreduce nccl --steps 1 -q");
  CHECK(r.exit_code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::Contains("--allreduce nccl") && Catch::Contains("--device cuda"));
}

TEST_CASE("libnccl opens at run time and makes a communicator id without a GPU", "[nccl]") {
#ifndef DSGD_HAVE_NCCL
  DSGD_SKIP_UNLESS("nccl", false, "dsgd was built without NCCL (no nccl.h at configure time)");
#else
  std::string why_not;
  const std::string version = cuda::nccl_version(&why_not);
  // nccl.h was found at configure time but the library may not be installed here: the
  // reason must say what failed and what to do.
  if (version.empty())
    CHECK_THAT(why_not, Catch::Contains("libnccl.so.2") && Catch::Contains("LD_LIBRARY_PATH"));
  DSGD_SKIP_UNLESS("nccl", !version.empty(), "libnccl.so.2 does not load here: " + why_not);
  INFO("NCCL " << version);
  CHECK(version.rfind("2.", 0) == 0);
  const cuda::NcclId a = cuda::nccl_unique_id(), b = cuda::nccl_unique_id();
  CHECK(a != b);  // each names a new communicator
  CHECK(std::any_of(a.begin(), a.end(), [](uint8_t v) { return v != 0; }));
#endif
}

TEST_CASE("joining an NCCL communicator without a usable GPU is a CudaError, not a hang",
          "[nccl]") {
#ifndef DSGD_HAVE_NCCL
  DSGD_SKIP_UNLESS("nccl", false, "dsgd was built without NCCL (no nccl.h at configure time)");
#else
  std::string why_not;
  DSGD_SKIP_UNLESS("nccl", !cuda::nccl_version(&why_not).empty(),
                   "libnccl.so.2 does not load here: " + why_not);
  DSGD_SKIP_UNLESS("no-gpu", cuda::device_count() == 0,
                   "a GPU is present: dsgd_cuda_tests checks NCCL's timeout there instead");
  const auto t0 = std::chrono::steady_clock::now();
  try {
    cuda::NcclComm comm(cuda::nccl_unique_id(), 1, 0, std::chrono::milliseconds(5000));
    FAIL("an NCCL communicator was made without a GPU");
  } catch (const cuda::CudaError& e) {
    CHECK_THAT(e.what(), Catch::Contains("ncclCommInitRankConfig"));
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(5000));
#endif
}
