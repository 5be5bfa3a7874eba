// Compiled together with a student's file by `dsgd lesson 5 --check` (lessons/exercise.cpp):
// a C entry point that dsgd finds with dlsym and that calls the student's function.
// If the student's file lacks `void my_all_reduce(dsgd::Communicator&, std::span<float>)`
// at global scope, loading the library fails naming the missing symbol.
#include <cstddef>
#include <span>

#include "core/comm/communicator.h"

void my_all_reduce(dsgd::Communicator& comm, std::span<float> data);

extern "C" void dsgd_exercise_entry(dsgd::Communicator* comm, float* data, std::size_t n, int) {
  my_all_reduce(*comm, std::span<float>(data, n));
}
