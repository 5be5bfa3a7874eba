// What `dsgd bench collective` shows of a sweep: the table's header (what was measured and
// how), one line per row like nccl-tests, --explain's per-algorithm costs, and the rows as
// JSON. Text only: the caller writes it (stdout, a file). Not the measurement
// (collective_bench.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/collective/collective_bench.h"

namespace dsgd::bench {

// The comment lines above the table and the table's two heading lines.
std::string report_header(const CollectivePlan& plan, int world);
// One line of the table.
std::string report_row(const CollectiveRow& row);
// --explain: each algorithm's steps and bytes for the op, the world and a row of `bytes`
// requested (rounded as the sweep would), on the plan's link or the nominal one.
std::string explain(const CollectivePlan& plan, int world, uint64_t bytes);
// The plan and the rows, as `--json FILE` writes them.
nlohmann::ordered_json report_json(const CollectivePlan& plan, int world,
                                   const std::vector<CollectiveRow>& rows);

}  // namespace dsgd::bench
