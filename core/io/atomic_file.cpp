#include "core/io/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/io/interrupt.h"

namespace dsgd {
namespace {

std::string errno_text(int err) {
  return std::generic_category().message(err);
}

std::string directory_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

[[noreturn]] void throw_write_error(const std::string& dest, int err) {
  const char* hint = (err == EACCES || err == EPERM || err == EROFS)
                         ? "check the path and its permissions"
                     : err == ENOSPC ? "free some disk space"
                                     : "check the path";
  throw DataError(fmt::format("cannot write '{}': {}; {}", dest, errno_text(err), hint));
}

// fsync a path by opening it again: the data may have been written through another handle.
void fsync_path(const std::string& path, const std::string& dest, bool directory) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) throw_write_error(dest, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  // Some file systems cannot fsync a directory; the rename itself has still happened.
  if (rc != 0 && !(directory && (err == EINVAL || err == ENOTSUP))) throw_write_error(dest, err);
}

constexpr const char* kTempMark = ".dsgd-tmp.";
// A file name has at most 255 bytes: ".", the name, the mark and 6 random characters.
constexpr size_t kMaxNameInTemp = 255 - 1 - 16 - 6;

// dest with every symlink on the way resolved, so that the rename replaces the file the
// link leads to and the link stays: realpath for a file that exists, else (a dangling link)
// where the links point.
std::string resolve_links(const std::string& dest) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(dest, ec);
  if (!ec) return real.string();
  std::filesystem::path p(dest);
  for (int hops = 0; hops < 40 && std::filesystem::is_symlink(p, ec); ++hops) {
    const std::filesystem::path to = std::filesystem::read_symlink(p, ec);
    if (ec) break;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return p.string();
}

std::string temp_prefix(const std::string& target) {
  const std::filesystem::path p(target);
  const std::string name = p.filename().string().substr(0, kMaxNameInTemp);
  return (p.parent_path() / ("." + name + kTempMark)).string();
}

}  // namespace

AtomicFile::AtomicFile(std::string dest) : dest_(std::move(dest)) {
  if (dest_.empty()) throw DataError("an output path is empty; give a file name");
  struct stat st;
  const bool exists = ::stat(dest_.c_str(), &st) == 0;  // through any symlinks
  if (exists && S_ISDIR(st.st_mode))
    throw DataError(fmt::format("cannot write '{}': it is a directory; give a file name", dest_));
  if (exists && !S_ISREG(st.st_mode)) {  // a device, pipe or socket: write into it
    in_place_ = true;
    target_ = temp_path_ = dest_;
    return;
  }
  target_ = resolve_links(dest_);
  std::error_code ec;
  if (!std::filesystem::is_directory(directory_of(target_), ec)) throw_write_error(dest_, ENOENT);
  std::string name = temp_prefix(target_) + "XXXXXX";
  int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) throw_write_error(dest_, errno);
  temp_path_ = name;
  register_temporary(temp_path_);  // an interrupt removes it (core/io/interrupt.h)
  // mkstemp creates mode 0600; a saved file should look like any other file the user writes.
  ::fchmod(fd, exists ? (st.st_mode & 07777) : 0644);
  ::close(fd);
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (stream_.is_open()) stream_.close();
  if (!in_place_) {
    ::unlink(temp_path_.c_str());
    unregister_temporary(temp_path_);
  }
}

std::ostream& AtomicFile::stream() {
  if (!stream_.is_open()) {
    // In place: no truncation of a device or pipe (a terminal or /dev/null has nothing to cut).
    stream_.open(temp_path_,
                 in_place_ ? std::ios::binary | std::ios::out : std::ios::binary | std::ios::trunc);
    if (!stream_) throw_write_error(dest_, errno ? errno : EIO);
  }
  return stream_;
}

void AtomicFile::commit() {
  if (committed_) return;
  if (stream_.is_open()) {
    stream_.flush();
    bool ok = static_cast<bool>(stream_);
    stream_.close();
    if (!ok || stream_.fail()) throw_write_error(dest_, errno ? errno : EIO);
  }
  if (in_place_) {
    committed_ = true;
    return;
  }
  fsync_path(temp_path_, dest_, false);
  if (::rename(temp_path_.c_str(), target_.c_str()) != 0) throw_write_error(dest_, errno);
  committed_ = true;
  unregister_temporary(temp_path_);
  // Make the rename itself durable: without this a crash can bring back the old file.
  fsync_path(directory_of(target_), dest_, true);
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  AtomicFile file(path);
  file.write(bytes);
  file.commit();
}

int remove_stale_temporaries(const std::string& dir, std::string_view name_prefix) {
  const std::string head = "." + std::string(name_prefix);
  std::error_code ec;
  int removed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.empty() ? "." : dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t mark = name.size() >= 6 + std::strlen(kTempMark)
                            ? name.size() - 6 - std::strlen(kTempMark)
                            : std::string::npos;
    if (name.starts_with(head) && mark != std::string::npos && mark >= head.size() &&
        name.compare(mark, std::strlen(kTempMark), kTempMark) == 0 && entry.is_regular_file(ec) &&
        std::filesystem::remove(entry.path(), ec))
      ++removed;
  }
  return removed;
}

}  // namespace dsgd
