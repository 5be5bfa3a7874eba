// Helpers shared by the fuzz targets: the file parsers take paths, so an input is handed
// to them as an in-memory file (memfd) named by /proc/self/fd/N; nothing touches the disk.
// Not part of dsgd: only the fuzz targets include this.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace dsgd::fuzz {

// One in-memory file, rewritten for each input.
class MemFile {
 public:
  MemFile() : fd_(memfd_create("dsgd-fuzz", 0)) {
    if (fd_ < 0) std::abort();
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  // Replaces the contents; returns the path to open.
  std::string write(const uint8_t* data, size_t size) {
    if (::ftruncate(fd_, 0) != 0) std::abort();
    for (size_t done = 0; done < size;) {
      const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

}  // namespace dsgd::fuzz
