// Internals shared by trace_read.cpp (events, merge) and trace_check.cpp: a trace file read
// and parsed into its event array, with the errors that name the file. Uses nlohmann's
// ordered_json, so what is written back (merge, the run description) keeps its key order.
// Not part of the public API: include core/io/trace.h instead.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/io/trace.h"
#include "core/io/trace_detail.h"

namespace dsgd::trace_detail {

using json = nlohmann::ordered_json;

// The document and its event array.
struct Document {
  json root;
  const json* events = nullptr;
};

[[noreturn]] void not_a_trace(const std::string& name, const std::string& why);
std::string read_whole(const std::string& path);  // DataError naming the path
// JSON with a "traceEvents" array (the object form, or the bare array form as
// chrome://tracing takes it); DataError "NAME: not a Chrome trace: ..." otherwise.
Document parse_document(std::string_view text, const std::string& name);
// parse_document, and every event an object with a "ph" string; slices, instants and flows
// with numeric pid, tid and ts ("X" also dur >= 0).
Document parse_trace(std::string_view text, const std::string& name);
// otherData's "time_base" ("wall" when absent) and "run" (serialized; empty when absent).
std::string time_base_of(const Document& d);
std::string run_json_of(const Document& d);
// otherData's "summary" (core/io/trace_summary.h); ranks 0 when absent or malformed.
TraceSummary summary_of(const Document& d);
bool is_flow(const json& e);  // "s", "t" or "f"
// A send or receive slice written by trace_json: cat kP2pCat, args {dir, src, dst, tag, k}.
// Returns false for other events; `why` says what is missing from a broken one.
bool message_end(const json& e, MessageEnd& m, std::string* why);

}  // namespace dsgd::trace_detail
