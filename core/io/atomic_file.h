// AtomicFile: write a file so that readers see either the old contents or the complete new
// ones, never a half-written file (temporary in the same directory, fsync, rename, fsync dir).
// Not a lock: two writers racing on one path each succeed, and the last rename wins.
#pragma once

#include <fstream>
#include <string>
#include <string_view>

namespace dsgd {

class AtomicFile {
 public:
  // Creates `dest.tmp.XXXXXX` next to dest. Throws DataError when the directory is missing
  // or not writable.
  explicit AtomicFile(std::string dest);
  ~AtomicFile();  // removes the temporary file unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& path() const { return dest_; }
  const std::string& temp_path() const { return temp_path_; }

  // A binary stream on the temporary file. Code that writes the temporary file by its path
  // instead (a library that opens the path itself) must not also use the stream.
  std::ostream& stream();
  void write(std::string_view bytes) { stream().write(bytes.data(), std::ssize(bytes)); }

  // Flushes and fsyncs the temporary file, renames it over dest and fsyncs the directory.
  // The new file gets dest's old permission bits, or 0644 when dest did not exist.
  // Throws DataError on any failure; the temporary file is then removed by the destructor.
  void commit();

 private:
  std::string dest_;
  std::string temp_path_;
  std::ofstream stream_;
  bool committed_ = false;
};

// Writes bytes to path through an AtomicFile.
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace dsgd
