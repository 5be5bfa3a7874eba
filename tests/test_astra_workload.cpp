// ASTRA-sim 1.0's text workload: a DATA file parsed into seconds (cycles read as ns) and
// gradient bytes, the optional memory fields ignored, and every refusal a DataError that
// starts with file:line.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "core/errors.h"
#include "core/workload/astra_workload.h"

using namespace dsgd;
using Catch::Contains;

namespace {

Workload parse(const std::string& text, const std::string& name = "model.txt") {
  std::istringstream in(text);
  return parse_astra_workload(in, name);
}

// The DataError message for `text`, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

// Two layers; conv2's line has the two memory fields ASTRA-sim 2's converter accepts.
const std::string kValid =
    "DATA\n"
    "2\n"
    "# name reserved fwd type bytes ig type bytes wg type bytes update\n"
    "conv1 -1 1000 NONE 0 2000 NONE 0 3000 ALLREDUCE 4096 50\n"
    "\n"
    "conv2 -1 10 NONE 0 20 NONE 0 30 ALLREDUCE 1048576 5 77 88\n";

}  // namespace

TEST_CASE("astra: a DATA file parsed into seconds and gradient bytes", "[workload][astra]") {
  const Workload w = parse(kValid);
  CHECK(w.name == "model.txt");
  CHECK_THAT(w.source, Contains("ASTRA-sim 1.0"));
  REQUIRE(w.layers.size() == 2);
  const WorkloadLayer& a = w.layers[0];
  CHECK(a.name == "conv1");
  CHECK(a.forward_s == Approx(1000e-9));
  CHECK(a.input_grad_s == Approx(2000e-9));
  CHECK(a.weight_grad_s == Approx(3000e-9));
  CHECK(a.update_s == Approx(50e-9));
  CHECK(a.grad_bytes == 4096);
  CHECK(a.forward_flops == 0);
  CHECK(a.update_flops == 0);
  const WorkloadLayer& b = w.layers[1];
  CHECK(b.name == "conv2");
  CHECK(b.forward_s == Approx(10e-9));
  CHECK(b.update_s == Approx(5e-9));
  CHECK(b.grad_bytes == 1048576);
  CHECK(w.grad_bytes() == 4096 + 1048576);
  CHECK(w.uses_seconds());
  CHECK_FALSE(w.uses_flops());
}

TEST_CASE("astra: what a DATA file may also say", "[workload][astra]") {
  // More tokens after DATA; CRLF line ends; weight-grad NONE (no gradients); a forward or
  // input-grad collective of 0 bytes moves nothing.
  const Workload w = parse(
      "DATA extra tokens\r\n1\r\n"
      "frozen -1 5 ALLGATHER 0 6 ALLTOALL 0 7 NONE 123 8\r\n");
  REQUIRE(w.layers.size() == 1);
  CHECK(w.layers[0].grad_bytes == 0);
  CHECK(w.layers[0].weight_grad_s == Approx(7e-9));
}

TEST_CASE("astra: each refusal names file:line, what, and what to do", "[workload][astra]") {
  const std::string head = "DATA\n1\n";
  CHECK_THAT(error_of("HYBRID_TRANSFORMER model_parallel_NPU_group: 8\n1\n"),
             Contains("model.txt:1: parallelism HYBRID_TRANSFORMER is not modelled: dsgd runs "
                      "DATA (data-parallel) workloads; convert the file, or use a built-in model"));
  CHECK_THAT(error_of("MODEL\n1\n"), Contains("model.txt:1: parallelism MODEL is not modelled"));
  CHECK_THAT(error_of(""), Contains("model.txt:1: empty file"));
  CHECK_THAT(error_of("# only a comment\n\n"), Contains("model.txt:1: empty file"));
  CHECK_THAT(error_of("DATA\n"), Contains("model.txt:1: no number of layers"));
  CHECK_THAT(error_of("DATA\nmany\n"),
             Contains("model.txt:2: number of layers \"many\" is not a whole number"));
  CHECK_THAT(error_of("DATA\n0\n"), Contains("model.txt:2: number of layers 0 is not in 1.."));
  CHECK_THAT(error_of("DATA\n-3\n"), Contains("model.txt:2: number of layers -3 is negative"));

  CHECK_THAT(error_of("DATA\n\n\n1\nl -1 1 NONE 0 2 NONE 0 3 ALLTOALL 8 4\n"),
             Contains("model.txt:5: weight-grad communication ALLTOALL: dsgd all-reduces "
                      "gradients only (ALLREDUCE or NONE)"));
  CHECK_THAT(error_of(head + "l -1 1 ALLGATHER 1024 2 NONE 0 3 ALLREDUCE 8 4\n"),
             Contains("model.txt:3: forward communication ALLGATHER of 1024 bytes"));
  CHECK_THAT(error_of(head + "l -1 1 NONE 0 2 ALLREDUCE 64 3 ALLREDUCE 8 4\n"),
             Contains("model.txt:3: input-grad communication ALLREDUCE of 64 bytes"));

  CHECK_THAT(error_of(head + "l -1 1 NONE 0 2 NONE 0 3 ALLREDUCE 8\n"),
             Contains("model.txt:3: 11 fields; a layer has 12"));
  CHECK_THAT(error_of(head + "l -1 1 NONE 0 2 NONE 0 3 ALLREDUCE 8 4 5\n"),
             Contains("model.txt:3: 13 fields; a layer has 12"));
  CHECK_THAT(error_of(head + "l -1 1.5 NONE 0 2 NONE 0 3 ALLREDUCE 8 4\n"),
             Contains("model.txt:3: forward compute cycles \"1.5\" is not a whole number"));
  CHECK_THAT(error_of(head + "l -1 1 NONE 0 2 NONE 0 3 ALLREDUCE 8k 4\n"),
             Contains("model.txt:3: weight-grad comm bytes \"8k\" is not a whole number"));
  CHECK_THAT(error_of(head + "l x 1 NONE 0 2 NONE 0 3 ALLREDUCE 8 4\n"),
             Contains("model.txt:3: reserved field \"x\" is not a whole number"));
  CHECK_THAT(error_of(head + "l -1 1 NONE 0 -2 NONE 0 3 ALLREDUCE 8 4\n"),
             Contains("model.txt:3: input-grad compute cycles -2 is negative"));
  CHECK_THAT(error_of(head + "l -1 1 NONE 0 2 NONE 0 3 ALLREDUCE 8 -4\n"),
             Contains("model.txt:3: update delay cycles -4 is negative"));
  CHECK_THAT(error_of(head + "l -1 1 NONE 0 2 NONE 0 3 ALLREDUCE 8 4 -1 0\n"),
             Contains("model.txt:3: memory read bytes -1 is negative"));
  CHECK_THAT(error_of(head + "l -1 1 NONE 0 2 NONE 0 3 ALLREDUCE 99999999999999999999 4\n"),
             Contains("model.txt:3: weight-grad comm bytes 99999999999999999999 is more than"));

  CHECK_THAT(error_of("DATA\n3\nl -1 1 NONE 0 2 NONE 0 3 ALLREDUCE 8 4\n"),
             Contains("model.txt:2: 3 layers declared, but 1 layer lines follow"));
  CHECK_THAT(error_of(head + "a -1 1 NONE 0 2 NONE 0 3 ALLREDUCE 8 4\n\n"
                             "b -1 1 NONE 0 2 NONE 0 3 ALLREDUCE 8 4\n"),
             Contains("model.txt:5: a layer line past the 1 layers declared on line 2"));

  // Every refusal is a DataError, which exits with the usage code.
  CHECK_THROWS_AS(parse("MODEL\n1\n"), DataError);
}

TEST_CASE("astra: read_astra_workload names the workload by its file name", "[workload][astra]") {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("dsgd_test_astra_" + std::to_string(::getpid()) + "_" +
                                      std::to_string(std::random_device{}()) + ".txt");
  std::ofstream(path) << kValid;
  Workload w;
  std::string error;
  try {
    w = read_astra_workload(path.string());
  } catch (const DataError& e) {
    error = e.what();
  }
  std::filesystem::remove(path);
  CHECK(error.empty());
  CHECK(w.name == path.filename().string());
  CHECK(w.layers.size() == 2);
  CHECK(w.grad_bytes() == 4096 + 1048576);

  // Errors name the file by the same name; a missing file says so.
  CHECK_THROWS_AS(read_astra_workload(path.string()), DataError);
  CHECK_THROWS_WITH(read_astra_workload(path.string()), Contains("check the path"));
}
