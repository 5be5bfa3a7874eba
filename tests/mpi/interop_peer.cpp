// The dsgd side of the mpi4py interop test (tests/mpi/interop.sh): one MPMD job, rank 0 is
// tests/mpi/peer.py (mpi4py), rank 1 is this program. Through MpiCommunicator's plain
// send/recv on MPI_COMM_WORLD it receives a float32 tensor, sends it back doubled, and
// receives one more from any source. Exits 0 only if every value is as expected.
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/mpi/mpi_communicator.h"
#include "core/mpi/mpi_session.h"

int main() {
  dsgd::mpi::MpiSession session({.report_sigterm = false});
  int failures = 0;
  try {
    dsgd::mpi::MpiCommunicator comm;
    comm.set_timeout(std::chrono::seconds(30));
    if (comm.size() != 2 || comm.rank() != 1) {
      fmt::print(stderr, "interop_peer: run as rank 1 of 2 (rank 0: peer.py)\n");
      return 2;
    }
    std::vector<float> tensor(12);
    const dsgd::Status st = comm.recv(tensor, 0, 11);
    for (size_t i = 0; i < tensor.size(); ++i)
      if (tensor[i] != 1.5f * i) ++failures;
    if (st.source != 0 || st.tag != 11 || st.count != 12) ++failures;
    for (float& v : tensor)
      v *= 2;
    comm.send(tensor, 0, 12);
    std::vector<float> more(3);
    const dsgd::Status any = comm.recv(more, dsgd::kAnySource, 13);
    if (any.source != 0 || more != std::vector<float>{-1, 0, 1}) ++failures;
    fmt::print(
        "interop_peer (dsgd, rank 1): received {} floats from the mpi4py rank, sent them "
        "back doubled; {} failure{}\n",
        st.count, failures, failures == 1 ? "" : "s");
  } catch (const dsgd::Error& e) {
    fmt::print(stderr, "interop_peer: {}\n", e.what());
    return e.exit_code();
  }
  return failures == 0 ? 0 : 1;
}
