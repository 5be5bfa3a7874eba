// AtomicFile: the new contents appear only on commit(), and a failure leaves the directory
// exactly as it was (no half-written destination, no stray *.tmp.* files).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.h"
#include "core/io/atomic_file.h"

namespace fs = std::filesystem;
using Catch::Contains;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("dsgd-test-atomic-" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.insert(e.path().filename().string());
  return names;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

template <typename E, typename F>
std::string error_text(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("expected an exception");
  return {};
}

}  // namespace

TEST_CASE("write_file_atomic creates and replaces a file", "[atomic]") {
  TempDir dir;
  std::string dest = dir / "out.bin";
  std::string bytes("first\0version", 13);
  dsgd::write_file_atomic(dest, bytes);
  CHECK(slurp(dest) == bytes);
  CHECK(listing(dir.path) == std::set<std::string>{"out.bin"});
  struct stat st;
  REQUIRE(::stat(dest.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);

  // Replacing keeps the permission bits the user gave the old file.
  REQUIRE(::chmod(dest.c_str(), 0600) == 0);
  dsgd::write_file_atomic(dest, "second");
  CHECK(slurp(dest) == "second");
  REQUIRE(::stat(dest.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(listing(dir.path) == std::set<std::string>{"out.bin"});
}

TEST_CASE("AtomicFile shows nothing until commit and cleans up without it", "[atomic]") {
  TempDir dir;
  std::string dest = dir / "model.npz";
  dsgd::write_file_atomic(dest, "old");
  {
    dsgd::AtomicFile file(dest);
    CHECK(file.temp_path().rfind(dest + ".tmp.", 0) == 0);
    CHECK(fs::exists(file.temp_path()));
    file.stream() << "new contents";
    file.stream().flush();
    CHECK(slurp(dest) == "old");  // readers still see the old file
  }
  CHECK(slurp(dest) == "old");
  CHECK(listing(dir.path) == std::set<std::string>{"model.npz"});

  {
    dsgd::AtomicFile file(dest);
    file.write("new contents");
    file.commit();
    CHECK_FALSE(fs::exists(file.temp_path()));
  }
  CHECK(slurp(dest) == "new contents");
  CHECK(listing(dir.path) == std::set<std::string>{"model.npz"});
}

TEST_CASE("AtomicFile can be written through its temporary path", "[atomic]") {
  TempDir dir;
  std::string dest = dir / "by-path.txt";
  dsgd::AtomicFile file(dest);
  {
    std::ofstream out(file.temp_path(), std::ios::binary);
    out << "written by another library";
  }
  file.commit();
  CHECK(slurp(dest) == "written by another library");
}

TEST_CASE("AtomicFile reports unwritable destinations and leaves nothing behind", "[atomic]") {
  TempDir dir;
  std::string missing = dir / "no-such-dir/out.bin";
  std::string msg = error_text<dsgd::DataError>([&] { dsgd::AtomicFile file(missing); });
  CHECK_THAT(msg, Contains("cannot write '" + missing + "'") &&
                      Contains("No such file or directory") && Contains("check the path"));
  CHECK_THROWS_AS(dsgd::write_file_atomic(missing, "x"), dsgd::DataError);
  CHECK(listing(dir.path).empty());

  // The destination is a directory: the rename fails at commit and the temporary goes away.
  fs::create_directory(dir.path / "taken");
  msg = error_text<dsgd::DataError>([&] { dsgd::write_file_atomic(dir / "taken", "x"); });
  CHECK_THAT(msg, Contains("cannot write '" + (dir / "taken") + "'"));
  CHECK(listing(dir.path) == std::set<std::string>{"taken"});

  if (::geteuid() != 0) {  // root ignores directory permissions
    fs::create_directory(dir.path / "readonly");
    fs::permissions(dir.path / "readonly", fs::perms::owner_read | fs::perms::owner_exec);
    msg = error_text<dsgd::DataError>(
        [&] { dsgd::write_file_atomic(dir / "readonly/out.bin", "x"); });
    CHECK_THAT(msg, Contains("Permission denied"));
    CHECK(listing(dir.path / "readonly").empty());
  }
}
