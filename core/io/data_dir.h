// Where dsgd finds the files it ships beside its binaries: the lesson texts, the scenarios
// and the headers the lesson 5 checker compiles against (DATA/lessons, DATA/scenarios,
// DATA/include). Found next to the running executable (/proc/self/exe), so an installed
// dsgd works without its source tree and the build tree works as built. Not a search path
// for the user's own files: those are given as paths.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace dsgd {

// The places looked at, in order: EXE_DIR/../share/dsgd (installed: PREFIX/bin/dsgd,
// PREFIX/share/dsgd; also build/default/{tests,gui}/ beside build/default/share/dsgd), then
// EXE_DIR/share/dsgd (build/default/dsgd); then the same beside the shared library this code
// is in, when another program loaded it (build/default/dsgd_torch*.so in python3). Empty
// when neither can be found.
std::vector<std::filesystem::path> data_dir_candidates();

// The first candidate that is a directory. DataError naming the places looked at when none
// is, with what to do (install with cmake --install, or give the file's path).
std::filesystem::path data_dir();

// "looked in A and B" for error messages.
std::string data_dir_places();

}  // namespace dsgd
