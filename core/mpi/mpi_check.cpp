#include "core/mpi/mpi_check.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd::mpi {
namespace {

// "rank 3" when MPI is up, so a message from one of many ranks says which; "" otherwise.
std::string this_rank() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return "";
  int rank = -1;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) return "";
  return fmt::format("rank {}: ", rank);
}

// Only the call's name, not its arguments: "MPI_Isend(data.data(), ...)" -> "MPI_Isend".
std::string call_name(const char* call) {
  const std::string text(call);
  const size_t paren = text.find('(');
  return paren == std::string::npos ? text : text.substr(0, paren);
}

}  // namespace

std::string error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return fmt::format("MPI error code {}", code);
  return std::string(text, length);
}

void check(int rc, const char* call, int peer) {
  if (rc == MPI_SUCCESS) return;
  int error_class = rc;
  MPI_Error_class(rc, &error_class);
  const std::string what =
      fmt::format("{}{} failed{}: {}", this_rank(), call_name(call),
                  peer >= 0 ? fmt::format(" (peer rank {})", peer) : "", error_string(rc));
  switch (error_class) {
    case MPI_ERR_BUFFER:
    case MPI_ERR_COUNT:
    case MPI_ERR_TYPE:
    case MPI_ERR_TAG:
    case MPI_ERR_RANK:
    case MPI_ERR_ROOT:
    case MPI_ERR_OP:
    case MPI_ERR_ARG:
    case MPI_ERR_TRUNCATE:
      throw UsageError(what + "; this is a bug in the caller's arguments");
    default:
      throw CommError(what + "; the MPI job is no longer usable", peer);
  }
}

}  // namespace dsgd::mpi
