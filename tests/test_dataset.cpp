// Datasets: synthetic determinism and shapes, CSV and IDX parsing with file:line errors,
// the every-10th hold-out, Fashion-MNIST from the Debian package, and the fingerprint.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <zlib.h>

#include "core/data/dataset.h"
#include "core/errors.h"
#include "temp_dir.h"
#include "param_diff.h"
#include "error_text.h"

namespace fs = std::filesystem;
using Catch::Contains;
using dsgd::DataError;
using dsgd::Dataset;
using dsgd::same_bits;
using dsgd::Task;
using dsgd::UsageError;
using dsgd::test::error_text;
using dsgd::test::TempDir;

namespace {

constexpr const char* kFashionDir = "/usr/share/datasets/fashion-mnist";

std::string data_error(const std::string& spec, Task task = Task::classification) {
  return error_text<DataError>([&] { dsgd::load_dataset(spec, {.task = task}); });
}
std::string usage_error(const std::string& spec, Task task = Task::classification) {
  return error_text<UsageError>([&] { dsgd::load_dataset(spec, {.task = task}); });
}

// An IDX file: magic 0x0000TTNN, big-endian u32 dims, then the bytes; gzip-compressed when
// gzip is set. `cut` drops that many bytes from the end.
void write_idx(const std::string& path, int type, const std::vector<uint32_t>& dims,
               const std::vector<uint8_t>& data, bool gzip = false, size_t cut = 0) {
  std::string bytes = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8)
      bytes.push_back(static_cast<char>(d >> shift));
  bytes.append(data.begin(), data.end());
  bytes.resize(bytes.size() - cut);
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
            static_cast<int>(bytes.size()));
    REQUIRE(gzclose(f) == Z_OK);
  } else {
    std::ofstream(path, std::ios::binary) << bytes;
  }
}

// n images of 2x3 pixels, pixel j of image i = (7 i + j) % 256; labels i % classes.
struct IdxPair {
  std::vector<uint8_t> pixels, labels;
};
IdxPair idx_data(int n, int classes) {
  IdxPair p;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < 6; ++j)
      p.pixels.push_back(static_cast<uint8_t>((7 * i + j) % 256));
    p.labels.push_back(static_cast<uint8_t>(i % classes));
  }
  return p;
}

}  // namespace

// ---- synthetic ----

TEST_CASE("synthetic defaults: shapes, labels, name", "[dataset]") {
  Dataset d = dsgd::load_dataset("synthetic", {});
  CHECK(d.name == "synthetic");
  CHECK(d.task == Task::classification);
  CHECK(d.features == 32);
  CHECK(d.classes == 10);
  CHECK(d.train.x.shape() == dsgd::Shape{8192, 32});
  CHECK(d.test.x.shape() == dsgd::Shape{2048, 32});
  CHECK(d.train.size() == 8192);
  REQUIRE(d.train.labels.size() == 8192);
  REQUIRE(d.test.labels.size() == 2048);
  CHECK(d.train.targets.empty());
  CHECK(std::all_of(d.train.labels.begin(), d.train.labels.end(),
                    [](int32_t l) { return l >= 0 && l < 10; }));
  // Uniform classes: each within 20% of 8192 / 10.
  for (int32_t c = 0; c < 10; ++c)
    CHECK(std::abs(std::count(d.train.labels.begin(), d.train.labels.end(), c) - 819) < 164);
  CHECK(std::all_of(d.train.x.span().begin(), d.train.x.span().end(),
                    [](float v) { return std::isfinite(v); }));
}

TEST_CASE("synthetic data depend only on their own parameters", "[dataset]") {
  Dataset a = dsgd::load_dataset("synthetic:train=64,test=16", {});
  Dataset b = dsgd::load_dataset("synthetic:train=64,test=16", {});
  CHECK(same_bits(a.train.x, b.train.x));
  CHECK(a.train.labels == b.train.labels);
  CHECK(dsgd::dataset_fingerprint(a) == dsgd::dataset_fingerprint(b));
  // Golden values: the generator is portable, so these hold on every platform and compiler.
  // If they change, saved experiments no longer reproduce: change them only on purpose.
  CHECK(dsgd::dataset_fingerprint(a) == 0xf7f555c8f0d66672ULL);
  CHECK(a.train.labels[0] == 5);
  CHECK(a.train.x.at(0, 0) == -0.462014019f);

  Dataset other_seed = dsgd::load_dataset("synthetic:train=64,test=16,seed=2", {});
  CHECK(dsgd::dataset_fingerprint(other_seed) != dsgd::dataset_fingerprint(a));
  CHECK_FALSE(same_bits(other_seed.train.x, a.train.x));

  // The test split is its own stream: more training data leave it unchanged.
  Dataset more = dsgd::load_dataset("synthetic:train=100,test=16", {});
  CHECK(same_bits(more.test.x, a.test.x));
  CHECK(more.test.labels == a.test.labels);
  CHECK(dsgd::load_dataset("synthetic", {}).name == "synthetic");
  CHECK(more.name == "synthetic:train=100,test=16");
}

TEST_CASE("synthetic options shape the data", "[dataset]") {
  Dataset d =
      dsgd::load_dataset("synthetic:train=100,test=20,features=5,classes=3,noise=0,seed=7", {});
  CHECK(d.train.x.shape() == dsgd::Shape{100, 5});
  CHECK(d.test.x.shape() == dsgd::Shape{20, 5});
  CHECK(d.classes == 3);
  CHECK(std::all_of(d.train.labels.begin(), d.train.labels.end(),
                    [](int32_t l) { return l >= 0 && l < 3; }));
  // Without noise every sample sits on one of the 3 classes x 3 blob centres.
  std::set<std::vector<float>> rows;
  for (int64_t i = 0; i < 100; ++i)
    rows.insert(std::vector<float>(d.train.x.data() + 5 * i, d.train.x.data() + 5 * i + 5));
  CHECK(rows.size() <= 9);
  CHECK(rows.size() >= 4);
}

TEST_CASE("synthetic regression follows a linear teacher", "[dataset]") {
  Dataset d = dsgd::load_dataset("synthetic:train=50,test=10,features=1,noise=0",
                                 {.task = Task::regression});
  CHECK(d.task == Task::regression);
  CHECK(d.classes == 1);
  CHECK(d.train.labels.empty());
  REQUIRE(d.train.targets.size() == 50);
  REQUIRE(d.test.targets.size() == 10);
  // With one feature and no noise, (x, target) points lie on one line t = w x + b.
  const auto& x = d.train.x;
  const auto& t = d.train.targets;
  int64_t j = 1;
  while (j < 50 && std::abs(x[j] - x[0]) < 0.1f)
    ++j;
  REQUIRE(j < 50);
  double w = (t[j] - t[0]) / (x[j] - x[0]);
  for (int64_t i = 0; i < 50; ++i)
    CHECK(t[i] == Approx(t[0] + w * (x[i] - x[0])).margin(1e-4));

  Dataset noisy = dsgd::load_dataset("synthetic:train=50,test=10", {.task = Task::regression});
  CHECK(noisy.features == 32);
  CHECK(dsgd::dataset_fingerprint(noisy) !=
        dsgd::dataset_fingerprint(dsgd::load_dataset("synthetic:train=50,test=10", {})));
}

TEST_CASE("synthetic options are checked", "[dataset]") {
  CHECK_THAT(
      usage_error("synthetic:foo=1"),
      Contains("unknown key 'foo'") && Contains("train, test, features, classes, noise, seed"));
  CHECK_THAT(usage_error("synthetic:train=abc"), Contains("train='abc'"));
  CHECK_THAT(usage_error("synthetic:train=0"), Contains("train='0'"));
  CHECK_THAT(usage_error("synthetic:test=-5"), Contains("test='-5'"));
  CHECK_THAT(usage_error("synthetic:classes=1"), Contains("classes='1'"));
  CHECK_THAT(usage_error("synthetic:features=2.5"), Contains("features='2.5'"));
  CHECK_THAT(usage_error("synthetic:noise=-1"), Contains("noise='-1'"));
  CHECK_THAT(usage_error("synthetic:noise=nan"), Contains("noise='nan'"));
  CHECK_THAT(usage_error("synthetic:seed=x"), Contains("seed='x'"));
  CHECK_THAT(usage_error("synthetic:train"), Contains("'train' is not key=value"));
  CHECK_THAT(usage_error("synthetic:train=100,"), Contains("'' is not key=value"));
  CHECK_THAT(usage_error("synthetic:train=100000000,features=1000"), Contains("too large"));
}

TEST_CASE("bad data specs list the valid forms", "[dataset]") {
  for (std::string spec : {"foo", "", "csv", "csv:", "csv:a,", "csv:a,b,c", "idx:a", "idx:a,b,c",
                           "idx:a,b,c,d,e", "fashion-mnist:"}) {
    INFO(spec);
    CHECK_THAT(usage_error(spec), Contains("data spec '" + spec + "'") &&
                                      Contains("synthetic[:key=value,...]") &&
                                      Contains("idx:IMAGES,LABELS"));
  }
  CHECK_THAT(usage_error("fashion-mnist", Task::regression), Contains("regression"));
  CHECK_THAT(usage_error("idx:a,b", Task::regression), Contains("regression"));
}

// ---- CSV ----

TEST_CASE("csv with one file holds out every 10th row", "[dataset]") {
  TempDir dir;
  std::string text = "# a comment\n\nx1, x2 ,x3,label\r\n";
  for (int i = 0; i < 25; ++i) {
    text += std::to_string(i) + "," + std::to_string(i * 0.5) + ",+1e-2," + std::to_string(i % 4);
    text += i % 3 ? "\n" : "\r\n";
    if (i == 7) text += "   \n# another comment\n";
  }
  std::string path = dir.write("data.csv", text);
  Dataset d = dsgd::load_dataset("csv:" + path, {});
  CHECK(d.name == "csv:" + path);
  CHECK(d.features == 3);
  CHECK(d.classes == 4);
  REQUIRE(d.train.size() == 23);
  REQUIRE(d.test.size() == 2);
  // Test rows are data rows 9 and 19; train keeps file order of the rest.
  CHECK(d.test.x.at(0, 0) == 9.0f);
  CHECK(d.test.x.at(1, 0) == 19.0f);
  CHECK(d.test.labels == std::vector<int32_t>{1, 3});
  std::vector<float> first_col;
  for (int64_t i = 0; i < d.train.size(); ++i)
    first_col.push_back(d.train.x.at(i, 0));
  std::vector<float> expected;
  for (int i = 0; i < 25; ++i)
    if (i % 10 != 9) expected.push_back(static_cast<float>(i));
  CHECK(first_col == expected);
  CHECK(d.train.x.at(3, 1) == 1.5f);
  CHECK(d.train.x.at(3, 2) == 0.01f);
  CHECK(d.train.labels[3] == 3);
}

TEST_CASE("a csv that starts with a UTF-8 byte order mark keeps its first row", "[dataset]") {
  TempDir dir;
  std::string text = "\xEF\xBB\xBF";  // what spreadsheets put first, with no header here
  for (int i = 0; i < 20; ++i)
    text += std::to_string(i) + ",1," + std::to_string(i % 2) + "\n";
  const Dataset d = dsgd::load_dataset("csv:" + dir.write("bom.csv", text), {});
  CHECK(d.train.size() + d.test.size() == 20);
  CHECK(d.train.x.at(0, 0) == 0.0f);
}

TEST_CASE("csv with train and test files", "[dataset]") {
  TempDir dir;
  std::string train = dir.write("train.csv", "1,2,0\n3,4,1\n5,6,2.0\n");
  std::string test = dir.write("test.csv", "a,b,c\n7,8,5\n");
  Dataset d = dsgd::load_dataset("csv:" + train + "," + test, {});
  CHECK(d.train.size() == 3);
  CHECK(d.test.size() == 1);
  CHECK(d.features == 2);
  CHECK(d.classes == 6);  // max label over both splits + 1
  CHECK(d.train.labels == std::vector<int32_t>{0, 1, 2});
  CHECK(d.test.x.at(0, 1) == 8.0f);

  std::string narrow = dir.write("narrow.csv", "7,1\n");
  CHECK_THAT(data_error("csv:" + train + "," + narrow),
             Contains(narrow + ":1: expected 3 fields (2 features + label) like '" + train +
                      "' line 1, found 2"));

  Dataset r = dsgd::load_dataset("csv:" + train + "," + test, {.task = Task::regression});
  CHECK(r.classes == 1);
  CHECK(r.train.labels.empty());
  CHECK(r.train.targets == std::vector<float>{0, 1, 2});
  CHECK(r.test.targets == std::vector<float>{5});
}

TEST_CASE("csv errors name file and line", "[dataset]") {
  TempDir dir;
  auto rows = [](int n) {
    std::string s;
    for (int i = 0; i < n; ++i)
      s += "1,2,3,4,0\n";
    return s;
  };
  auto csv = [&](const std::string& text) { return "csv:" + dir.write("data.csv", text); };
  std::string path = dir / "data.csv";

  CHECK_THAT(data_error(csv("a,b,c,d,label\n" + rows(15) + "1,2,3\n")),
             Contains(path + ":17: expected 5 fields (4 features + label) like line 1, found 3"));
  CHECK_THAT(data_error(csv(rows(8) + "1,2,abc,4,0\n")),
             Contains(path + ":9: field 3 'abc' is not a number"));
  CHECK_THAT(data_error(csv(rows(8) + "1,,3,4,0\n")),
             Contains(path + ":9: field 2 '' is not a number"));
  CHECK_THAT(data_error(csv(rows(3) + "1,nan,3,4,0\n")),
             Contains(path + ":4: field 2 is NaN; clean the data"));
  CHECK_THAT(data_error(csv(rows(3) + "1,2,-inf,4,0\n")),
             Contains(path + ":4: field 3 is infinite"));
  CHECK_THAT(data_error(csv(rows(3) + "1,2,3,1e39,0\n")),
             Contains(path + ":4: field 4 '1e39' is out of float32 range"));
  CHECK_THAT(data_error(csv(rows(11) + "1,2,3,4,2.5\n")),
             Contains(path + ":12: label '2.5' is not a class index (an integer >= 0)"));
  CHECK_THAT(data_error(csv(rows(11) + "1,2,3,4,-1\n")),
             Contains(path + ":12: label '-1' is not a class index"));
  CHECK_THAT(data_error(csv(rows(11) + "1,2,3,4,cat\n")),
             Contains(path + ":12: label 'cat' is not a class index"));
  CHECK_THAT(data_error(csv(rows(11) + "1,2,3,4,70000\n")),
             Contains(path + ":12: label '70000' is too large"));
  CHECK_THAT(data_error(csv(rows(11) + "1,2,3,4,nan\n"), Task::regression),
             Contains(path + ":12: field 5 is NaN"));
  CHECK_THAT(data_error(csv("")), Contains(path + ": no data rows"));
  CHECK_THAT(data_error(csv("# only a comment\nf1,f2,label\n\n")),
             Contains(path + ": no data rows"));
  CHECK_THAT(data_error(csv("5\n6\n")), Contains(path + ":1: found 1 field"));
  CHECK_THAT(data_error(csv(rows(9))),
             Contains(path + ": 9 data rows") && Contains("csv:TRAIN,TEST"));
  CHECK_THAT(data_error("csv:" + (dir / "missing.csv")),
             Contains("cannot read '" + (dir / "missing.csv") + "'"));
  // A header is recognised on the first line only: later text is an error, not a header.
  CHECK_THAT(data_error(csv(rows(2) + "a,b,c,d,e\n" + rows(10))),
             Contains(path + ":3: field 1 'a' is not a number"));

  // Regression accepts any finite target; labels stay empty.
  Dataset r =
      dsgd::load_dataset(csv(rows(9) + "1,2,3,4,-2.75\n" + rows(5)), {.task = Task::regression});
  CHECK(r.test.targets == std::vector<float>{-2.75f});
}

// ---- IDX ----

TEST_CASE("idx with four files, gzip or plain", "[dataset]") {
  TempDir dir;
  IdxPair train = idx_data(12, 5), test = idx_data(4, 3);
  for (bool gzip : {false, true}) {
    INFO("gzip " << gzip);
    std::string s = gzip ? ".gz" : "";
    write_idx(dir / ("ti" + s), 0x08, {12, 2, 3}, train.pixels, gzip);
    write_idx(dir / ("tl" + s), 0x08, {12}, train.labels, gzip);
    write_idx(dir / ("vi" + s), 0x08, {4, 2, 3}, test.pixels, gzip);
    write_idx(dir / ("vl" + s), 0x08, {4}, test.labels, gzip);
  }
  auto spec = [&](const std::string& s) {
    return "idx:" + (dir / ("ti" + s)) + "," + (dir / ("tl" + s)) + "," + (dir / ("vi" + s)) + "," +
           (dir / ("vl" + s));
  };
  Dataset d = dsgd::load_dataset(spec(""), {});
  Dataset z = dsgd::load_dataset(spec(".gz"), {});
  CHECK(d.name == "idx:" + (dir / "ti"));
  CHECK(d.features == 6);
  CHECK(d.classes == 5);
  CHECK(d.train.x.shape() == dsgd::Shape{12, 6});
  CHECK(d.test.x.shape() == dsgd::Shape{4, 6});
  CHECK(d.train.x.at(11, 5) == static_cast<float>((7 * 11 + 5) % 256) / 255.0f);
  CHECK(d.test.labels == std::vector<int32_t>{0, 1, 2, 0});
  CHECK(same_bits(d.train.x, z.train.x));
  CHECK(dsgd::dataset_fingerprint(d) == dsgd::dataset_fingerprint(z));
}

TEST_CASE("idx with two files holds out every 10th sample", "[dataset]") {
  TempDir dir;
  IdxPair p = idx_data(25, 10);
  write_idx(dir / "i", 0x08, {25, 6}, p.pixels);
  write_idx(dir / "l", 0x08, {25}, p.labels);
  Dataset d = dsgd::load_dataset("idx:" + (dir / "i") + "," + (dir / "l"), {});
  REQUIRE(d.train.size() == 23);
  REQUIRE(d.test.size() == 2);
  CHECK(d.test.labels == std::vector<int32_t>{9, 9});
  CHECK(d.test.x.at(1, 0) == static_cast<float>(7 * 19) / 255.0f);
  CHECK(d.train.x.at(9, 0) == static_cast<float>(7 * 10) / 255.0f);
  CHECK(d.classes == 10);
}

TEST_CASE("idx errors name the file", "[dataset]") {
  TempDir dir;
  IdxPair p = idx_data(10, 10);
  write_idx(dir / "i", 0x08, {10, 2, 3}, p.pixels);
  write_idx(dir / "l", 0x08, {10}, p.labels);
  auto pair = [&](const std::string& images, const std::string& labels) {
    return "idx:" + (dir / images) + "," + (dir / labels);
  };
  REQUIRE(dsgd::load_dataset(pair("i", "l"), {}).train.size() == 9);

  CHECK_THAT(data_error(pair("l", "l")),
             Contains(dir / "l" + ": not an IDX file: magic 0x00000801 (expected 0x00000803 for "
                                  "images)"));
  CHECK_THAT(data_error(pair("i", "i")),
             Contains(dir / "i" + ": not an IDX file: magic 0x00000803 (expected 0x00000801 for "
                                  "labels)"));
  write_idx(dir / "cut", 0x08, {10, 2, 3}, p.pixels, true, 1);
  CHECK_THAT(data_error(pair("cut", "l")),
             Contains(dir / "cut" + ": truncated: expected 60 bytes of data, found 59"));
  write_idx(dir / "cut-header", 0x08, {10, 2, 3}, {}, false, 6);
  CHECK_THAT(data_error(pair("cut-header", "l")), Contains(dir / "cut-header" + ": truncated"));
  std::string png = dir.write("png", "\x89PNG\r\n\x1a\n....");
  CHECK_THAT(data_error(pair("png", "l")), Contains(png + ": not an IDX file: magic 0x89504E47"));
  dir.write("empty", "");
  CHECK_THAT(data_error(pair("empty", "l")), Contains(dir / "empty" + ": not an IDX file"));
  write_idx(dir / "float", 0x0D, {10, 2, 3}, p.pixels);
  CHECK_THAT(data_error(pair("float", "l")),
             Contains(dir / "float" + ": IDX element type 0x0D is not supported"));
  std::vector<uint8_t> long_data = p.pixels;
  long_data.push_back(0);
  write_idx(dir / "long", 0x08, {10, 2, 3}, long_data);
  CHECK_THAT(data_error(pair("long", "l")), Contains(dir / "long" + ": has bytes after"));
  write_idx(dir / "l9", 0x08, {9}, std::vector<uint8_t>(p.labels.begin(), p.labels.end() - 1));
  CHECK_THAT(data_error(pair("i", "l9")), Contains("'" + (dir / "i") + "' holds 10 images but '" +
                                                   (dir / "l9") + "' holds 9 labels"));
  CHECK_THAT(data_error(pair("missing", "l")), Contains("cannot read '" + (dir / "missing") + "'"));
  write_idx(dir / "v", 0x08, {2, 5}, std::vector<uint8_t>(10, 1));
  write_idx(dir / "vl", 0x08, {2}, {0, 1});
  CHECK_THAT(
      data_error(pair("i", "l") + "," + (dir / "v") + "," + (dir / "vl")),
      Contains("'" + (dir / "v") + "' has 5 values per image but '" + (dir / "i") + "' has 6"));
  write_idx(dir / "i5", 0x08, {5, 6}, std::vector<uint8_t>(30, 1));
  write_idx(dir / "l5", 0x08, {5}, {0, 1, 2, 3, 4});
  CHECK_THAT(data_error(pair("i5", "l5")), Contains("holds 5 images") && Contains("at least 10"));
}

// ---- Fashion-MNIST (the dataset-fashion-mnist package must be installed) ----

TEST_CASE("fashion-mnist loads 60000 + 10000 images", "[dataset][fashion]") {
  REQUIRE(fs::is_directory(kFashionDir));  // installed by our setup; a missing one is a failure
  Dataset d = dsgd::load_dataset("fashion-mnist", {});
  CHECK(d.name == "fashion-mnist");
  CHECK(d.features == 784);
  CHECK(d.classes == 10);
  CHECK(d.train.x.shape() == dsgd::Shape{60000, 784});
  CHECK(d.test.x.shape() == dsgd::Shape{10000, 784});
  REQUIRE(d.train.labels.size() == 60000);
  REQUIRE(d.test.labels.size() == 10000);
  auto [lo, hi] = std::minmax_element(d.train.x.span().begin(), d.train.x.span().end());
  CHECK(*lo == 0.0f);
  CHECK(*hi == 1.0f);
  for (int32_t c = 0; c < 10; ++c)  // the test set is balanced
    CHECK(std::count(d.test.labels.begin(), d.test.labels.end(), c) == 1000);
  CHECK(std::all_of(d.train.labels.begin(), d.train.labels.end(),
                    [](int32_t l) { return l >= 0 && l < 10; }));
  CHECK(d.train.labels[0] == 9);  // the first training image is an ankle boot

  Dataset again = dsgd::load_dataset(std::string("fashion-mnist:") + kFashionDir, {});
  CHECK(dsgd::dataset_fingerprint(again) == dsgd::dataset_fingerprint(d));
}

TEST_CASE("fashion-mnist says how to install it when missing", "[dataset][fashion]") {
  TempDir dir;
  CHECK_THAT(data_error("fashion-mnist:" + (dir / "nope")),
             Contains(dir / "nope") && Contains("apt-get install dataset-fashion-mnist") &&
                 Contains("fashion-mnist:DIR"));
  for (const char* name :
       {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz"})
    fs::create_symlink(fs::path(kFashionDir) / name, dir.path() / name);
  CHECK_THAT(data_error("fashion-mnist:" + dir.path().string()),
             Contains(dir / "t10k-labels-idx1-ubyte.gz") &&
                 Contains("apt-get install dataset-fashion-mnist"));
  // Labels that cannot be Fashion-MNIST's are refused.
  IdxPair p = idx_data(10000, 12);
  write_idx(dir / "t10k-labels-idx1-ubyte", 0x08, {10000}, p.labels);
  CHECK_THAT(data_error("fashion-mnist:" + dir.path().string()),
             Contains(dir / "t10k-labels-idx1-ubyte" + ": label 10 at index 10 is out of range"));
}

// ---- fingerprint ----

TEST_CASE("dataset fingerprint sees every value", "[dataset]") {
  Dataset a = dsgd::load_dataset("synthetic:train=40,test=10", {});
  uint64_t fp = dsgd::dataset_fingerprint(a);
  Dataset b = a;
  b.name = "renamed";
  CHECK(dsgd::dataset_fingerprint(b) == fp);  // contents only
  b.train.labels[39] = (b.train.labels[39] + 1) % 10;
  CHECK(dsgd::dataset_fingerprint(b) != fp);
  b = a;
  b.test.x[0] = std::nextafter(b.test.x[0], 10.0f);
  CHECK(dsgd::dataset_fingerprint(b) != fp);
  b = a;
  b.classes = 11;
  CHECK(dsgd::dataset_fingerprint(b) != fp);
  b = a;
  std::swap(b.train, b.test);
  CHECK(dsgd::dataset_fingerprint(b) != fp);
}
