// NPY format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
// "\x93NUMPY" major minor, header length (u16 LE for 1.0, u32 LE for 2.0/3.0), then a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with
// spaces and a final '\n' so that the data start at a multiple of 64 bytes.
#include <algorithm>
#include "core/io/npz.h"

#include <bit>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <zip.h>
#include <zlib.h>

#include "core/errors.h"
#include "core/io/input_file.h"
#include "core/io/atomic_file.h"

namespace dsgd {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
constexpr size_t kAlign = 64;
// DOS date of 1980-01-01 (the zip epoch), as np.savez writes it: saved files then depend
// only on the tensors, not on when or in which time zone they were written.
constexpr zip_uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr zip_uint16_t kDosTime = 0;

template <typename T>
T load_le(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) {
    auto* b = reinterpret_cast<unsigned char*>(&v);
    for (size_t i = 0; i < sizeof v / 2; ++i)
      std::swap(b[i], b[sizeof v - 1 - i]);
  }
  return v;
}

template <typename T>
void store_le(char* p, T v) {
  if constexpr (std::endian::native == std::endian::big) {
    auto* b = reinterpret_cast<unsigned char*>(&v);
    for (size_t i = 0; i < sizeof v / 2; ++i)
      std::swap(b[i], b[sizeof v - 1 - i]);
  }
  std::memcpy(p, &v, sizeof v);
}

// ---- NPY header: a tiny parser for the one dict literal NumPy writes ----

struct NpyHeader {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<Shape> shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& where) : s_(text), where_(where) {}

  NpyHeader parse() {
    NpyHeader h;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = parse_string();
      expect(':');
      skip_space();
      if (key == "descr" && !h.descr) {
        if (peek() != '\'' && peek() != '"')
          fail("has a structured dtype; save plain float32 arrays (np.float32)");
        h.descr = parse_string();
      } else if (key == "fortran_order" && !h.fortran_order) {
        h.fortran_order = parse_bool();
      } else if (key == "shape" && !h.shape) {
        h.shape = parse_shape();
      } else {
        malformed(fmt::format("unexpected key '{}'", key));
      }
      skip_space();
      if (peek() == ',')
        ++pos_;
      else if (peek() != '}')
        malformed("expected ',' or '}'");
    }
    ++pos_;
    skip_space();
    if (pos_ != s_.size()) malformed("text after the closing '}'");
    if (!h.descr || !h.fortran_order || !h.shape)
      malformed("it needs the keys 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw DataError(fmt::format("{} {}", where_, what));
  }
  [[noreturn]] void malformed(const std::string& why) {
    fail(fmt::format("has a malformed .npy header ({}); save it again with np.save/np.savez", why));
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n'))
      ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) malformed(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"') malformed("expected a quoted string");
    size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) malformed("unterminated string");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  bool parse_bool() {
    for (bool value : {true, false}) {
      std::string_view word = value ? "True" : "False";
      if (s_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    malformed("'fortran_order' must be True or False");
  }
  Shape parse_shape() {
    expect('(');
    Shape shape;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      int64_t v = 0;
      size_t start = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) malformed("dimension too large");
        v = v * 10 + (s_[pos_++] - '0');
      }
      if (pos_ == start) malformed("'shape' must be a tuple of non-negative integers");
      shape.push_back(v);
      skip_space();
      if (peek() == ',')
        ++pos_;
      else if (peek() != ')')
        malformed("expected ',' or ')' in 'shape'");
    }
    ++pos_;
    return shape;
  }

  std::string_view s_;
  const std::string& where_;
  size_t pos_ = 0;
};

// ---- libzip handles ----

struct ZipDiscard {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct ZipFileClose {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipDiscard>;
using ZipFilePtr = std::unique_ptr<zip_file_t, ZipFileClose>;

std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string encode_npy(const Tensor& tensor) {
  std::string dict = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}",
                                 shape_str(tensor.shape()));
  // magic(6) + version(2) + length(2) + dict + padding + '\n' is a multiple of kAlign.
  size_t unpadded = kMagicBytes + 4 + dict.size() + 1;
  size_t header_bytes = (unpadded + kAlign - 1) / kAlign * kAlign;
  dict.append(header_bytes - unpadded, ' ');
  dict.push_back('\n');

  std::string out(header_bytes + 4 * static_cast<size_t>(tensor.numel()), '\0');
  std::memcpy(out.data(), kMagic, kMagicBytes);
  out[6] = 1;  // format 1.0: its u16 header length is ample for any shape we write
  out[7] = 0;
  store_le<uint16_t>(out.data() + 8, static_cast<uint16_t>(dict.size()));
  std::memcpy(out.data() + 10, dict.data(), dict.size());
  char* p = out.data() + header_bytes;
  for (float v : tensor.span())
    store_le<float>(p, v), p += 4;
  return out;
}

Tensor decode_npy(std::string_view bytes, const std::string& where) {
  auto fail = [&](const std::string& what) -> DataError {
    return DataError(fmt::format("{} {}", where, what));
  };
  if (bytes.size() < 10 || bytes.substr(0, kMagicBytes) != std::string_view(kMagic, kMagicBytes))
    throw fail("is not a .npy array (no \\x93NUMPY magic); save it with np.savez");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, data_start = 0;
  if (major == 1) {
    header_len = load_le<uint16_t>(bytes.data() + 8);
    data_start = 10 + header_len;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw fail("is truncated inside its .npy header");
    header_len = load_le<uint32_t>(bytes.data() + 8);
    data_start = 12 + header_len;
  } else {
    throw fail(fmt::format("has .npy format version {}.{}, expected 1.0, 2.0 or 3.0", major,
                           static_cast<int>(bytes[7])));
  }
  if (data_start > bytes.size()) throw fail("is truncated inside its .npy header");
  NpyHeader h = HeaderParser(bytes.substr(data_start - header_len, header_len), where).parse();

  const std::string& descr = *h.descr;
  size_t item_bytes = 0;
  if (descr == "<f4" || (descr == "=f4" && std::endian::native == std::endian::little))
    item_bytes = 4;
  else if (descr == "<f8" || (descr == "=f8" && std::endian::native == std::endian::little))
    item_bytes = 8;
  else if (descr == ">f4" || descr == ">f8")
    throw fail(fmt::format("is big-endian ('{}'); save it with a.astype('<f4')", descr));
  else
    throw fail(fmt::format("has dtype '{}'; save float32 arrays (np.float32)", descr));
  if (*h.fortran_order)
    throw fail("is stored in Fortran order; save np.ascontiguousarray(a) instead");

  const Shape& shape = *h.shape;
  size_t numel = 1;
  for (int64_t d : shape) {
    if (d != 0 && numel > std::numeric_limits<size_t>::max() / 8 / static_cast<size_t>(d))
      throw fail(fmt::format("has an impossibly large shape {}", shape_str(shape)));
    numel *= static_cast<size_t>(d);
  }
  size_t expected = numel * item_bytes, found = bytes.size() - data_start;
  if (found < expected)
    throw fail(fmt::format("is truncated: expected {} bytes of data for shape {}, found {}",
                           expected, shape_str(shape), found));
  if (found > expected)
    throw fail(fmt::format("has {} bytes of data, but shape {} needs {}; save it again", found,
                           shape_str(shape), expected));

  std::vector<float> values(numel);
  const char* p = bytes.data() + data_start;
  if (item_bytes == 4) {
    for (size_t i = 0; i < numel; ++i)
      values[i] = load_le<float>(p + 4 * i);
  } else {
    for (size_t i = 0; i < numel; ++i)
      values[i] = static_cast<float>(load_le<double>(p + 8 * i));
  }
  return Tensor(shape, std::move(values));
}

namespace {

// The archive open for reading; DataError naming the file and what to do otherwise.
ZipPtr open_archive(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec))  // zip_open would block on a FIFO
    check_input_file(path, 16 * kGiB, "a .npz archive");
  int code = 0;
  ZipPtr za(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (!za) {
    if (code == ZIP_ER_NOENT)
      throw DataError(
          fmt::format("cannot read '{}': No such file or directory; check the path", path));
    std::error_code ec;
    if (code == ZIP_ER_NOZIP && std::filesystem::file_size(path, ec) == 0 && !ec)
      throw DataError(
          fmt::format("{}: the file is empty, not a .npz archive; save parameters "
                      "with np.savez or dsgd --save",
                      path));
    if (code == ZIP_ER_NOZIP || code == ZIP_ER_INCONS)
      throw DataError(
          fmt::format("{}: not a .npz archive ({}); save parameters with np.savez or dsgd --save",
                      path, zip_error_text(code)));
    throw DataError(fmt::format("cannot read '{}': {}", path, zip_error_text(code)));
  }
  return za;
}

// The bytes of entry i, checked against the CRC-32 the archive holds for it.
std::string read_entry(zip_t* za, zip_int64_t i, const zip_stat_t& st, const std::string& where) {
  ZipFilePtr file(zip_fopen_index(za, static_cast<zip_uint64_t>(i), 0));
  if (!file) throw DataError(fmt::format("{} cannot be read: {}", where, zip_strerror(za)));
  // Grown with the bytes actually read, a MiB at a time: the size in the zip directory is
  // the file's to claim, and a 200-byte archive may claim 4 GiB.
  std::string bytes;
  zip_uint64_t got = 0;
  while (got < st.size) {
    const zip_uint64_t want = std::min<zip_uint64_t>(st.size - got, zip_uint64_t{1} << 20);
    bytes.resize(got + want);
    zip_int64_t n = zip_fread(file.get(), bytes.data() + got, want);
    if (n < 0)
      throw DataError(
          fmt::format("{} is corrupt ({}); save it again", where, zip_file_strerror(file.get())));
    bytes.resize(got + static_cast<zip_uint64_t>(n));
    if (n == 0) break;
    got += static_cast<zip_uint64_t>(n);
  }
  if (got != st.size)
    throw DataError(
        fmt::format("{} is truncated: expected {} bytes, found {}", where, st.size, got));
  // libzip does not check a stored (uncompressed) entry's CRC: a changed byte would pass.
  if (st.valid & ZIP_STAT_CRC) {
    const uint32_t crc = static_cast<uint32_t>(
        ::crc32_z(0L, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
    if (crc != st.crc)
      throw DataError(
          fmt::format("{} is corrupt (CRC-32 0x{:08x}, the archive says 0x{:08x}); "
                      "save it again",
                      where, crc, st.crc));
  }
  return bytes;
}

// Reads every entry; entries that are not NAME.npy go to `blobs`, or are refused when it
// is null. An entry whose declared size exceeds `max_bytes` is refused before it is read.
std::vector<NamedTensor> read_entries(const std::string& path, std::vector<NpzBlob>* blobs,
                                      uint64_t max_bytes) {
  ZipPtr za = open_archive(path);
  zip_int64_t count = zip_get_num_entries(za.get(), 0);

  std::vector<NamedTensor> out;
  std::set<std::string> seen;
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* raw_name = zip_get_name(za.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_GUESS);
    std::string entry = raw_name ? raw_name : "";
    if (ends_with(entry, "/")) continue;  // a directory record, written by some zip tools
    std::string where = fmt::format("{}: entry '{}'", path, entry);
    const bool npy = ends_with(entry, ".npy");
    if (!npy && !blobs)
      throw DataError(
          fmt::format("{} is not a .npy array; an .npz holds only NAME.npy entries", where));
    std::string name = npy ? entry.substr(0, entry.size() - 4) : entry;
    where = fmt::format("{}: entry '{}'", path, name);
    if (!seen.insert(name).second)
      throw DataError(fmt::format("{} appears twice; save each array once", where));

    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 ||
        !(st.valid & ZIP_STAT_SIZE))
      throw DataError(fmt::format("{} cannot be read: {}", where, zip_strerror(za.get())));
    if (st.size > max_bytes)
      throw DataError(fmt::format(
          "{} declares {} bytes, more than any array this run reads can hold ({} at most); give "
          "the parameters of this model",
          where, st.size, max_bytes));
    std::string bytes = read_entry(za.get(), i, st, where);
    if (npy)
      out.push_back({name, decode_npy(bytes, where)});
    else
      blobs->push_back({name, std::move(bytes)});
  }
  return out;
}

}  // namespace

std::vector<NamedTensor> read_npz(const std::string& path, uint64_t max_entry_bytes) {
  return read_entries(path, nullptr, max_entry_bytes);
}

NpzArchive read_npz_archive(const std::string& path, uint64_t max_entry_bytes) {
  NpzArchive archive;
  archive.tensors = read_entries(path, &archive.blobs, max_entry_bytes);
  return archive;
}

void write_npz(const std::string& path, const std::vector<NamedTensor>& tensors) {
  write_npz(path, tensors, {});
}

void write_npz(const std::string& path, const std::vector<NamedTensor>& tensors,
               const std::vector<NpzBlob>& extra) {
  std::set<std::string> seen;
  for (const NamedTensor& t : tensors) {
    if (t.name.empty() || t.name.find('\0') != std::string::npos)
      throw UsageError(
          fmt::format("cannot save '{}': a tensor has an empty name; name every tensor", path));
    if (!seen.insert(t.name).second)
      throw UsageError(fmt::format(
          "cannot save '{}': two tensors are named '{}'; names must be unique", path, t.name));
  }
  // Build the archive in memory, then write it in one atomic step: a failure at any point
  // leaves the old file (or no file) in place, never a half-written archive.
  for (const NpzBlob& b : extra)
    if (b.name.empty() || b.name.find('\0') != std::string::npos || ends_with(b.name, ".npy") ||
        !seen.insert(b.name).second)
      throw UsageError(fmt::format(
          "cannot save '{}': extra entry '{}' needs a unique name that does not end in .npy", path,
          b.name));
  // (entry name, bytes): the tensors as NAME.npy, then the extra entries as they are.
  std::vector<std::pair<std::string, std::string>> entries;
  entries.reserve(tensors.size() + extra.size());
  for (const NamedTensor& t : tensors)
    entries.emplace_back(t.name + ".npy", encode_npy(t.tensor));
  for (const NpzBlob& b : extra)
    entries.emplace_back(b.name, b.bytes);

  auto fail = [&](const std::string& why) -> DataError {
    return DataError(fmt::format("cannot write '{}': {}", path, why));
  };
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (!buffer) {
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw fail(why);
  }
  zip_source_keep(buffer);  // still needed after zip_close, to read the archive bytes back
  std::unique_ptr<zip_source_t, decltype(&zip_source_free)> buffer_owner(buffer, zip_source_free);
  ZipPtr za(zip_open_from_source(buffer, ZIP_TRUNCATE, &error));
  if (!za) {
    std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw fail(why);
  }
  zip_error_fini(&error);

  for (const auto& [entry, bytes] : entries) {
    zip_source_t* source = zip_source_buffer(za.get(), bytes.data(), bytes.size(), 0);
    if (!source) throw fail(zip_strerror(za.get()));
    zip_int64_t index = zip_file_add(za.get(), entry.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);
      throw fail(zip_strerror(za.get()));
    }
    auto idx = static_cast<zip_uint64_t>(index);
    if (zip_set_file_compression(za.get(), idx, ZIP_CM_STORE, 0) != 0 ||
        zip_file_set_dostime(za.get(), idx, kDosTime, kDosDate, 0) != 0)
      throw fail(zip_strerror(za.get()));
  }
  if (zip_close(za.get()) != 0) throw fail(zip_strerror(za.get()));
  za.release();  // zip_close freed it

  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_source_stat(buffer, &st) != 0 || zip_source_open(buffer) != 0)
    throw fail(zip_error_strerror(zip_source_error(buffer)));
  std::string bytes(st.size, '\0');
  zip_int64_t n = zip_source_read(buffer, bytes.data(), st.size);
  zip_source_close(buffer);
  if (n < 0 || static_cast<zip_uint64_t>(n) != st.size)
    throw fail(zip_error_strerror(zip_source_error(buffer)));
  write_file_atomic(path, bytes);
}

}  // namespace dsgd
