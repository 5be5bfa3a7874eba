#include "core/cuda/nccl.h"

#include <dlfcn.h>

#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "core/cuda/cuda_check.h"

namespace dsgd::cuda {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr const char* kNcclSoname = "libnccl.so.2";

// The entry points dsgd calls, looked up once per process. The library is never closed:
// its proxy threads may outlive any one communicator.
struct Api {
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRankConfig) init_rank_config = nullptr;
  decltype(&ncclCommGetAsyncError) get_async_error = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclCommFinalize) finalize = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclCommAbort) abort = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetLastError) last_error = nullptr;
  std::string why_not;  // empty once everything was found
};

template <class F>
bool lookup(void* library, const char* symbol, F& f, std::string& why_not) {
  f = reinterpret_cast<F>(dlsym(library, symbol));
  if (!f && why_not.empty())
    why_not = fmt::format("{} has no {} (NCCL older than 2.14?)", kNcclSoname, symbol);
  return f != nullptr;
}

Api open_api() {
  Api a;
  // The loader's search path first (LD_LIBRARY_PATH, ld.so.cache), then where CMake found
  // it (the CUDA Toolkit's lib64).
  void* library = dlopen(kNcclSoname, RTLD_NOW | RTLD_LOCAL);
  if (!library)
    library =
        dlopen((std::string(DSGD_NCCL_DIR) + "/" + kNcclSoname).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    a.why_not = fmt::format("dlopen({}) failed: {}; install NCCL or add it to LD_LIBRARY_PATH",
                            kNcclSoname, dlerror());
    return a;
  }
  lookup(library, "ncclGetVersion", a.get_version, a.why_not);
  lookup(library, "ncclGetUniqueId", a.get_unique_id, a.why_not);
  lookup(library, "ncclCommInitRankConfig", a.init_rank_config, a.why_not);
  lookup(library, "ncclCommGetAsyncError", a.get_async_error, a.why_not);
  lookup(library, "ncclAllReduce", a.all_reduce, a.why_not);
  lookup(library, "ncclCommFinalize", a.finalize, a.why_not);
  lookup(library, "ncclCommDestroy", a.destroy, a.why_not);
  lookup(library, "ncclCommAbort", a.abort, a.why_not);
  lookup(library, "ncclGetErrorString", a.error_string, a.why_not);
  lookup(library, "ncclGetLastError", a.last_error, a.why_not);
  return a;
}

const Api& api() {
  static const Api a = open_api();  // thread-safe: ranks may be threads of one process
  return a;
}

const Api& loaded() {
  const Api& a = api();
  if (!a.why_not.empty())
    throw CudaError(fmt::format("{}: NCCL: {}", current_device_label(), a.why_not), "dlopen");
  return a;
}

// The status's text, and NCCL's last error message, which is one per process (ranks that
// are threads of one process may see each other's).
std::string describe(const Api& a, ncclResult_t status, ncclComm_t comm) {
  const char* last = a.last_error(comm);
  return last && *last
             ? fmt::format("{} (last NCCL error in this process: {})", a.error_string(status), last)
             : std::string(a.error_string(status));
}

void check(const Api& a, ncclResult_t status, const char* call, ncclComm_t comm) {
  if (status == ncclSuccess || status == ncclInProgress) return;
  throw CudaError(
      fmt::format("{}: {} failed: {}", current_device_label(), call, describe(a, status, comm)),
      call);
}

}  // namespace

std::string nccl_version(std::string* why_not) {
  const Api& a = api();
  int code = 0;
  if (a.why_not.empty() && a.get_version(&code) == ncclSuccess)
    // NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z since 2.9.
    return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
  if (why_not) *why_not = a.why_not.empty() ? "ncclGetVersion failed" : a.why_not;
  return "";
}

NcclId nccl_unique_id() {
  const Api& a = loaded();
  ncclUniqueId id;
  check(a, a.get_unique_id(&id), "ncclGetUniqueId", nullptr);
  NcclId out;
  std::memcpy(out.data(), &id, sizeof id);
  return out;
}

NcclComm::NcclComm(const NcclId& id, int world, int rank, std::chrono::milliseconds timeout,
                   FailureProbe failure)
    : rank_(rank), timeout_(timeout), failure_(std::move(failure)) {
  const Api& a = loaded();
  ncclUniqueId nid;
  std::memcpy(&nid, id.data(), sizeof nid);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // returns at once; wait() polls with a deadline
  const SteadyClock::time_point deadline = SteadyClock::now() + timeout_;
  const ncclResult_t status = a.init_rank_config(&comm_, world, nid, rank, &config);
  if (status != ncclSuccess && status != ncclInProgress) {
    const std::string what = describe(a, status, comm_);
    if (comm_) a.abort(comm_);
    comm_ = nullptr;
    throw CudaError(fmt::format("{}: ncclCommInitRankConfig (rank {} of {}) failed: {}",
                                current_device_label(), rank, world, what),
                    "ncclCommInitRankConfig");
  }
  wait("ncclCommInitRankConfig", deadline);
  joined_ = true;
}

NcclComm::~NcclComm() {
  if (!comm_) return;
  const Api& a = api();
  // Leave in order where possible: finalize (flushes and lets the peers know), then
  // destroy. Anything wrong, or a peer that never answers: abort, which does not wait.
  try {
    check(a, a.finalize(comm_), "ncclCommFinalize", comm_);
    // Not probing the backend: peers that finished may have closed their connections.
    wait("ncclCommFinalize", SteadyClock::now() + timeout_, std::nullopt, false);
  } catch (const std::exception&) {
    abort();  // wait() has aborted already when it threw; abort() is then a no-op
    return;
  }
  a.destroy(comm_);
  comm_ = nullptr;
}

void NcclComm::abort() {
  if (comm_) api().abort(comm_);
  comm_ = nullptr;
}

void NcclComm::all_reduce_sum(float* data, size_t count, cudaStream_t stream) {
  if (!comm_) throw std::logic_error("NcclComm::all_reduce_sum after the communicator aborted");
  const Api& a = api();
  const SteadyClock::time_point deadline = SteadyClock::now() + timeout_;
  const ncclResult_t status = a.all_reduce(data, data, count, ncclFloat32, ncclSum, comm_, stream);
  if (status != ncclSuccess && status != ncclInProgress) {
    const std::string what = describe(a, status, comm_);
    abort();
    throw CudaError(fmt::format("{}: ncclAllReduce of {} floats failed: {}", current_device_label(),
                                count, what),
                    "ncclAllReduce");
  }
  wait("ncclAllReduce", deadline, stream);
}

void NcclComm::wait(const char* call, SteadyClock::time_point deadline,
                    std::optional<cudaStream_t> stream, bool probe) {
  const Api& a = api();
  SteadyClock::time_point next_probe = SteadyClock::now();  // the probe may take a lock
  for (;;) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t status = a.get_async_error(comm_, &state);
    if (status != ncclSuccess) state = status;
    if (state != ncclSuccess && state != ncclInProgress) {
      const std::string what =
          fmt::format("{}: {} (rank {}) failed: {}; the communicator was aborted",
                      current_device_label(), call, rank_, describe(a, state, comm_));
      abort();
      // A peer that went away: exit code 3, as for a lost peer on the backend.
      if (state == ncclRemoteError || (joined_ && state == ncclSystemError))
        throw CommError(what, -1);
      throw CudaError(what, call);
    }
    if (state == ncclSuccess) {
      if (!stream) return;
      const cudaError_t q = cudaStreamQuery(*stream);
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady) {
        abort();
        check(q, "cudaStreamQuery");  // throws CudaError naming the stream's failure
      }
    }
    if (probe && failure_ && SteadyClock::now() >= next_probe) {
      next_probe = SteadyClock::now() + std::chrono::milliseconds(1);
      if (const std::string why = failure_(); !why.empty()) {
        abort();
        throw CommError(fmt::format("{}: {} (rank {}) abandoned, the run failed: {}",
                                    current_device_label(), call, rank_, why),
                        -1);
      }
    }
    if (SteadyClock::now() > deadline) {
      abort();
      throw TimeoutError(
          fmt::format("{}: {} (rank {}) did not complete within {} ms: another rank did not take "
                      "part (stopped, or still busy); check the other ranks, or raise --timeout",
                      current_device_label(), call, rank_, timeout_.count()),
          -1);
    }
    std::this_thread::yield();
  }
}

}  // namespace dsgd::cuda
