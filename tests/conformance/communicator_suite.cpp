// run_communicator_suite: the checks of p2p_checks.cpp and collective_checks.cpp in order,
// a barrier after each, so that a check's messages cannot reach the next one.
#include "tests/conformance/communicator_suite.h"

#include "core/comm/collectives.h"

namespace dsgd::conformance {

void Report::fail(const std::string& what) {
  constexpr size_t kMaxLines = 50;  // one broken algorithm must not flood the log
  if (failures_.size() < kMaxLines)
    failures_.push_back(who_ + ": " + what);
  else if (failures_.size() == kMaxLines)
    failures_.push_back(who_ + ": ... (more failures not listed)");
}

void run_communicator_suite(Communicator& comm, Report& report) {
  using Check = void (*)(Communicator&, Report&);
  const std::pair<const char*, Check> checks[] = {
      {"send/recv", check_send_recv},
      {"isend/irecv/wait/test", check_isend_irecv},
      {"any source", check_any_source},
      {"tags and order", check_tags_and_order},
      {"size mismatch", check_size_mismatch},
      {"deadline", check_deadline},
      {"collective arguments", check_collective_arguments},
      {"collectives", check_collectives},
      {"large collectives", check_large_collectives},
  };
  for (const auto& [name, check] : checks) {
    try {
      check(comm, report);
      barrier(comm);
    } catch (const std::exception& e) {
      report.fail(fmt::format("{} threw: {}", name, e.what()));
      throw;
    }
  }
}

}  // namespace dsgd::conformance
