#include "lessons/log_item_json.h"

#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace dsgd::lessons {

namespace {

using nlohmann::json;
using Kind = LogItem::Kind;

constexpr std::array<std::pair<Kind, const char*>, 6> kKindNames{{{Kind::say, "say"},
                                                                  {Kind::print, "print"},
                                                                  {Kind::section, "section"},
                                                                  {Kind::send, "send"},
                                                                  {Kind::recv, "recv"},
                                                                  {Kind::call, "call"}}};

const char* kind_name(Kind kind) {
  for (const auto& [k, name] : kKindNames)
    if (k == kind) return name;
  return "say";
}

Kind kind_of(const std::string& name) {
  for (const auto& [k, n] : kKindNames)
    if (name == n) return k;
  throw DataError(fmt::format("a lesson item of kind '{}'", name));
}

}  // namespace

std::string log_item_json(const LogItem& item) {
  json j{{"kind", kind_name(item.kind)}};
  if (item.peer != -1) j["peer"] = item.peer;
  if (item.tag != 0) j["tag"] = item.tag;
  if (item.bytes != 0) j["bytes"] = item.bytes;
  if (!item.shown) j["shown"] = false;
  if (!item.preview.empty()) j["preview"] = item.preview;
  if (!item.text.empty()) j["text"] = item.text;
  return j.dump();
}

LogItem log_item_from_json(std::string_view text) {
  try {
    const json j = json::parse(text.begin(), text.end());
    return {.kind = kind_of(j.at("kind").get<std::string>()),
            .peer = j.value("peer", -1),
            .tag = j.value("tag", 0),
            .bytes = j.value("bytes", uint64_t{0}),
            .shown = j.value("shown", true),
            .preview = j.value("preview", std::vector<float>{}),
            .text = j.value("text", std::string())};
  } catch (const json::exception& e) {
    throw DataError(fmt::format("not a lesson item: {}", e.what()));
  }
}

}  // namespace dsgd::lessons
