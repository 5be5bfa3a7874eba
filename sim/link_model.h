// The link model: each directed link has a one-way latency and a bandwidth. A message of
// S bytes handed to the link at time t starts when the link is free, occupies it for
// S / bandwidth, then arrives `latency` later (the alpha-beta model, per link).
// Not a packet simulator: no congestion between different links (that comes with topologies).
#pragma once

#include <cstdint>
#include <string>

namespace dsgd::sim {

struct LinkParams {
  double latency_s = 0.0;      // one-way
  double bandwidth_Bps = 0.0;  // bytes per second; 0 = unlimited
  bool ideal() const { return latency_s == 0.0 && bandwidth_Bps == 0.0; }
};

// Parses "2ms", "150us", "0.5s", "0" into seconds; "1Gbit", "100Mbit", "10MB/s", "1e9" (bit/s)
// into bytes per second. UsageError with the accepted units otherwise.
double parse_duration_s(const std::string& text, const char* what);
double parse_bandwidth_Bps(const std::string& text, const char* what);
std::string format_duration(double seconds);       // "2 ms"
std::string format_bandwidth(double bytes_per_s);  // "1 Gbit/s"

// One directed link's occupancy, owned by the sending rank's thread.
class LinkClock {
 public:
  // Time (same clock as now_s) at which a message of `bytes` handed over at now_s arrives.
  double schedule(double now_s, uint64_t bytes, const LinkParams& link) {
    const double start = now_s > busy_until_s_ ? now_s : busy_until_s_;
    busy_until_s_ = start + (link.bandwidth_Bps > 0 ? double(bytes) / link.bandwidth_Bps : 0.0);
    return busy_until_s_ + link.latency_s;
  }

 private:
  double busy_until_s_ = 0.0;
};

}  // namespace dsgd::sim
