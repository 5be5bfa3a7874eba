# Finds what dsgd builds with. Required: Threads, Boost (Asio, header-only), zlib,
# a CBLAS (OpenBLAS), libzip, CLI11, fmt, nlohmann_json, toml++. Optional parts set
# DSGD_HAVE_<PART> and a reason string for the configure summary.
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 QUIET CONFIG)
if(NOT CLI11_FOUND)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)
pkg_check_modules(ISAL REQUIRED IMPORTED_TARGET libisal)  # CRC32C of wire frames

# OpenBLAS through its CBLAS interface; openblas_set_num_threads keeps it to one thread
# per rank, as each simulated node is already a thread.
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
find_path(CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas openblas-pthread REQUIRED)

# --- optional parts -------------------------------------------------------------------
set(DSGD_HAVE_MPI OFF)
set(DSGD_MPI_REASON "disabled (DSGD_WITH_MPI=OFF)")
if(NOT DSGD_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(DSGD_HAVE_MPI ON)
    set(DSGD_MPI_REASON "MPI ${MPI_C_VERSION}, ${MPIEXEC_EXECUTABLE}")
  elseif(DSGD_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "DSGD_WITH_MPI=ON but no MPI was found: apt-get install libopenmpi-dev")
  else()
    set(DSGD_MPI_REASON "not found (apt-get install libopenmpi-dev openmpi-bin)")
  endif()
endif()

set(DSGD_HAVE_GUI OFF)
set(DSGD_GUI_REASON "disabled (DSGD_WITH_GUI=OFF)")
if(NOT DSGD_WITH_GUI STREQUAL "OFF")
  pkg_check_modules(IMGUI QUIET IMPORTED_TARGET imgui)
  pkg_check_modules(GLFW QUIET IMPORTED_TARGET glfw3)
  find_package(OpenGL QUIET)
  if(IMGUI_FOUND AND GLFW_FOUND AND OpenGL_FOUND)
    set(DSGD_HAVE_GUI ON)
    set(DSGD_GUI_REASON "Dear ImGui ${IMGUI_VERSION}, GLFW ${GLFW_VERSION}")
  elseif(DSGD_WITH_GUI STREQUAL "ON")
    message(FATAL_ERROR "DSGD_WITH_GUI=ON but imgui/glfw3/OpenGL missing: apt-get install libimgui-dev libglfw3-dev")
  else()
    set(DSGD_GUI_REASON "not found (apt-get install libimgui-dev libglfw3-dev)")
  endif()
endif()

set(DSGD_HAVE_CUDA OFF)
set(DSGD_CUDA_REASON "disabled (DSGD_WITH_CUDA=OFF)")
if(NOT DSGD_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Data-centre and desktop GPUs of the last generations, as real code: Turing (T4), Ampere
    # (A100, RTX 30), Ada (L4, L40, RTX 40), Hopper (H100, H200), Blackwell (B200, RTX 50),
    # plus PTX of the newest for GPUs that come later. CUDA 13 dropped everything before 75.
    # Override with -DCMAKE_CUDA_ARCHITECTURES=90 (one GPU kind) or =native.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90-real;100-real;120"
          CACHE STRING "CUDA architectures dsgd's kernels are compiled for")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
  endif()
  if(CMAKE_CUDA_COMPILER AND TARGET CUDA::cudart AND TARGET CUDA::cublas)
    set(DSGD_HAVE_CUDA ON)
    set(DSGD_CUDA_REASON "CUDA ${CUDAToolkit_VERSION}, cuBLAS, architectures ${CMAKE_CUDA_ARCHITECTURES}")
    # NCCL is not used yet (gradients go through the Communicator; see README "GPU ranks").
  elseif(DSGD_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DSGD_WITH_CUDA=ON but nvcc or cuBLAS was not found: install the CUDA Toolkit "
                        "or pass -DCMAKE_CUDA_COMPILER=/path/to/nvcc")
  elseif(CMAKE_CUDA_COMPILER)
    set(DSGD_CUDA_REASON "nvcc found but not the CUDA runtime or cuBLAS libraries")
  else()
    set(DSGD_CUDA_REASON "nvcc not found (CUDA Toolkit at /usr/local/cuda, or -DCMAKE_CUDA_COMPILER)")
  endif()
endif()
