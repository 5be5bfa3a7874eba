// How a solution of lesson 5's exercise communicates, checked from the events of one case
// (events.h): right values are not enough. The exercise is to write the ring all-reduce
// with send and recv, so a solution must not call one of dsgd's collectives (which would
// hand the work to the library), and no rank may send more than a ring does: 2(R-1) chunks
// of at most ceil(n/R) floats. Gathering everything at one rank and sending it back is
// correct but is not the ring, and it shows as one rank sending R-1 times the vector.
// Not the values' check (exercise.cpp), and not a check of the order of the messages.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/events.h"
#include "lessons/lesson.h"

namespace dsgd::lessons {

// The most bytes a rank of a ring all-reduce of n floats on R ranks sends.
size_t ring_bytes_per_rank(int world, size_t n);

// "" when the events of one case keep the exercise's rules, else what broke them and what
// to do instead, in `lang`.
std::string pattern_problem(const std::vector<Event>& events, int world, size_t n, Lang lang);

}  // namespace dsgd::lessons
