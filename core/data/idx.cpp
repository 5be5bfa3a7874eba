// IDX files (the MNIST format, http://yann.lecun.com/exdb/mnist/) and Fashion-MNIST.
// Layout: magic 0x0000TTNN (TT = element type, NN = number of dimensions), NN big-endian
// u32 sizes, then the elements in row-major order. zlib's gzread reads gzip-compressed
// and plain files alike, so "x.gz" and "x" go through the same code.
#include <filesystem>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <zlib.h>

#include "core/data/loaders.h"
#include "core/errors.h"
#include "core/io/input_file.h"

namespace dsgd::data {
namespace {

constexpr int kTypeUbyte = 0x08;
constexpr int64_t kMaxBytes = int64_t{1} << 36;  // 64 GiB: rejects absurd headers early
constexpr size_t kChunkBytes = size_t{1} << 20;
constexpr const char* kFashionFiles[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                          "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};

enum class IdxKind { images, labels };

struct IdxArray {
  std::vector<int64_t> dims;  // dims[0] = samples
  std::vector<uint8_t> data;
};

struct GzClose {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      throw DataError(
          fmt::format("cannot read '{}': No such file or directory; check the path", path));
    if (std::filesystem::is_directory(path, ec))
      throw DataError(fmt::format("cannot read '{}': it is a directory; pass a file", path));
    check_input_file(path, 4 * kGiB, "an IDX file");  // gzopen would block on a FIFO
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_)
      throw DataError(fmt::format("cannot read '{}': {}; check its permissions", path,
                                  std::generic_category().message(errno)));
  }

  // Reads up to n bytes, appending to out; returns how many were read (fewer only at EOF).
  size_t read(std::vector<uint8_t>& out, size_t n) {
    size_t done = 0;
    while (done < n) {
      size_t old = out.size();
      auto want = static_cast<unsigned>(std::min(kChunkBytes, n - done));
      out.resize(old + want);
      int got = gzread(file_.get(), out.data() + old, want);
      if (got < 0) {
        int code = 0;
        const char* msg = gzerror(file_.get(), &code);
        throw DataError(fmt::format("{}: corrupt gzip data ({}); download the file again", path_,
                                    msg ? msg : "unknown error"));
      }
      out.resize(old + static_cast<size_t>(got));
      done += static_cast<size_t>(got);
      if (static_cast<unsigned>(got) < want) break;
    }
    return done;
  }

 private:
  std::string path_;
  std::unique_ptr<gzFile_s, GzClose> file_;
};

IdxArray read_idx(const std::string& path, IdxKind kind) {
  GzReader in(path);
  std::vector<uint8_t> head;
  const char* what = kind == IdxKind::images ? "images" : "labels";
  uint32_t expected_magic = kind == IdxKind::images ? 0x00000803 : 0x00000801;
  if (in.read(head, 4) < 4)
    throw DataError(fmt::format(
        "{}: not an IDX file: shorter than its 4-byte magic number (expected 0x{:08X} for {})",
        path, expected_magic, what));
  uint32_t magic = (uint32_t{head[0]} << 24) | (uint32_t{head[1]} << 16) |
                   (uint32_t{head[2]} << 8) | uint32_t{head[3]};
  int type = head[2], ndim = head[3];
  bool dims_ok = kind == IdxKind::images ? ndim >= 2 : ndim == 1;
  if (head[0] != 0 || head[1] != 0 || !dims_ok)
    throw DataError(fmt::format("{}: not an IDX file: magic 0x{:08X} (expected 0x{:08X} for {})",
                                path, magic, expected_magic, what));
  if (type != kTypeUbyte)
    throw DataError(fmt::format(
        "{}: IDX element type 0x{:02X} is not supported; store {} as unsigned bytes (0x08)", path,
        type, what));

  head.clear();
  if (in.read(head, 4 * static_cast<size_t>(ndim)) < 4 * static_cast<size_t>(ndim))
    throw DataError(
        fmt::format("{}: truncated: the header declares {} dimensions, but the file "
                    "ends before their sizes",
                    path, ndim));
  IdxArray a;
  int64_t total = 1;
  for (int i = 0; i < ndim; ++i) {
    const uint8_t* p = &head[4 * i];
    int64_t d = (int64_t{p[0]} << 24) | (int64_t{p[1]} << 16) | (int64_t{p[2]} << 8) | p[3];
    a.dims.push_back(d);
    total = (d == 0 || total <= kMaxBytes / d) ? total * d : kMaxBytes + 1;
  }
  if (total > kMaxBytes)
    throw DataError(
        fmt::format("{}: the header declares more than {} bytes of data; is this "
                    "really an IDX file?",
                    path, kMaxBytes));
  // Grow with the data actually read (doubling from one chunk), so a lying header cannot
  // make us allocate much: a 12-byte file that declares 256 MiB reserves 1 MiB.
  a.data.reserve(static_cast<size_t>(std::min<int64_t>(total, kChunkBytes)));
  size_t found = in.read(a.data, static_cast<size_t>(total));
  if (static_cast<int64_t>(found) < total)
    throw DataError(
        fmt::format("{}: truncated: expected {} bytes of data, found {}", path, total, found));
  std::vector<uint8_t> extra;
  if (in.read(extra, 1) != 0)
    throw DataError(
        fmt::format("{}: has bytes after the {} bytes of data its header declares; "
                    "the file is corrupt or not IDX",
                    path, total));
  return a;
}

// Reads one images file and one labels file into a Split with x scaled to [0, 1].
Split read_pair(const std::string& images_path, const std::string& labels_path) {
  IdxArray images = read_idx(images_path, IdxKind::images);
  IdxArray labels = read_idx(labels_path, IdxKind::labels);
  int64_t n = images.dims[0];
  if (labels.dims[0] != n)
    throw DataError(
        fmt::format("'{}' holds {} images but '{}' holds {} labels; pass matching "
                    "files",
                    images_path, n, labels_path, labels.dims[0]));
  if (images.data.empty())
    throw DataError(fmt::format("'{}' holds no pixels (shape {}); pass a non-empty file",
                                images_path, shape_str(images.dims)));
  int64_t d = static_cast<int64_t>(images.data.size()) / n;  // the product of dims[1..]
  Split s;
  s.x = Tensor({n, d});
  float* x = s.x.data();
  for (size_t i = 0; i < images.data.size(); ++i)
    x[i] = static_cast<float>(images.data[i]) / 255.0f;
  s.labels.assign(labels.data.begin(), labels.data.end());
  return s;
}

int64_t row_width(const Split& s) {
  return s.x.dim(1);
}

}  // namespace

Dataset load_idx(const std::vector<std::string>& paths) {
  Dataset ds;
  ds.name = "idx:" + paths[0];
  ds.task = Task::classification;
  Split train = read_pair(paths[0], paths[1]);
  if (paths.size() == 4) {
    ds.train = std::move(train);
    ds.test = read_pair(paths[2], paths[3]);
    if (row_width(ds.test) != row_width(ds.train))
      throw DataError(
          fmt::format("'{}' has {} values per image but '{}' has {}; pass test "
                      "images of the same size as the training images",
                      paths[2], row_width(ds.test), paths[0], row_width(ds.train)));
  } else {
    if (train.size() < 10)
      throw DataError(
          fmt::format("'{}' holds {} images; holding out every 10th one for testing "
                      "needs at least 10, or pass TEST_IMAGES,TEST_LABELS too",
                      paths[0], train.size()));
    hold_out_every_10th(train, ds.train, ds.test);
  }
  ds.features = row_width(ds.train);
  ds.classes = count_classes(ds.train, ds.test);
  return ds;
}

Dataset load_fashion_mnist(const std::string& dir) {
  constexpr const char* kInstall =
      "install it with `apt-get install dataset-fashion-mnist` or pass fashion-mnist:DIR";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw DataError(fmt::format("fashion-mnist: directory '{}' not found; {}", dir, kInstall));
  std::vector<std::string> paths;
  for (const char* name : kFashionFiles) {
    std::filesystem::path base = std::filesystem::path(dir) / name;
    std::string gz = base.string() + ".gz";
    if (std::filesystem::exists(gz, ec))
      paths.push_back(gz);
    else if (std::filesystem::exists(base, ec))
      paths.push_back(base.string());
    else
      throw DataError(fmt::format("fashion-mnist: '{}' not found; {}", gz, kInstall));
  }
  Dataset ds = load_idx(paths);
  ds.name = "fashion-mnist";
  for (int split = 0; split < 2; ++split) {
    const std::vector<int32_t>& labels = split == 0 ? ds.train.labels : ds.test.labels;
    for (size_t i = 0; i < labels.size(); ++i)
      if (labels[i] >= 10)
        throw DataError(
            fmt::format("{}: label {} at index {} is out of range; Fashion-MNIST has "
                        "10 classes, so this is not a Fashion-MNIST file",
                        paths[2 * split + 1], labels[i], i));
  }
  ds.classes = 10;
  return ds;
}

}  // namespace dsgd::data
