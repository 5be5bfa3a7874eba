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
  CHECK(parse_classroom_line(classroom_end_line("over")).end == "over");
  CHECK(classroom_end_line("x").back() == '\n');
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
  CHECK(why("[1,2]").find("not one classroom message") != std::string::npos);
}
