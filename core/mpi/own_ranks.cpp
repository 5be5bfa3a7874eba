#include "core/mpi/own_ranks.h"

#include <cstdlib>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/mpi/mpi_check.h"

namespace dsgd::mpi {

RankRange own_ranks(int app_number, const std::string& context_sizes, int world_size) {
  const RankRange every{0, world_size};
  if (context_sizes.empty()) return every;
  std::istringstream in(context_sizes);
  std::vector<int> sizes;
  int first = 0;
  for (int n; in >> n;) {
    if (n <= 0) break;
    sizes.push_back(n);
    first += n;
  }
  if (!in.eof() || first != world_size || app_number < 0 ||
      app_number >= static_cast<int>(sizes.size()))
    throw UsageError(fmt::format(
        "cannot tell dsgd's ranks in this MPI job: app context {} of sizes \"{}\" in a world of "
        "{} ranks (OMPI_APP_CTX_NUM_PROCS); start dsgd with Open MPI's mpirun",
        app_number, context_sizes, world_size));
  first = 0;
  for (int k = 0; k < app_number; ++k)
    first += sizes[k];
  return {first, sizes[app_number]};
}

RankRange own_ranks_of_job() {
  int world = 1, found = 0;
  int* app = nullptr;
  DSGD_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world));
  DSGD_MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &app, &found));
  const char* sizes = std::getenv("OMPI_APP_CTX_NUM_PROCS");
  if (!found || !app || !sizes) return {0, world};
  return own_ranks(*app, sizes, world);
}

OwnRanksComm::OwnRanksComm(RankRange range) {
  int world = 1;
  DSGD_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world));
  if (range.first == 0 && range.count == world) return;
  MPI_Group all = MPI_GROUP_NULL, own = MPI_GROUP_NULL;
  DSGD_MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &all));
  int ranges[1][3] = {{range.first, range.first + range.count - 1, 1}};
  DSGD_MPI_CHECK(MPI_Group_range_incl(all, 1, ranges, &own));
  const int rc = MPI_Comm_create_group(MPI_COMM_WORLD, own, /*tag=*/0, &comm_);
  MPI_Group_free(&own);
  MPI_Group_free(&all);
  DSGD_MPI_CHECK(rc);
  DSGD_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
}

OwnRanksComm::~OwnRanksComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_WORLD && !finalized) MPI_Comm_free(&comm_);
}

}  // namespace dsgd::mpi
