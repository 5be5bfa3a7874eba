// ASTRA-sim 1.0's text workload input, as far as dsgd models it: a DATA (data-parallel) file
// whose layers compute for a number of cycles and all-reduce their weight gradients. Cycles
// are read as nanoseconds (a 1 GHz clock, as ASTRA-sim's analytical backend counts).
// Not a full reader of the format: model, hybrid and pipeline parallelism, and any
// communication other than the weight-grad all-reduce, are refused with a DataError.
#pragma once

#include <istream>
#include <string>

#include "core/workload/workload.h"

namespace dsgd {

// Line 1: the parallelism (first token; more may follow it). Line 2: the number of layers.
// Then one line per layer, 12 whitespace-separated fields: name, reserved (-1), forward
// cycles, comm type, comm bytes, input-grad cycles, comm type, bytes, weight-grad cycles, comm
// type, bytes, update delay cycles; and optionally 2 more (memory read and write bytes, which
// ASTRA-sim 2's converter accepts), ignored. Blank lines and lines starting with '#' are
// skipped. DataError "NAME:LINE: what; what to do" for anything else; `name` is also the
// workload's name.
Workload parse_astra_workload(std::istream& in, const std::string& name);

// The file at `path`, named by its file name without directories. DataError when it cannot be
// read, or as parse_astra_workload.
Workload read_astra_workload(const std::string& path);

}  // namespace dsgd
