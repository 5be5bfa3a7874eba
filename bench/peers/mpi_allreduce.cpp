// The peer bench's Open MPI: MPI_Allreduce of float32 sums over the sweep of sweep.h, each
// size warmed up, then timed iteration by iteration after a barrier; the median of each
// rank's times, the slowest rank's printed by rank 0 with the check (as dsgd bench
// collective takes them). Run by bench/peers/run.sh:
//   mpirun -np 4 --mca btl tcp,self bench_peer_mpi
#include <mpi.h>

#include <vector>

#include "sweep.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  for (size_t bytes : peers::sweep_bytes()) {
    std::vector<float> in(bytes / sizeof(float)), out(in.size());
    peers::fill(in, rank);
    bool ok = true;
    std::vector<double> times;
    for (int it = 0; it < peers::kWarmup + peers::iterations(bytes); ++it) {
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t0 = peers::Clock::now();
      MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
      if (it >= peers::kWarmup) times.push_back(peers::seconds_since(t0));
      ok = ok && peers::summed(out, world);
    }
    double mine = peers::median(times), slowest = 0;
    int good = ok, all_good = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&good, &all_good, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0) peers::print_row("openmpi", bytes, world, slowest, all_good);
  }
  MPI_Finalize();
  return 0;
}
