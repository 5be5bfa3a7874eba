// Zip archives for tests of the .npz reader: entries as given, including what np.savez
// would never write.
#pragma once

#include <zip.h>

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

namespace dsgd::test {

// A zip at `path` with the given (name, bytes) entries.
inline void make_zip(const std::string& path,
                     const std::vector<std::pair<std::string, std::string>>& entries) {
  int err = 0;
  zip_t* za = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  REQUIRE(za != nullptr);
  for (const auto& [name, bytes] : entries) {
    zip_source_t* src = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
    REQUIRE(src != nullptr);
    REQUIRE(zip_file_add(za, name.c_str(), src, 0) >= 0);
  }
  REQUIRE(zip_close(za) == 0);
}

}  // namespace dsgd::test
