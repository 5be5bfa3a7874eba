// Main of dsgd_cuda_tests. Without a usable GPU it says why and exits kSkipExitCode, which
// CTest reports as skipped (SKIP_RETURN_CODE), never as passed; with one, it runs the Catch2
// tests of test_cuda.cpp (tests/skip.h: a skipped one is listed as such).
#include <cstdio>
#include <string>

#include "core/cuda/cuda_device.h"
#include "skip.h"

int main(int argc, char** argv) {
  std::string why;
  const int count = dsgd::cuda::device_count(&why);
  if (!dsgd::test::available_here("gpu", count > 0)) {
    std::printf("SKIPPED: no usable CUDA device (%s); the CUDA tests need a GPU\n",
                count > 0 ? "hidden by DSGD_TEST_WITHOUT" : why.c_str());
    return dsgd::test::kSkipExitCode;
  }
  std::printf("CUDA tests on %d device(s), cuda:0 = %s\n", count,
              dsgd::cuda::device_name(0).c_str());
  return dsgd::test::run_catch(argc, argv);
}
