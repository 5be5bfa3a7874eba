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
                       .lang = s.value("lang", std::string("en")),
                       .step = s.value("step", false),
                       .join = s.value("join", false)};
  if (const auto spec = s.find("spec"); spec != s.end() && spec->is_object())
    start.spec_json = spec->dump();
  if (start.world < 1 || start.rank < 0 || start.rank >= start.world)
    throw DataError(fmt::format("a start of rank {} in a run of {}", start.rank, start.world));
  if (start.monitor_port < 0 || start.monitor_port > 65535)
    throw DataError(fmt::format("a start with monitor port {}", start.monitor_port));
  return start;
}

json pending_json(const ClassroomPending& p) {
  return {{"source", p.source}, {"dest", p.dest},       {"tag", p.tag},     {"seq", p.seq},
          {"count", p.count},   {"model_s", p.model_s}, {"net_s", p.net_s}, {"preview", p.preview}};
}

ClassroomPending parse_pending(const json& p) {
  return {.source = p.at("source").get<int>(),
          .dest = p.at("dest").get<int>(),
          .tag = p.at("tag").get<int>(),
          .seq = p.at("seq").get<uint64_t>(),
          .count = p.value("count", uint64_t{0}),
          .model_s = p.value("model_s", 0.0),
          .net_s = p.value("net_s", 0.0),
          .preview = p.value("preview", std::vector<float>{})};
}

ClassroomRankState parse_state(const json& s) {
  ClassroomRankState state{.run = s.at("run").get<int>(),
                           .rank = s.at("rank").get<int>(),
                           .attached = s.value("attached", false),
                           .busy = s.value("busy", false),
                           .sent = s.value("sent", uint64_t{0}),
                           .received = s.value("received", uint64_t{0}),
                           .released = s.value("released", uint64_t{0})};
  if (const auto n = s.find("next"); n != s.end() && n->is_object()) state.next = parse_pending(*n);
  return state;
}

ClassroomItem parse_item(const json& i) {
  const json& item = i.at("item");
  if (!item.is_object()) throw DataError("an item that is not an object");
  return {.run = i.at("run").get<int>(), .rank = i.at("rank").get<int>(), .item_json = item.dump()};
}

// The lines a run's laptops and its stepper exchange; false when `j` is none of them.
bool parse_run_line(const json& j, ClassroomMessage& m) {
  if (const auto i = j.find("item"); i != j.end()) {
    m.item = parse_item(*i);
  } else if (const auto s = j.find("state"); s != j.end()) {
    m.state = parse_state(*s);
  } else if (const auto r = j.find("release"); r != j.end()) {
    m.release = ClassroomRelease{.run = r->at("run").get<int>(),
                                 .source = r->at("source").get<int>(),
                                 .seq = r->at("seq").get<uint64_t>(),
                                 .net_s = r->value("net_s", 0.0)};
  } else if (const auto p = j.find("pace"); p != j.end()) {
    m.pace = ClassroomPace{.run = p->at("run").get<int>(), .step = p->at("step").get<bool>()};
  } else {
    return false;
  }
  return true;
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
         {"lang", s.lang},
         {"step", s.step},
         {"join", s.join}};
  if (!s.spec_json.empty()) j["spec"] = json::parse(s.spec_json);
  return line({{"start", j}});
}

std::string classroom_done_line(const ClassroomDone& d) {
  return line({{"done", {{"run", d.run}, {"error", d.error}}}});
}

std::string classroom_joined_line(const ClassroomJoined& j) {
  return line({{"joined", {{"run", j.run}, {"node", j.node}, {"world", j.world}}}});
}

std::string classroom_end_line(const std::string& why) {
  return line({{"end", why}});
}

std::string classroom_item_line(const ClassroomItem& i) {
  return line({{"item", {{"run", i.run}, {"rank", i.rank}, {"item", json::parse(i.item_json)}}}});
}

std::string classroom_state_line(const ClassroomRankState& s) {
  json j{{"run", s.run},   {"rank", s.rank},         {"attached", s.attached}, {"busy", s.busy},
         {"sent", s.sent}, {"received", s.received}, {"released", s.released}};
  j["next"] = s.next ? pending_json(*s.next) : json(nullptr);
  return line({{"state", j}});
}

std::string classroom_release_line(const ClassroomRelease& r) {
  return line(
      {{"release", {{"run", r.run}, {"source", r.source}, {"seq", r.seq}, {"net_s", r.net_s}}}});
}

std::string classroom_pace_line(const ClassroomPace& p) {
  return line({{"pace", {{"run", p.run}, {"step", p.step}}}});
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
    } else if (const auto jd = j.find("joined"); jd != j.end()) {
      m.joined = ClassroomJoined{.run = jd->at("run").get<int>(),
                                 .node = jd->at("node").get<int>(),
                                 .world = jd->at("world").get<int>()};
    } else if (const auto e = j.find("end"); e != j.end()) {
      m.end = e->get<std::string>();
    } else if (!parse_run_line(j, m)) {
      throw DataError(
          "neither a join, a welcome, a refusal, a start, a done, a joined, an end nor a "
          "lesson's line");
    }
    return m;
  } catch (const json::exception& e) {
    throw DataError(fmt::format("not a dsgd classroom line: {}", e.what()));
  }
}

}  // namespace dsgd
