#include "core/io/input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/errors.h"

namespace dsgd {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a pipe (FIFO)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string size_text(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= 1024 * kGiB) return fmt::format("{:.1f} TiB", b / (1024.0 * kGiB));
  if (bytes >= kGiB) return fmt::format("{:.1f} GiB", b / kGiB);
  if (bytes >= kMiB) return fmt::format("{:.1f} MiB", b / kMiB);
  return fmt::format("{} bytes", bytes);
}

}  // namespace

void check_input_file(const std::string& path, uint64_t max_bytes, const char* what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw DataError(fmt::format("cannot read '{}': {}; check the path", path, std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode))
    throw DataError(fmt::format("cannot read '{}': it is {}, not a file; give the path of {}", path,
                                kind_of(st.st_mode), what));
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    throw DataError(
        fmt::format("'{}' is {}, more than the {} dsgd reads as {}; give a smaller file", path,
                    size_text(static_cast<uint64_t>(st.st_size)), size_text(max_bytes), what));
}

std::string read_input_file(const std::string& path, uint64_t max_bytes, const char* what) {
  check_input_file(path, max_bytes, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw DataError(
        fmt::format("cannot read '{}': {}; check its permissions", path, std::strerror(err)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw DataError(fmt::format("cannot read '{}': the read failed", path));
  return text.str();
}

}  // namespace dsgd
