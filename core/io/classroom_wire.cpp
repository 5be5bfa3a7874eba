#include "core/io/classroom_wire.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace dsgd {

using nlohmann::json;

namespace {

std::string line(const json& j) {
  return j.dump() + "\n";
}

ClassroomJoin parse_join(const json& j) {
  if (j["dsgd_classroom"] != kClassroomVersion)
    throw DataError(fmt::format("a classroom message of version {}, this dsgd speaks {}",
                                j["dsgd_classroom"].dump(), kClassroomVersion));
  return {.token = j.value("token", std::string()), .name = j.value("name", std::string())};
}

ClassroomStart parse_start(const json& s) {
  ClassroomStart start{.run = s.at("run").get<int>(),
                       .rank = s.at("rank").get<int>(),
                       .world = s.at("world").get<int>(),
                       .rendezvous = s.at("rendezvous").get<std::string>(),
                       .monitor_port = s.at("monitor_port").get<int>(),
                       .lesson = s.value("lesson", 0),
                       .lang = s.value("lang", std::string("en"))};
  if (const auto spec = s.find("spec"); spec != s.end() && spec->is_object())
    start.spec_json = spec->dump();
  if (start.world < 1 || start.rank < 0 || start.rank >= start.world)
    throw DataError(fmt::format("a start of rank {} in a run of {}", start.rank, start.world));
  if (start.monitor_port < 0 || start.monitor_port > 65535)
    throw DataError(fmt::format("a start with monitor port {}", start.monitor_port));
  return start;
}

}  // namespace

std::string classroom_join_line(const ClassroomJoin& join) {
  return line({{"dsgd_classroom", kClassroomVersion}, {"token", join.token}, {"name", join.name}});
}

std::string classroom_welcome_line(int seat) {
  return line({{"welcome", {{"seat", seat}}}});
}

std::string classroom_refused_line(const std::string& why) {
  return line({{"refused", why}});
}

std::string classroom_start_line(const ClassroomStart& s) {
  json j{{"run", s.run},
         {"rank", s.rank},
         {"world", s.world},
         {"rendezvous", s.rendezvous},
         {"monitor_port", s.monitor_port},
         {"lesson", s.lesson},
         {"lang", s.lang}};
  if (!s.spec_json.empty()) j["spec"] = json::parse(s.spec_json);
  return line({{"start", j}});
}

std::string classroom_done_line(const ClassroomDone& d) {
  return line({{"done", {{"run", d.run}, {"error", d.error}}}});
}

std::string classroom_end_line(const std::string& why) {
  return line({{"end", why}});
}

ClassroomMessage parse_classroom_line(std::string_view text) {
  try {
    const json j = json::parse(text.begin(), text.end());
    if (!j.is_object() || (j.size() != 1 && !j.contains("dsgd_classroom")))
      throw DataError("not one classroom message");
    ClassroomMessage m;
    if (j.contains("dsgd_classroom")) {
      m.join = parse_join(j);
    } else if (const auto w = j.find("welcome"); w != j.end()) {
      m.welcome = w->at("seat").get<int>();
    } else if (const auto r = j.find("refused"); r != j.end()) {
      m.refused = r->get<std::string>();
    } else if (const auto s = j.find("start"); s != j.end()) {
      m.start = parse_start(*s);
    } else if (const auto d = j.find("done"); d != j.end()) {
      m.done =
          ClassroomDone{.run = d->at("run").get<int>(), .error = d->value("error", std::string())};
    } else if (const auto e = j.find("end"); e != j.end()) {
      m.end = e->get<std::string>();
    } else {
      throw DataError("neither a join, a welcome, a refusal, a start, a done nor an end");
    }
    return m;
  } catch (const json::exception& e) {
    throw DataError(fmt::format("not a dsgd classroom line: {}", e.what()));
  }
}

}  // namespace dsgd
