// The Communicator conformance suite: every point-to-point call and every collective with
// every algorithm it offers, on exact inputs, written against Communicator& only, so that
// simulated nodes (tests/test_conformance.cpp) and MPI ranks (tests/mpi/mpi_comm_test.cpp)
// answer the same questions. Every rank of a world calls run_communicator_suite at once.
// Not for backend-specific behaviour (events, native hooks, link model): their own tests.
#pragma once

#include "core/comm/communicator.h"
#include "tests/conformance/report.h"

namespace dsgd::conformance {

// Runs every check on this rank, recording into `report`. A check that throws where no
// error is expected records the check's name and rethrows: the other ranks are then stuck
// in the same check, and only the runner can end them (run_cluster aborts its nodes; the
// MPI program aborts the job). Needs the backend to leave waits to their deadlines: a
// simulated cluster's deadlock detector would report the deadline check as a deadlock.
void run_communicator_suite(Communicator& comm, Report& report);

// The parts, in the order run_communicator_suite runs them (p2p_checks.cpp,
// collective_checks.cpp). Each leaves no message behind for the next.
void check_send_recv(Communicator& comm, Report& report);
void check_isend_irecv(Communicator& comm, Report& report);
void check_any_source(Communicator& comm, Report& report);
void check_tags_and_order(Communicator& comm, Report& report);
void check_size_mismatch(Communicator& comm, Report& report);
void check_deadline(Communicator& comm, Report& report);
void check_collective_arguments(Communicator& comm, Report& report);
void check_collectives(Communicator& comm, Report& report);
void check_large_collectives(Communicator& comm, Report& report);

}  // namespace dsgd::conformance
