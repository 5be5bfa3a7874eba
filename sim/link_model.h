// Units of the link model: durations ("2ms") and bandwidths ("1Gbit", "125MB/s") as users
// write them, parsed with clear errors, and printed back. The model itself is network.h.
#pragma once

#include <cstdint>
#include <string>

namespace dsgd::sim {

// Parses "2ms", "150us", "0.5s", "0" into seconds; "1Gbit", "100Mbit", "10MB/s", "1e9" (bit/s)
// into bytes per second. UsageError with the accepted units otherwise.
double parse_duration_s(const std::string& text, const char* what);
double parse_bandwidth_Bps(const std::string& text, const char* what);
// Parses a size: "65536", "64K" or "64KiB" (K, M, G: 2^10, 2^20, 2^30 bytes, as MPI's and
// nccl-tests' sizes), "64KB" (KB, MB, GB: 10^3, 10^6, 10^9 bytes), into bytes.
uint64_t parse_size_bytes(const std::string& text, const char* what);
std::string format_duration(double seconds);       // "2 ms"
std::string format_bandwidth(double bytes_per_s);  // "1 Gbit/s"

}  // namespace dsgd::sim
