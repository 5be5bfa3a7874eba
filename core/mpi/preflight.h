// Preflight: before any work, every rank of an MPI job tells the others its host name,
// dsgd version and the hashes of its configuration and dataset, so ranks that would
// silently train different things (a stale binary on one node, a different data file)
// stop at once, with one message naming the rank and host that differ. Collective.
// Not a health check of the network: the exchange itself is one MPI_Allgather.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/mpi/mpi_communicator.h"
#include "core/train/config_hash.h"

namespace dsgd::mpi {

struct PreflightInput {
  uint64_t config_hash = 0;  // 0: not checked (config_fingerprint, core/train/config_hash.h)
  uint64_t data_hash = 0;    // 0: not checked (dataset_fingerprint, core/data/dataset.h)
  ConfigFields config;       // the flags behind config_hash, to name the one that differs
  // Why this rank cannot start (a bad flag, a missing file), with its exit code; "": it can.
  std::string error;
  int exit_code = 0;
};

struct RankIdentity {
  std::string host;
  std::string version;
  int local_rank = -1;  // local_rank_from_env()
  uint64_t config_hash = 0;
  uint64_t data_hash = 0;
  ConfigFields config;
  std::string error;  // PreflightInput::error
  int exit_code = 0;
};

// A rank that could not start, as every rank learns it in preflight; exit_code() is that
// rank's (the first such rank's, when several could not).
class StartupError : public Error {
 public:
  StartupError(const std::string& what, int exit_code) : Error(what), code_(exit_code) {}
  int exit_code() const override { return code_; }

 private:
  int code_;
};

// Exchanges identities and gives `comm` every rank's host name (set_hosts). Throws the same
// UsageError on every rank when any rank's version or hashes differ from rank 0's; the
// message lists each rank that differs, with its host and the values. StartupError on
// every rank when any rank could not start: its message once when every rank gave the same,
// else each rank's, with its host.
std::vector<RankIdentity> preflight(MpiCommunicator& comm, const PreflightInput& input);

// Gives every rank a common epoch for wall_s (traces, merged across ranks). Collective.
// Ranks on one host share its monotonic clock, so they take the same instant, exactly:
// the lowest such rank's reading after a barrier. Hosts' clocks are unrelated, so across
// hosts the epochs differ by the barrier's skew (about one message latency).
void align_epoch(MpiCommunicator& comm, const std::vector<RankIdentity>& ranks);

// The comparison alone (tested without MPI): "" when every rank agrees with rank 0.
std::string describe_mismatch(const std::vector<RankIdentity>& ranks);
// The ranks that could not start, alone (tested without MPI): "" when every rank could.
std::string describe_startup_errors(const std::vector<RankIdentity>& ranks);

}  // namespace dsgd::mpi
