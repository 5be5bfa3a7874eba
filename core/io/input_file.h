// Input files as dsgd reads them: regular files only (a FIFO or a device would block or never
// end; a directory reads as nothing), no larger than a stated bound (a 1 TiB sparse file
// would be read to its end), read whole. Errors name the file, what it is, the bound, and
// what to do. Not a general file API: the formats' own readers parse what this returns.
#pragma once

#include <cstdint>
#include <string>

namespace dsgd {

inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// DataError unless `path` names a regular file (through symlinks) of at most `max_bytes`.
// `what` says what the file is for ("a scenario", "a CSV file").
void check_input_file(const std::string& path, uint64_t max_bytes, const char* what);
// check_input_file, then the whole file.
std::string read_input_file(const std::string& path, uint64_t max_bytes, const char* what);

}  // namespace dsgd
