#include "core/io/atomic_file.h"

#include <cerrno>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.h"

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

}  // namespace

AtomicFile::AtomicFile(std::string dest) : dest_(std::move(dest)) {
  std::error_code ec;
  if (dest_.empty() || !std::filesystem::is_directory(directory_of(dest_), ec))
    throw_write_error(dest_, ENOENT);
  std::string name = dest_ + ".tmp.XXXXXX";
  int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) throw_write_error(dest_, errno);
  temp_path_ = name;
  // mkstemp creates mode 0600; a saved file should look like any other file the user writes.
  struct stat st;
  mode_t mode = ::stat(dest_.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
  ::fchmod(fd, mode);
  ::close(fd);
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (stream_.is_open()) stream_.close();
  ::unlink(temp_path_.c_str());
}

std::ostream& AtomicFile::stream() {
  if (!stream_.is_open()) {
    stream_.open(temp_path_, std::ios::binary | std::ios::trunc);
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
  fsync_path(temp_path_, dest_, false);
  if (::rename(temp_path_.c_str(), dest_.c_str()) != 0) throw_write_error(dest_, errno);
  committed_ = true;
  // Make the rename itself durable: without this a crash can bring back the old file.
  fsync_path(directory_of(dest_), dest_, true);
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  AtomicFile file(path);
  file.write(bytes);
  file.commit();
}

}  // namespace dsgd
