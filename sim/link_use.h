// The bytes one link of a simulated platform carried in a run, each message counted on every
// link of its route (the SimGrid backend counts them): what "bytes per link" and "the
// busiest links" print. Not a utilisation over time: the total of the run.
#pragma once

#include <string>

namespace dsgd::sim {

struct LinkUse {
  std::string name;  // SimGrid's name of the link, e.g. "link3" or a cluster zone's own
  double bandwidth_Bps = 0;
  double bytes = 0;
  bool shared = true;  // false: a fat pipe (mesh), where every flow gets the whole bandwidth
};

}  // namespace dsgd::sim
