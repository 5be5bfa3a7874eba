// The one check every MPI status goes through (like llm.c's mpiCheck), but it throws a
// typed error instead of calling exit(): UsageError for an argument MPI rejects (rank, tag,
// count, root, buffer), CommError for everything else. Needs MPI_ERRORS_RETURN on the
// communicator (MpiSession sets it on MPI_COMM_WORLD); with MPI's default handler an
// error aborts the job before any check sees it.
#pragma once

#include <mpi.h>

#include <string>

namespace dsgd::mpi {

// The text MPI gives for an error code ("MPI_ERR_TRUNCATE: message truncated").
std::string error_string(int code);

// Throws for any rc other than MPI_SUCCESS. `call` names the MPI call (the macro passes its
// source text), `peer` the rank involved or -1.
void check(int rc, const char* call, int peer = -1);

}  // namespace dsgd::mpi

// DSGD_MPI_CHECK(MPI_Barrier(comm)); DSGD_MPI_CHECK_PEER(MPI_Isend(...), dst);
#define DSGD_MPI_CHECK(call)                                                  \
  do {                                                                        \
    const int dsgd_mpi_rc_ = (call);                                          \
    if (dsgd_mpi_rc_ != MPI_SUCCESS) ::dsgd::mpi::check(dsgd_mpi_rc_, #call); \
  } while (0)
#define DSGD_MPI_CHECK_PEER(call, peer)                                             \
  do {                                                                              \
    const int dsgd_mpi_rc_ = (call);                                                \
    if (dsgd_mpi_rc_ != MPI_SUCCESS) ::dsgd::mpi::check(dsgd_mpi_rc_, #call, peer); \
  } while (0)
