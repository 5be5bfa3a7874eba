// AtomicFile: the new contents appear only on commit(), and a failure leaves the directory
// exactly as it was (no half-written destination, no stray temporaries). Symlinks are
// followed, devices and pipes written in place, long names fit.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "core/errors.h"
#include "core/io/atomic_file.h"
#include "temp_dir.h"
#include "error_text.h"

namespace fs = std::filesystem;
using Catch::Contains;
using dsgd::test::error_text;
using dsgd::test::TempDir;

namespace {}  // namespace

TEST_CASE("write_file_atomic creates and replaces a file", "[atomic]") {
  TempDir dir;
  std::string dest = dir / "out.bin";
  std::string bytes("first\0version", 13);
  dsgd::write_file_atomic(dest, bytes);
  CHECK(dsgd::test::read_text(dest) == bytes);
  CHECK(dsgd::test::entry_names(dir.path()) == std::set<std::string>{"out.bin"});
  struct stat st;
  REQUIRE(::stat(dest.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);

  // Replacing keeps the permission bits the user gave the old file.
  REQUIRE(::chmod(dest.c_str(), 0600) == 0);
  dsgd::write_file_atomic(dest, "second");
  CHECK(dsgd::test::read_text(dest) == "second");
  REQUIRE(::stat(dest.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(dsgd::test::entry_names(dir.path()) == std::set<std::string>{"out.bin"});
}

TEST_CASE("AtomicFile shows nothing until commit and cleans up without it", "[atomic]") {
  TempDir dir;
  std::string dest = dir / "model.npz";
  dsgd::write_file_atomic(dest, "old");
  {
    dsgd::AtomicFile file(dest);
    CHECK(file.temp_path().rfind(dir / ".model.npz.dsgd-tmp.", 0) == 0);
    CHECK(fs::exists(file.temp_path()));
    file.stream() << "new contents";
    file.stream().flush();
    CHECK(dsgd::test::read_text(dest) == "old");  // readers still see the old file
  }
  CHECK(dsgd::test::read_text(dest) == "old");
  CHECK(dsgd::test::entry_names(dir.path()) == std::set<std::string>{"model.npz"});

  {
    dsgd::AtomicFile file(dest);
    file.write("new contents");
    file.commit();
    CHECK_FALSE(fs::exists(file.temp_path()));
  }
  CHECK(dsgd::test::read_text(dest) == "new contents");
  CHECK(dsgd::test::entry_names(dir.path()) == std::set<std::string>{"model.npz"});
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
  CHECK(dsgd::test::read_text(dest) == "written by another library");
}

TEST_CASE("AtomicFile reports unwritable destinations and leaves nothing behind", "[atomic]") {
  TempDir dir;
  std::string missing = dir / "no-such-dir/out.bin";
  std::string msg = error_text<dsgd::DataError>([&] { dsgd::AtomicFile file(missing); });
  CHECK_THAT(msg, Contains("cannot write '" + missing + "'") &&
                      Contains("No such file or directory") && Contains("check the path"));
  CHECK_THROWS_AS(dsgd::write_file_atomic(missing, "x"), dsgd::DataError);
  CHECK(dsgd::test::entry_names(dir.path()).empty());

  // The destination is a directory: the rename fails at commit and the temporary goes away.
  fs::create_directory(dir.path() / "taken");
  msg = error_text<dsgd::DataError>([&] { dsgd::write_file_atomic(dir / "taken", "x"); });
  CHECK_THAT(msg, Contains("cannot write '" + (dir / "taken") + "'"));
  CHECK(dsgd::test::entry_names(dir.path()) == std::set<std::string>{"taken"});

  if (::geteuid() != 0) {  // root ignores directory permissions
    fs::create_directory(dir.path() / "readonly");
    fs::permissions(dir.path() / "readonly", fs::perms::owner_read | fs::perms::owner_exec);
    msg = error_text<dsgd::DataError>(
        [&] { dsgd::write_file_atomic(dir / "readonly/out.bin", "x"); });
    CHECK_THAT(msg, Contains("Permission denied"));
    CHECK(dsgd::test::entry_names(dir.path() / "readonly").empty());
  }
}

TEST_CASE("AtomicFile follows a symlink and replaces its target, not the link", "[atomic]") {
  TempDir dir;
  dsgd::write_file_atomic(dir / "real.json", "old");
  fs::create_symlink("real.json", dir.path() / "link.json");
  dsgd::write_file_atomic(dir / "link.json", "new");
  CHECK(fs::is_symlink(dir.path() / "link.json"));
  CHECK(dsgd::test::read_text(dir / "real.json") == "new");
  // A dangling link: the file is created where it points.
  fs::create_symlink("later.json", dir.path() / "dangling.json");
  dsgd::write_file_atomic(dir / "dangling.json", "made");
  CHECK(fs::is_symlink(dir.path() / "dangling.json"));
  CHECK(dsgd::test::read_text(dir / "later.json") == "made");
}

TEST_CASE("AtomicFile writes a device or a pipe in place instead of replacing it", "[atomic]") {
  {
    dsgd::AtomicFile null("/dev/null");
    CHECK(null.in_place());
    null.write("nothing to see");
    null.commit();
  }
  struct stat st;
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));  // still the device

  TempDir dir;
  const std::string fifo = dir / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string got;
  std::thread reader([&] { got = dsgd::test::read_text(fifo); });
  dsgd::write_file_atomic(fifo, "through the pipe");
  reader.join();
  CHECK(got == "through the pipe");
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(dsgd::test::entry_names(dir.path()) == std::set<std::string>{"pipe"});
}

TEST_CASE("AtomicFile takes a 250-character file name, and stale temporaries are found",
          "[atomic]") {
  TempDir dir;
  const std::string dest = dir / std::string(250, 'x');
  dsgd::write_file_atomic(dest, "long");
  CHECK(dsgd::test::read_text(dest) == "long");
  CHECK(dsgd::test::entry_names(dir.path()).size() == 1);

  // What a killed writer leaves: its temporary. The next run removes them (and nothing else).
  const std::string ckpt = dir / "ckpt-0000000010.npz";
  {
    dsgd::AtomicFile killed(ckpt);
    killed.write("half");
    killed.stream().flush();
    fs::copy_file(killed.temp_path(), dir / ".ckpt-0000000010.npz.dsgd-tmp.abcdef");
  }
  dsgd::write_file_atomic(dir / "other.txt", "keep");
  CHECK(dsgd::remove_stale_temporaries(dir.path().string(), "ckpt-") == 1);
  CHECK(dsgd::test::entry_names(dir.path()) ==
        std::set<std::string>{std::string(250, 'x'), "other.txt"});
}
