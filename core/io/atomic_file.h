// AtomicFile: write a file so that readers see either the old contents or the complete new
// ones, never a half-written file (temporary in the same directory, fsync, rename, fsync dir).
// A symlink is followed (its target is replaced, the link stays); an output that is not a
// regular file (/dev/null, a pipe, a terminal) is written in place, since it cannot be
// replaced without destroying it. Temporaries are named `.NAME.dsgd-tmp.XXXXXX` (NAME cut
// short for long file names), so that stale ones can be found and removed.
// Not a lock: two writers racing on one path each succeed, and the last rename wins.
#pragma once

#include <fstream>
#include <string>
#include <string_view>

namespace dsgd {

class AtomicFile {
 public:
  // Creates the temporary next to dest (next to its target when dest is a symlink), or opens
  // dest itself when it exists and is not a regular file. Throws DataError when the
  // directory is missing or not writable.
  explicit AtomicFile(std::string dest);
  ~AtomicFile();  // removes the temporary file unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& path() const { return dest_; }
  // Where the bytes go before commit: the temporary, or dest itself when written in place.
  const std::string& temp_path() const { return temp_path_; }
  bool in_place() const { return in_place_; }

  // A binary stream on the temporary file. Code that writes the temporary file by its path
  // instead (a library that opens the path itself) must not also use the stream.
  std::ostream& stream();
  void write(std::string_view bytes) { stream().write(bytes.data(), std::ssize(bytes)); }

  // Flushes and fsyncs the temporary file, renames it over dest and fsyncs the directory.
  // The new file gets dest's old permission bits, or 0644 when dest did not exist.
  // Throws DataError on any failure; the temporary file is then removed by the destructor.
  void commit();

 private:
  std::string dest_;    // as given (error messages name it)
  std::string target_;  // what is replaced: dest, or the file its symlinks lead to
  std::string temp_path_;
  std::ofstream stream_;
  bool in_place_ = false;
  bool committed_ = false;
};

// Writes bytes to path through an AtomicFile.
void write_file_atomic(const std::string& path, std::string_view bytes);

// The temporaries AtomicFile leaves in `dir` when its process is killed while writing a file
// whose name starts with `name_prefix` (`.ckpt-0000000010.npz.dsgd-tmp.XXXXXX` for "ckpt-").
// Removes them (a run about to write such files calls it first); returns how many.
int remove_stale_temporaries(const std::string& dir, std::string_view name_prefix);

}  // namespace dsgd
