// --device on a machine without a GPU (CI): `dsgd train --device cuda` is refused with one
// line and exit code 2, whether dsgd was built without CUDA or finds no device.
#include <catch2/catch.hpp>
#include <algorithm>

#include "cli_runner.h"
#include "skip.h"
#ifdef DSGD_HAVE_CUDA
#include "core/cuda/cuda_device.h"
#endif

using namespace dsgd::test;

namespace {

bool have_gpu() {
#ifdef DSGD_HAVE_CUDA
  return dsgd::cuda::device_count() > 0;
#else
  return false;
#endif
}

}  // namespace

TEST_CASE("dsgd train --device cuda:K past the last GPU is one line and exit 2", "[cli][device]") {
  const CliResult r = run_dsgd("train --device cuda:4096 --steps 1 -q");
  CHECK(r.exit_code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::Contains("--device cuda:4096"));
  CHECK_THAT(r.err, Catch::Contains("--device cpu") || Catch::Contains("--device cuda"));
}

TEST_CASE("dsgd train --device gpu (no such device kind) is exit 2", "[cli][device]") {
  const CliResult bad = run_dsgd("train --device gpu --steps 1 -q");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--device cpu"));
}

TEST_CASE("dsgd train --device cuda without a GPU is one line and exit 2", "[cli][device]") {
  DSGD_SKIP_UNLESS("no-gpu", !have_gpu(),
                   "a GPU is present, so --device cuda runs; dsgd_cuda_tests and "
                   "bench/cuda_check.sh check it there");
  const CliResult r = run_dsgd("train --device cuda --steps 1 -q");
  CHECK(r.exit_code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::Contains("--device cuda:") || Catch::Contains("--device cuda"));
  CHECK_THAT(r.err, Catch::Contains("use --device cpu"));
#ifdef DSGD_HAVE_CUDA
  CHECK_THAT(r.err, Catch::Contains("no usable CUDA device"));
#else
  CHECK_THAT(r.err, Catch::Contains("built without CUDA"));
#endif
}
