// .npz load/save: round trips bit for bit, NumPy-written fixtures load, and every bad input
// fails with a DataError naming the file and the entry. Fixtures: tests/data/npz/ (made by
// make_fixtures.py there; named *.npz.fixture because .gitignore ignores *.npz).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include <zip.h>

#include "core/errors.h"
#include "core/io/npz.h"
#include "temp_dir.h"
#include "zip_file.h"
#include "param_diff.h"
#include "error_text.h"

namespace fs = std::filesystem;
using Catch::Contains;
using dsgd::NamedTensor;
using dsgd::same_bits;
using dsgd::Tensor;
using dsgd::test::error_text;
using dsgd::test::make_zip;
using dsgd::test::TempDir;
using dsgd::test::write_file;

namespace {

std::string npz_fixture(const std::string& name) {
  return std::string(DSGD_SOURCE_DIR) + "/tests/data/npz/" + name + ".npz.fixture";
}

std::string zip_entry(const std::string& path, const std::string& name, int* method = nullptr) {
  int err = 0;
  zip_t* za = zip_open(path.c_str(), ZIP_RDONLY, &err);
  REQUIRE(za != nullptr);
  zip_stat_t st;
  REQUIRE(zip_stat(za, name.c_str(), 0, &st) == 0);
  if (method) *method = st.comp_method;
  std::string bytes(st.size, '\0');
  zip_file_t* f = zip_fopen(za, name.c_str(), 0);
  REQUIRE(f != nullptr);
  REQUIRE(zip_fread(f, bytes.data(), st.size) == static_cast<zip_int64_t>(st.size));
  zip_fclose(f);
  zip_discard(za);
  return bytes;
}

std::vector<NamedTensor> sample_tensors() {
  float nan = std::numeric_limits<float>::quiet_NaN();
  float denormal = std::numeric_limits<float>::denorm_min();
  float inf = std::numeric_limits<float>::infinity();
  std::vector<float> w(12);
  for (int i = 0; i < 12; ++i)
    w[i] = static_cast<float>(i) * 0.1f - 0.55f;
  // Deliberately not alphabetical: the archive must keep this order.
  return {{"layers.1.weight", Tensor({3, 4}, w)},
          {"layers.1.bias", Tensor({3}, {-0.0f, denormal, 1e30f})},
          {"layers.0.weight", Tensor({2, 1, 3}, {nan, inf, -inf, 1, 2, 3})},
          {"scalar", Tensor(dsgd::Shape{}, std::vector<float>{42.5f})},
          {"empty", Tensor({0, 5})}};
}

}  // namespace

TEST_CASE("npz round trip keeps names, order, shapes and bits", "[npz]") {
  TempDir dir;
  std::string path = dir / "params.npz";
  std::vector<NamedTensor> in = sample_tensors();
  dsgd::write_npz(path, in);
  std::vector<NamedTensor> out = dsgd::read_npz(path);
  REQUIRE(out.size() == in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    INFO(in[i].name);
    CHECK(out[i].name == in[i].name);
    CHECK(same_bits(out[i].tensor, in[i].tensor));
  }
  CHECK(dsgd::test::entry_names(dir.path()) == std::set<std::string>{"params.npz"});

  // Same tensors, same bytes: saved files can be compared with cmp or hashed.
  dsgd::write_npz(dir / "again.npz", in);
  CHECK(dsgd::test::read_text(path) == dsgd::test::read_text(dir / "again.npz"));

  // Overwriting an existing file replaces it.
  dsgd::write_npz(path, {{"only", Tensor({2}, {1, 2})}});
  REQUIRE(dsgd::read_npz(path).size() == 1);
}

TEST_CASE("npz entries are stored NPY 1.0 arrays with 64-byte aligned headers", "[npz]") {
  TempDir dir;
  std::string path = dir / "params.npz";
  dsgd::write_npz(path, sample_tensors());
  int method = -1;
  std::string npy = zip_entry(path, "layers.1.weight.npy", &method);
  CHECK(method == ZIP_CM_STORE);
  REQUIRE(npy.size() >= 10);
  CHECK(npy.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  size_t header_len =
      static_cast<unsigned char>(npy[8]) | (static_cast<unsigned char>(npy[9]) << 8);
  CHECK((10 + header_len) % 64 == 0);
  std::string header = npy.substr(10, header_len);
  CHECK(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 0) == 0);
  CHECK(header.back() == '\n');
  CHECK(npy.size() == 10 + header_len + 12 * 4);
  // The data are little-endian float32: -0.55f first.
  float first;
  std::memcpy(&first, npy.data() + 10 + header_len, 4);
  CHECK(first == -0.55f);

  CHECK_THAT(zip_entry(path, "layers.1.bias.npy"), Contains("'shape': (3,), }"));
  CHECK_THAT(zip_entry(path, "scalar.npy"), Contains("'shape': (), }"));
  CHECK_THAT(zip_entry(path, "empty.npy"), Contains("'shape': (0, 5), }"));
}

TEST_CASE("npz files written by numpy load", "[npz]") {
  for (std::string name : {"numpy_savez", "numpy_savez_compressed"}) {
    INFO(name);
    std::vector<NamedTensor> t = dsgd::read_npz(npz_fixture(name));
    REQUIRE(t.size() == 4);
    CHECK(t[0].name == "layers.0.weight");
    CHECK(t[1].name == "layers.0.bias");
    CHECK(t[2].name == "scalar");
    CHECK(t[3].name == "as_f64");
    REQUIRE(t[0].tensor.shape() == dsgd::Shape{3, 4});
    for (int i = 0; i < 12; ++i)
      CHECK(t[0].tensor[i] == static_cast<float>(i) / 8 - 0.5f);
    CHECK(t[1].tensor.shape() == dsgd::Shape{3});
    CHECK(t[1].tensor.span()[0] == 1.5f);
    CHECK(t[1].tensor.span()[2] == 0.25f);
    CHECK(t[2].tensor.shape().empty());
    REQUIRE(t[2].tensor.numel() == 1);
    CHECK(t[2].tensor[0] == 2.5f);
    // float64 is narrowed exactly as numpy's astype(np.float32) would.
    REQUIRE(t[3].tensor.shape() == dsgd::Shape{2, 2});
    CHECK(t[3].tensor[0] == static_cast<float>(1.0 / 3));
    CHECK(t[3].tensor[1] == static_cast<float>(-2.0 / 3));
    CHECK(t[3].tensor[2] == static_cast<float>(1e-3));
    CHECK(t[3].tensor[3] == 4.0f);
  }
}

TEST_CASE("npz arrays of the wrong kind are refused with the entry named", "[npz]") {
  std::string path = npz_fixture("bad_int64");
  std::string msg = error_text<dsgd::DataError>([&] { dsgd::read_npz(path); });
  CHECK_THAT(
      msg, Contains(path + ": entry 'layers.0.weight' has dtype '<i8'") && Contains("np.float32"));

  path = npz_fixture("bad_fortran");
  msg = error_text<dsgd::DataError>([&] { dsgd::read_npz(path); });
  CHECK_THAT(msg, Contains(path + ": entry 'layers.0.weight'") && Contains("Fortran order"));

  path = npz_fixture("bad_bigendian");
  msg = error_text<dsgd::DataError>([&] { dsgd::read_npz(path); });
  CHECK_THAT(msg, Contains(path + ": entry 'layers.0.weight'") && Contains("big-endian"));
}

TEST_CASE("npz files that are not archives of arrays are refused", "[npz]") {
  TempDir dir;
  std::string path = dir / "missing.npz";
  CHECK_THAT(error_text<dsgd::DataError>([&] { dsgd::read_npz(path); }),
             Contains("cannot read '" + path + "'") && Contains("No such file"));

  path = dir / "text.npz";
  write_file(path, "layers.0.weight,1,2,3\nthis is not a zip file\n");
  CHECK_THAT(error_text<dsgd::DataError>([&] { dsgd::read_npz(path); }),
             Contains(path + ": not a .npz archive"));

  path = dir / "empty.npz";
  write_file(path, "");
  CHECK_THAT(error_text<dsgd::DataError>([&] { dsgd::read_npz(path); }),
             Contains(path + ": the file is empty"));

  // Cut a real archive in half: the central directory is gone.
  std::string good = dsgd::test::read_text(npz_fixture("numpy_savez"));
  path = dir / "cut.npz";
  write_file(path, good.substr(0, good.size() / 2));
  CHECK_THAT(error_text<dsgd::DataError>([&] { dsgd::read_npz(path); }), Contains(path));
}

TEST_CASE("npz entries with broken .npy contents are refused", "[npz]") {
  TempDir dir;
  std::string npy = dsgd::encode_npy(Tensor({3, 4}, 1.0f));
  std::string path = dir / "bad.npz";
  auto error_for = [&](const std::string& entry, const std::string& bytes) {
    make_zip(path, {{"layers.0.bias.npy", dsgd::encode_npy(Tensor({2}))}, {entry, bytes}});
    return error_text<dsgd::DataError>([&] { dsgd::read_npz(path); });
  };

  std::string where = path + ": entry 'layers.0.weight'";
  CHECK_THAT(
      error_for("layers.0.weight.npy", npy.substr(0, npy.size() - 3)),
      Contains(where + " is truncated: expected 48 bytes of data for shape (3, 4), found 45"));
  CHECK_THAT(error_for("layers.0.weight.npy", npy + "xxxx"), Contains(where + " has 52 bytes"));
  CHECK_THAT(error_for("layers.0.weight.npy", npy.substr(0, 30)),
             Contains(where + " is truncated inside its .npy header"));
  CHECK_THAT(error_for("layers.0.weight.npy", "PK not numpy at all"),
             Contains(where + " is not a .npy array"));

  auto with_header = [&](std::string from, std::string to) {
    std::string bad = npy;
    size_t at = bad.find(from);
    REQUIRE(at != std::string::npos);
    REQUIRE(from.size() == to.size());  // keep the header length and the alignment
    bad.replace(at, from.size(), to);
    return bad;
  };
  CHECK_THAT(error_for("layers.0.weight.npy", with_header("'shape'", "'shapf'")),
             Contains(where + " has a malformed .npy header"));
  CHECK_THAT(error_for("layers.0.weight.npy", with_header("(3, 4)", "(3, x)")),
             Contains(where + " has a malformed .npy header"));
  CHECK_THAT(error_for("layers.0.weight.npy", with_header("False", "Fals ")),
             Contains(where + " has a malformed .npy header"));
  CHECK_THAT(error_for("layers.0.weight.npy", with_header("'<f4'", "'<f2'")),
             Contains(where + " has dtype '<f2'"));
  CHECK_THAT(error_for("layers.0.weight.npy", with_header("}", ")")),
             Contains(where + " has a malformed .npy header"));
  CHECK_THAT(error_for("notes.txt", "hello"),
             Contains(path + ": entry 'notes.txt' is not a .npy array"));
  // libzip will not add a duplicate name, so write "...np_" and patch the bytes afterwards.
  make_zip(path, {{"layers.0.bias.npy", npy}, {"layers.0.bias.np_", npy}});
  std::string bytes = dsgd::test::read_text(path);
  for (size_t at; (at = bytes.find("layers.0.bias.np_")) != std::string::npos;)
    bytes.replace(at, 17, "layers.0.bias.npy");
  write_file(path, bytes);
  CHECK_THAT(error_text<dsgd::DataError>([&] { dsgd::read_npz(path); }),
             Contains(path + ": entry 'layers.0.bias' appears twice"));
}

TEST_CASE("npz writes that fail leave the directory unchanged", "[npz]") {
  TempDir dir;
  std::string path = dir / "params.npz";
  dsgd::write_npz(path, {{"w", Tensor({2}, {1, 2})}});
  std::string before = dsgd::test::read_text(path);

  std::string missing = dir / "no-such-dir/params.npz";
  CHECK_THAT(error_text<dsgd::DataError>([&] { dsgd::write_npz(missing, sample_tensors()); }),
             Contains("cannot write '" + missing + "'") && Contains("No such file or directory"));

  CHECK_THAT(error_text<dsgd::UsageError>([&] {
               dsgd::write_npz(path, {{"w", Tensor({1})}, {"w", Tensor({1})}});
             }),
             Contains(path) && Contains("'w'"));
  CHECK_THROWS_AS(dsgd::write_npz(path, {{"", Tensor({1})}}), dsgd::UsageError);

  // The destination is a directory: everything is written, then the final rename fails.
  fs::create_directory(dir.path() / "taken.npz");
  CHECK_THROWS_AS(dsgd::write_npz(dir / "taken.npz", sample_tensors()), dsgd::DataError);

  CHECK(dsgd::test::entry_names(dir.path()) == std::set<std::string>{"params.npz", "taken.npz"});
  CHECK(dsgd::test::read_text(path) == before);
}
