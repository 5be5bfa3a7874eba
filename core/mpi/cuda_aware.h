// Whether this MPI library moves device (CUDA) memory itself: Open MPI's
// MPIX_Query_cuda_support (mpi-ext.h), asked at run time, since the library that runs may
// differ from the one dsgd was compiled against. Not a CUDA dependency: nothing here
// touches a GPU.
#pragma once

namespace dsgd::mpi {

// True only when the MPI library says at run time that it is CUDA-aware; false where the
// library has no such query (MPICH without it, Open MPI without the cuda extension).
// Call after MPI_Init.
bool cuda_aware();

}  // namespace dsgd::mpi
