// Scenarios by name: `--scenario flaky-wan` means DATA/scenarios/flaky-wan.toml, one of the
// examples shipped beside dsgd (core/io/data_dir.h). Anything that reads as a path (has a
// '/', ends in .toml, or exists) is used as given. Not a search path for the user's files.
#pragma once

#include <string>
#include <vector>

namespace dsgd::sim {

// The file `given` names. DataError for a name that is not a shipped scenario, listing
// the names in one line.
std::string resolve_scenario(const std::string& given);

// The names of the shipped scenarios, sorted; empty when none is found.
std::vector<std::string> scenario_names();

}  // namespace dsgd::sim
