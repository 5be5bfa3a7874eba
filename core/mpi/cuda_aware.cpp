#include "core/mpi/cuda_aware.h"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace dsgd::mpi {

bool cuda_aware() {
  // The compile-time MPIX_CUDA_AWARE_SUPPORT describes the headers, not the library loaded
  // now: ask the library whenever the extension exists.
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

}  // namespace dsgd::mpi
