// The classroom's wire format (core/io/classroom_wire.h): every message reads back as it
// was written, and what is not one of them is refused with a reason.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "core/io/classroom_wire.h"

using namespace dsgd;

TEST_CASE("classroom messages read back as written", "[classroom]") {
  const ClassroomMessage join =
      parse_classroom_line(classroom_join_line({.token = "room42", .name = "alice"}));
  REQUIRE(join.join);
  CHECK(join.join->token == "room42");
  CHECK(join.join->name == "alice");
  CHECK(parse_classroom_line(classroom_welcome_line(3)).welcome == 3);
  CHECK(parse_classroom_line(classroom_refused_line("wrong job token")).refused ==
        "wrong job token");
  const ClassroomStart sent{.run = 2,
                            .rank = 1,
                            .world = 4,
                            .rendezvous = "10.0.0.5:29502",
                            .monitor_port = 29501,
                            .lesson = 0,
                            .lang = "zh",
                            .spec_json = R"({"model":"mlp:16","steps":5})"};
  const ClassroomMessage start = parse_classroom_line(classroom_start_line(sent));
  REQUIRE(start.start);
  CHECK(start.start->run == 2);
  CHECK(start.start->rank == 1);
  CHECK(start.start->world == 4);
  CHECK(start.start->rendezvous == "10.0.0.5:29502");
  CHECK(start.start->monitor_port == 29501);
  CHECK(start.start->lang == "zh");
  CHECK(start.start->spec_json == sent.spec_json);
  const ClassroomMessage done =
      parse_classroom_line(classroom_done_line({.run = 2, .error = "lost rank 3"}));
  REQUIRE(done.done);
  CHECK(done.done->run == 2);
  CHECK(done.done->error == "lost rank 3");
  const ClassroomJoined joined{.run = 2, .node = 4, .world = 5};
  CHECK(parse_classroom_line(classroom_joined_line(joined)).joined == joined);
  CHECK(parse_classroom_line(classroom_end_line("over")).end == "over");
  CHECK(classroom_end_line("x").back() == '\n');
}

TEST_CASE("a lesson's lines between laptops and the window read back as written", "[classroom]") {
  const ClassroomMessage item = parse_classroom_line(
      classroom_item_line({.run = 3, .rank = 2, .item_json = R"({"kind":"print","text":"hi"})"}));
  REQUIRE(item.item);
  CHECK(item.item->run == 3);
  CHECK(item.item->rank == 2);
  CHECK(item.item->item_json == R"({"kind":"print","text":"hi"})");
  const ClassroomRankState state{.run = 3,
                                 .rank = 2,
                                 .attached = true,
                                 .busy = false,
                                 .sent = 7,
                                 .received = 5,
                                 .released = 4,
                                 .next = ClassroomPending{.source = 1,
                                                          .dest = 2,
                                                          .tag = 9,
                                                          .seq = 12,
                                                          .count = 1000,
                                                          .model_s = 0.25,
                                                          .net_s = 1.5,
                                                          .preview = {1, -0.5f, 3, 4}}};
  const ClassroomMessage read = parse_classroom_line(classroom_state_line(state));
  REQUIRE(read.state);
  CHECK(*read.state == state);
  ClassroomRankState idle = state;
  idle.next.reset();
  CHECK(parse_classroom_line(classroom_state_line(idle)).state == idle);
  const ClassroomMessage release = parse_classroom_line(
      classroom_release_line({.run = 3, .source = 1, .seq = 12, .net_s = 1.5}));
  REQUIRE(release.release);
  CHECK(release.release->source == 1);
  CHECK(release.release->seq == 12);
  CHECK(release.release->net_s == 1.5);
  const ClassroomMessage pace =
      parse_classroom_line(classroom_pace_line({.run = 3, .step = false}));
  REQUIRE(pace.pace);
  CHECK(pace.pace->run == 3);
  CHECK_FALSE(pace.pace->step);
  ClassroomStart stepped{.run = 1, .world = 2, .rendezvous = "a:1", .lesson = 4, .step = true};
  CHECK(parse_classroom_line(classroom_start_line(stepped)).start->step);
}

TEST_CASE("what is not a classroom message is refused with a reason", "[classroom]") {
  const auto why = [](const std::string& line) {
    try {
      parse_classroom_line(line);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(why("GET / HTTP/1.0").find("not a dsgd classroom line") != std::string::npos);
  CHECK(why(R"({"dsgd_classroom":2,"token":"t"})").find("version 2") != std::string::npos);
  CHECK(why(R"({"hello":1})").find("neither a join") != std::string::npos);
  CHECK(why(R"({"start":{"run":1,"rank":4,"world":4,"rendezvous":"x","monitor_port":1}})")
            .find("rank 4 in a run of 4") != std::string::npos);
  CHECK(why(R"({"start":{"run":1,"rank":0,"world":2}})").find("not a dsgd classroom") !=
        std::string::npos);
  CHECK(why(R"({"item":{"run":1,"rank":0,"item":"print"}})").find("not an object") !=
        std::string::npos);
  CHECK(why(R"({"release":{"run":1}})").find("not a dsgd classroom") != std::string::npos);
  CHECK(why("[1,2]").find("not one classroom message") != std::string::npos);
}
