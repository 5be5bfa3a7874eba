// Main of dsgd_cuda_tests. Without a usable GPU it says why and exits 77, which CTest
// reports as skipped (SKIP_RETURN_CODE), never as passed; with one, it runs the Catch2
// tests of test_cuda.cpp.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "core/cuda/cuda_device.h"

int main(int argc, char** argv) {
  std::string why;
  const int count = dsgd::cuda::device_count(&why);
  if (count == 0) {
    std::printf("SKIPPED: no usable CUDA device (%s); the CUDA tests need a GPU\n", why.c_str());
    return 77;
  }
  std::printf("CUDA tests on %d device(s), cuda:0 = %s\n", count,
              dsgd::cuda::device_name(0).c_str());
  return Catch::Session().run(argc, argv);
}
