// Tests for the parts of the MPI backend that need no MPI job: preflight's comparison
// (core/mpi/preflight.h), dsgd's own ranks of an MPMD job (own_ranks.h), the configuration
// fingerprint (core/train/config_hash.h), and the CLI's MPI helpers (per-rank output paths,
// sim-only flags refused with --backend mpi). The MPI backend itself is tested under mpirun
// (tests/mpi/, CTest mpi_*).
#include <catch2/catch.hpp>

#include "cli/backend.h"
#include "core/errors.h"
#include "core/train/config_hash.h"
#include "skip.h"

#ifdef DSGD_HAVE_MPI
#include "core/mpi/own_ranks.h"
#include "core/mpi/preflight.h"
#endif

using namespace dsgd;

TEST_CASE("config_fingerprint changes with every field that changes the numbers") {
  const TrainConfig base;
  const uint64_t h = config_fingerprint(base);
  CHECK(config_fingerprint(TrainConfig{}) == h);
  auto differs = [&](auto edit) {
    TrainConfig c;
    edit(c);
    return config_fingerprint(c) != h;
  };
  CHECK(differs([](TrainConfig& c) { c.model = ModelSpec::parse("mlp:65"); }));
  CHECK(differs([](TrainConfig& c) { c.global_batch = 255; }));
  CHECK(differs([](TrainConfig& c) { c.sgd.lr = 0.1000001f; }));
  CHECK(differs([](TrainConfig& c) { c.sgd.momentum = 0; }));
  CHECK(differs([](TrainConfig& c) { c.sgd.weight_decay = 1e-4f; }));
  CHECK(differs([](TrainConfig& c) { c.sgd.nesterov = true; }));
  CHECK(differs([](TrainConfig& c) { c.steps = 10; }));
  CHECK(differs([](TrainConfig& c) { c.epochs = 6; }));
  CHECK(differs([](TrainConfig& c) { c.seed = 1; }));
  CHECK(differs([](TrainConfig& c) { c.shuffle = false; }));
  CHECK(differs([](TrainConfig& c) { c.allreduce = Algorithm::ring; }));
  CHECK(differs([](TrainConfig& c) { c.eval_every = 5; }));
}

TEST_CASE("preflight names every rank that differs from rank 0, with its host") {
#ifndef DSGD_HAVE_MPI
  DSGD_SKIP_UNLESS("mpi", false, "dsgd was built without MPI (no MPI found at configure time)");
#else
  using mpi::RankIdentity;
  const RankIdentity ok{.host = "node1", .version = "0.1.0", .config_hash = 1, .data_hash = 2};
  std::vector<RankIdentity> ranks{ok, ok, ok, ok};
  ranks[1].host = "node2";
  CHECK(mpi::describe_mismatch(ranks).empty());  // hosts may differ, nothing else

  ranks[2].host = "node3";
  ranks[2].data_hash = 99;
  ranks[3].version = "0.2.0";
  const std::string m = mpi::describe_mismatch(ranks);
  CHECK_THAT(m, Catch::StartsWith("preflight: 2 of 4 ranks differ from rank 0 (host node1)"));
  CHECK_THAT(m, Catch::Contains("rank 2 (host node3): dataset hash 0000000000000063 (rank 0: "
                                "0000000000000002)"));
  CHECK_THAT(m, Catch::Contains("rank 3 (host node1): dsgd version 0.2.0 (rank 0: 0.1.0)"));
  CHECK_THAT(m, !Catch::Contains("rank 1"));
  CHECK_THAT(m, !Catch::Contains("\n"));  // one line
  // The flag that differs, named as a user gave it.
  TrainConfig base, other;
  other.sgd.lr = 0.05f;
  ranks = {ok, ok, ok};
  ranks[0].config = config_fields(base);
  ranks[1].config = config_fields(base);
  ranks[2].config = config_fields(other);
  ranks[2].config_hash = 7;
  CHECK_THAT(mpi::describe_mismatch(ranks),
             Catch::Contains("rank 2 (host node1): --lr 0.05 on rank 2, 0.1 on rank 0; give every "
                             "rank the same flags"));
#endif
}

TEST_CASE("preflight lists at most 8 differing ranks") {
#ifndef DSGD_HAVE_MPI
  DSGD_SKIP_UNLESS("mpi", false, "dsgd was built without MPI (no MPI found at configure time)");
#else
  std::vector<mpi::RankIdentity> ranks(20, {.host = "h", .version = "1", .config_hash = 1});
  for (size_t r = 1; r < ranks.size(); ++r)
    ranks[r].config_hash = 2;
  const std::string m = mpi::describe_mismatch(ranks);
  CHECK_THAT(m, Catch::Contains("19 of 20 ranks differ"));
  CHECK_THAT(m, Catch::Contains("rank 8 (host h)"));
  CHECK_THAT(m, !Catch::Contains("rank 9 (host h)"));
  CHECK_THAT(m, Catch::EndsWith("... and 11 more"));
#endif
}

TEST_CASE("dsgd's own ranks in an MPMD job: its app context, numbered as Open MPI does") {
#ifndef DSGD_HAVE_MPI
  DSGD_SKIP_UNLESS("mpi", false, "dsgd was built without MPI (no MPI found at configure time)");
#else
  using mpi::own_ranks;
  using mpi::RankRange;
  CHECK(own_ranks(0, "", 4) == RankRange{0, 4});  // one program, or an MPI that does not say
  CHECK(own_ranks(0, "4", 4) == RankRange{0, 4});
  CHECK(own_ranks(1, "1 1", 2) == RankRange{1, 1});  // mpirun -np 1 python3 .. : -np 1 dsgd
  CHECK(own_ranks(0, "1 1", 2) == RankRange{0, 1});
  CHECK(own_ranks(2, "1 2 3", 6) == RankRange{3, 3});
  CHECK(own_ranks(1, "2 3 ", 5) == RankRange{2, 3});
  for (const char* bad : {"1 x", "1 0", "1 -1", "1 2"})
    CHECK_THROWS_WITH(own_ranks(1, bad, 2), Catch::Contains("cannot tell dsgd's ranks") &&
                                                Catch::Contains("OMPI_APP_CTX_NUM_PROCS"));
  CHECK_THROWS_AS(own_ranks(2, "1 1", 2), UsageError);
#endif
}

TEST_CASE("ranks that could not start: the error once when all agree, else each rank's") {
#ifndef DSGD_HAVE_MPI
  DSGD_SKIP_UNLESS("mpi", false, "dsgd was built without MPI (no MPI found at configure time)");
#else
  const mpi::RankIdentity ok{.host = "node0", .version = "1"};
  std::vector<mpi::RankIdentity> ranks{ok, ok, ok};
  CHECK(mpi::describe_startup_errors(ranks).empty());
  for (auto& r : ranks)
    r.error = "--latency is for simulated nodes";
  CHECK(mpi::describe_startup_errors(ranks) == "--latency is for simulated nodes");
  ranks[2].error = "data.csv: no such file";
  ranks[2].host = "node2";
  ranks[0].error.clear();
  CHECK(mpi::describe_startup_errors(ranks) ==
        "rank 1 (host node0): --latency is for simulated nodes; rank 2 (host node2): data.csv: "
        "no such file");
#endif
}
