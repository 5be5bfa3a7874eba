#include "core/mpi/preflight.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/mpi/mpi_check.h"
#include "core/mpi/mpi_session.h"

namespace dsgd::mpi {
namespace {

// What each rank sends: fixed size, plain bytes, so one MPI_Allgather of MPI_BYTE carries
// it between hosts (all x86-64 or all of one byte order: MPI_BYTE is not converted).
struct Record {
  char host[256];
  char version[32];
  int32_t local_rank;
  int32_t exit_code;  // PreflightInput::exit_code
  uint64_t config_hash;
  uint64_t data_hash;
  char config[1024];  // "flag=value\n" per config field (cut at 1023 bytes)
  char error[1024];   // PreflightInput::error (cut at 1023 bytes)
};

std::string config_text(const ConfigFields& fields) {
  std::string text;
  for (const auto& [flag, value] : fields)
    text += flag + "=" + value + "\n";
  return text;
}

ConfigFields config_of(const std::string& text) {
  ConfigFields fields;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, nl - at);
    const size_t eq = line.find('=');
    if (eq != std::string::npos) fields.push_back({line.substr(0, eq), line.substr(eq + 1)});
    at = nl + 1;
  }
  return fields;
}

void copy_text(char* out, size_t size, const std::string& text) {
  std::memset(out, 0, size);
  std::memcpy(out, text.data(), std::min(text.size(), size - 1));
}

std::string text_of(const char* field, size_t size) {
  return std::string(field, strnlen(field, size));
}

}  // namespace

std::string describe_mismatch(const std::vector<RankIdentity>& ranks) {
  if (ranks.empty()) return "";
  const RankIdentity& ref = ranks[0];
  std::string lines;
  int differing = 0;
  for (size_t r = 1; r < ranks.size(); ++r) {
    const RankIdentity& id = ranks[r];
    std::vector<std::string> what;
    if (id.version != ref.version)
      what.push_back(
          fmt::format("dsgd version {} (rank 0: {}); install the same dsgd on every "
                      "host",
                      id.version, ref.version));
    if (id.config_hash != ref.config_hash) {
      const std::string flag = first_difference(id.config, static_cast<int>(r), ref.config, 0);
      what.push_back(
          !flag.empty()
              ? fmt::format("{}; give every rank the same flags", flag)
              : fmt::format("configuration hash {:016x} (rank 0: {:016x}); give every rank the "
                            "same flags",
                            id.config_hash, ref.config_hash));
    }
    if (id.data_hash != ref.data_hash)
      what.push_back(
          fmt::format("dataset hash {:016x} (rank 0: {:016x}); every host must see "
                      "the same data files at the same paths",
                      id.data_hash, ref.data_hash));
    if (what.empty()) continue;
    if (++differing > 8) continue;  // the first few say enough
    for (const std::string& w : what)
      lines += fmt::format("; rank {} (host {}): {}", r, id.host, w);
  }
  if (differing == 0) return "";
  return fmt::format("preflight: {} of {} ranks differ from rank 0 (host {}){}{}", differing,
                     ranks.size(), ref.host, lines,
                     differing > 8 ? fmt::format("; ... and {} more", differing - 8) : "");
}

std::string describe_startup_errors(const std::vector<RankIdentity>& ranks) {
  std::vector<int> failed;
  for (size_t r = 0; r < ranks.size(); ++r)
    if (!ranks[r].error.empty()) failed.push_back(static_cast<int>(r));
  if (failed.empty()) return "";
  const bool alike = failed.size() == ranks.size() &&
                     std::all_of(ranks.begin(), ranks.end(), [&](const RankIdentity& id) {
                       return id.error == ranks[0].error;
                     });
  if (alike) return ranks[0].error;
  std::string lines;
  for (size_t k = 0; k < failed.size() && k < 8; ++k)
    lines += fmt::format("{}rank {} (host {}): {}", k ? "; " : "", failed[k], ranks[failed[k]].host,
                         ranks[failed[k]].error);
  if (failed.size() > 8) lines += fmt::format("; ... and {} more ranks", failed.size() - 8);
  return lines;
}

std::vector<RankIdentity> preflight(MpiCommunicator& comm, const PreflightInput& input) {
  Record mine{};
  copy_text(mine.host, sizeof mine.host, host_name());
  copy_text(mine.version, sizeof mine.version, DSGD_VERSION);
  mine.local_rank = local_rank_from_env();
  mine.config_hash = input.config_hash;
  mine.data_hash = input.data_hash;
  copy_text(mine.config, sizeof mine.config, config_text(input.config));
  copy_text(mine.error, sizeof mine.error, input.error);
  mine.exit_code = input.exit_code;
  std::vector<Record> all(comm.size());
  {
    auto guard = comm.blocking("MPI_Allgather (preflight)", sizeof(Record) * all.size());
    DSGD_MPI_CHECK(MPI_Allgather(&mine, sizeof(Record), MPI_BYTE, all.data(), sizeof(Record),
                                 MPI_BYTE, comm.mpi_comm()));
  }
  std::vector<RankIdentity> ranks;
  std::vector<std::string> hosts;
  for (const Record& r : all) {
    ranks.push_back({.host = text_of(r.host, sizeof r.host),
                     .version = text_of(r.version, sizeof r.version),
                     .local_rank = r.local_rank,
                     .config_hash = r.config_hash,
                     .data_hash = r.data_hash,
                     .config = config_of(text_of(r.config, sizeof r.config)),
                     .error = text_of(r.error, sizeof r.error),
                     .exit_code = r.exit_code});
    hosts.push_back(ranks.back().host);
  }
  comm.set_hosts(std::move(hosts));
  const std::string failed = describe_startup_errors(ranks);
  if (!failed.empty()) {
    const auto first = std::find_if(ranks.begin(), ranks.end(),
                                    [](const RankIdentity& id) { return !id.error.empty(); });
    throw StartupError(failed, first->exit_code);
  }
  const std::string mismatch = describe_mismatch(ranks);
  if (!mismatch.empty()) throw UsageError(mismatch);
  return ranks;
}

void align_epoch(MpiCommunicator& comm, const std::vector<RankIdentity>& ranks) {
  comm.native_barrier();  // MPI_Barrier under the watchdog
  const int64_t mine = Clock::now().time_since_epoch().count();
  std::vector<int64_t> all(comm.size());
  {
    auto guard = comm.blocking("MPI_Allgather (epoch)", sizeof(int64_t) * all.size());
    DSGD_MPI_CHECK(
        MPI_Allgather(&mine, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm.mpi_comm()));
  }
  int first_on_host = comm.rank();
  if (ranks.size() == all.size())
    for (int r = 0; r < comm.rank(); ++r)
      if (ranks[r].host == ranks[comm.rank()].host) {
        first_on_host = r;
        break;
      }
  comm.set_epoch(Clock::time_point(Clock::duration(all[first_on_host])));
}

}  // namespace dsgd::mpi
