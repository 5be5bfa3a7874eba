// dsgd-gui --classroom: the teacher's side welcomes students with the token and refuses the
// rest, numbers those waiting when a run starts, hears how each run ended and who left; and
// real `dsgd node` students on loopback train the teacher's run, streamed to the window, and
// take a lesson the window steps a message at a time, to its golden transcript.
#include <catch2/catch.hpp>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>

#include "core/errors.h"
#include "gui/model/app.h"
#include "gui/model/classroom.h"
#include "node_processes.h"
#include "raw_socket.h"
#include "sim/classroom_client.h"
#include "temp_dir.h"
#include "wait_until.h"

using namespace dsgd;
using namespace dsgd::gui;
using boost::asio::ip::tcp;

namespace {

tcp::endpoint on_loopback(int port) {
  return {boost::asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)};
}

std::unique_ptr<sim::ClassroomClient> student(int port, const std::string& name,
                                              const std::string& token = "room42") {
  return std::make_unique<sim::ClassroomClient>(on_loopback(port),
                                                ClassroomJoin{.token = token, .name = name},
                                                Clock::now() + std::chrono::seconds(30));
}

// A class in the window, and a real `dsgd node` student for each name (logs under `logs`),
// once every one of them waits. The class's port and the two after it (the run's watch, rank
// 0's rendezvous) are free.
std::vector<std::unique_ptr<test::Process>> open_class(GuiApp& app,
                                                       std::initializer_list<const char*> names,
                                                       const test::TempDir& logs) {
  app.open_classroom(std::make_unique<Classroom>("127.0.0.1", test::free_ports(3), "room42"));
  const int port = app.classroom()->port();
  std::vector<std::unique_ptr<test::Process>> students;
  for (const char* name : names)
    students.push_back(std::make_unique<test::Process>(
        fmt::format("node --rendezvous 127.0.0.1:{} --token room42 --name {}", port, name),
        logs / name));
  const int n = static_cast<int>(names.size());
  REQUIRE(test::wait_for([&] { return app.classroom()->state().waiting() == n; }));
  return students;
}

}  // namespace

TEST_CASE("a classroom welcomes students with the token, refuses others, sees who leaves",
          "[gui][classroom]") {
  Classroom room("127.0.0.1", 0, "room42");
  auto alice = student(room.port(), "alice");
  auto bob = student(room.port(), "bob");
  CHECK(alice->seat() == 1);
  CHECK(bob->seat() == 2);
  CHECK(alice->local_address() == "127.0.0.1");
  try {
    student(room.port(), "mallory", "guess");
    FAIL("a wrong token was let in");
  } catch (const CommError& e) {
    CHECK(std::string(e.what()).find("refused this node: wrong job token") != std::string::npos);
  }
  const int foreign = test::raw_connect(static_cast<uint16_t>(room.port()));
  test::raw_send(foreign, {'G', 'E', 'T', ' ', '/', '\n'});
  const std::optional<std::string> answer =
      test::read_until_closed(foreign, std::chrono::seconds(10));
  REQUIRE(answer);  // closed, with the reason
  CHECK(answer->find("refused") != std::string::npos);
  ::close(foreign);
  REQUIRE(test::wait_for([&] { return room.state().refused == 2; }));
  ClassroomState c = room.state();
  REQUIRE(c.students.size() == 2);
  CHECK(c.students[0].name == "alice");
  CHECK(c.students[1].address == "127.0.0.1");
  CHECK(c.waiting() == 2);
  CHECK(c.last_refusal.find("not a dsgd classroom line") != std::string::npos);
  alice.reset();  // her laptop closes
  REQUIRE(test::wait_for([&] { return !room.state().students[0].here; }));
  CHECK(room.state().waiting() == 1);
}

TEST_CASE("a connection that does not join in time is refused", "[gui][classroom]") {
  Classroom room("127.0.0.1", 0, "room42", std::chrono::milliseconds(300));
  const int silent = test::raw_connect(static_cast<uint16_t>(room.port()));
  const std::optional<std::string> answer =
      test::read_until_closed(silent, std::chrono::seconds(30));
  ::close(silent);
  REQUIRE(answer);  // closed by the classroom
  const ClassroomState c = room.state();
  CHECK(c.refused == 1);
  CHECK(c.students.empty());
  CHECK(c.last_refusal.find("did not join within 0.3 s") != std::string::npos);
  auto alice = student(room.port(), "alice");  // a student who joins at once is welcome
  CHECK(alice->seat() == 1);
}

TEST_CASE("a classroom's run numbers the students waiting and hears how it ended",
          "[gui][classroom]") {
  auto room = std::make_unique<Classroom>("127.0.0.1", 0, "room42");
  auto alice = student(room->port(), "alice");
  auto bob = student(room->port(), "bob");
  REQUIRE(test::wait_for([&] { return room->state().waiting() == 2; }));
  CHECK_THROWS_AS(room->start({.world = 3, .spec_json = "{}"}), UsageError);
  CHECK_THROWS_AS(room->add_to_run(), UsageError);  // no run under way, nor an elastic one
  CHECK(room->start({.world = 2, .spec_json = R"({"steps":5})"}) == 1);
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  const std::optional<ClassroomStart> a = alice->next_run(deadline);
  const std::optional<ClassroomStart> b = bob->next_run(deadline);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->rank == 0);
  CHECK(b->rank == 1);
  CHECK(a->world == 2);
  CHECK(a->rendezvous == fmt::format("127.0.0.1:{}", room->port() + 2));
  CHECK(a->monitor_port == room->monitor_port());
  CHECK(a->spec_json == R"({"steps":5})");
  CHECK(room->state().running());
  CHECK(room->state().waiting() == 0);
  alice->done({.run = 1});
  bob->done({.run = 1, .error = "rank 1: lost rank 0"});
  REQUIRE(test::wait_for([&] { return !room->state().running(); }));
  const ClassroomState c = room->state();
  CHECK(c.students[0].outcome == "finished");
  CHECK(c.students[1].outcome == "rank 1: lost rank 0");
  CHECK(c.waiting() == 2);
  room.reset();  // the teacher closes the window: the class is over for everyone
  CHECK_FALSE(alice->next_run(Clock::now() + std::chrono::seconds(30)));
}

TEST_CASE("an elastic run under way takes the students who join later", "[gui][classroom]") {
  Classroom room("127.0.0.1", 0, "room42");
  auto alice = student(room.port(), "alice");
  REQUIRE(test::wait_for([&] { return room.state().waiting() == 1; }));
  CHECK(room.start({.world = 1, .spec_json = "{}", .elastic = true}) == 1);
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  REQUIRE(alice->next_run(deadline));
  auto bob = student(room.port(), "bob");  // late
  auto cho = student(room.port(), "cho");
  REQUIRE(test::wait_for([&] { return room.state().waiting() == 2; }));
  CHECK(room.add_to_run() == 2);
  for (auto* late : {bob.get(), cho.get()}) {
    const std::optional<ClassroomStart> s = late->next_run(deadline);
    REQUIRE(s);
    CHECK(s->join);  // rank 0 numbers them
    CHECK(s->run == 1);
    CHECK(s->rendezvous == fmt::format("127.0.0.1:{}", room.port() + 2));
  }
  ClassroomState c = room.state();
  CHECK(c.elastic);
  CHECK(c.waiting() == 0);
  CHECK(c.students[1].rank == -1);
  CHECK(c.students[1].running);
  CHECK(c.world == 1);
  bob->send(classroom_joined_line({.run = 1, .node = 1, .world = 2}));  // its rank 0 numbered it
  REQUIRE(test::wait_for([&] { return room.state().students[1].rank == 1; }));
  CHECK(room.state().world == 2);
  bob->done({.run = 1});
  REQUIRE(test::wait_for([&] { return room.state().students[1].outcome == "finished"; }));
  alice->done({.run = 1});
  cho->done({.run = 1});
  REQUIRE(test::wait_for([&] { return !room.state().running(); }));
  CHECK_THROWS_AS(room.add_to_run(), UsageError);  // the run is over
  CHECK(room.start({.world = 3, .spec_json = "{}"}) == 2);
  CHECK_THROWS_AS(room.add_to_run(), UsageError);  // not elastic
}

TEST_CASE("dsgd node students train the teacher's run and the window watches it",
          "[gui][classroom]") {
  GuiApp app;
  const test::TempDir logs;
  const auto students = open_class(app, {"ann", "ben", "cho"}, logs);
  app.view().draft.run.steps = 5;
  app.view().draft.run.model = "mlp:16";
  Commands start;
  start.push(Command{.kind = CommandKind::start_class_run, .index = 0});
  app.apply(start);
  INFO(app.snapshot().error);
  REQUIRE(app.snapshot().error.empty());
  REQUIRE(test::wait_for([&] {
    const ClassroomState c = app.classroom()->state();
    return c.run == 1 && !c.running();
  }));
  REQUIRE(test::wait_for([&] {  // every laptop said hello, sent its events and hung up
    const WatchState w = app.watch()->state();
    return w.senders.size() == 3 && w.connected == 0;
  }));
  std::string said;  // what the laptops said, should their run have failed
  for (const auto& p : students)
    said += p->err();
  INFO(said);
  const Snapshot s = app.snapshot();
  CHECK(s.world == 3);
  CHECK(s.classroom.active);
  CHECK(s.classroom.join_command.find("--token room42") != std::string::npos);
  REQUIRE(s.rank_names.size() == 3);
  for (const Student& st : app.classroom()->state().students) {  // ranks in the order they joined
    INFO(st.name << ": " << st.outcome);
    CHECK(st.outcome == "finished");
    CHECK(st.rank == st.seat - 1);
    CHECK(s.rank_names[static_cast<size_t>(st.rank)] == st.name);
  }
  app.open_classroom(nullptr);  // the class ends: every student's dsgd node exits 0
  for (auto& p : students) {
    INFO(p->err());
    CHECK(p->wait(std::chrono::seconds(30)) == 0);
    CHECK(p->err().find("the class is over") != std::string::npos);
  }
}

namespace {

int message_lines(const LessonView& v) {
  return static_cast<int>(std::count_if(v.lines.begin(), v.lines.end(), [](const LessonLine& l) {
    return l.kind == LessonLine::Kind::message;
  }));
}

}  // namespace

TEST_CASE("dsgd node students take a lesson stepped from the window, to its golden transcript",
          "[gui][classroom]") {
  GuiApp app;
  const test::TempDir logs;
  const auto students = open_class(app, {"ann", "ben"}, logs);
  Commands commands;
  commands.push(Command{.kind = CommandKind::start_class_run, .flag = false, .index = 2});
  app.apply(commands);
  INFO(app.snapshot().error);
  REQUIRE(app.snapshot().error.empty());
  ClassLesson* lesson = app.class_lesson();
  REQUIRE(lesson);
  CHECK(lesson->step_mode());
  // Lesson 2 shows four messages: each goes through when the teacher steps, not before (its
  // line comes out with its receive, so a message received after a later one shows later).
  for (int step = 1; step <= 4; ++step) {
    INFO("step " << step);
    commands.push(CommandKind::step_message);
    app.apply(commands);
    REQUIRE(test::wait_for([&] {
      app.apply(commands);  // a frame: poll() lets the stepped message through
      return lesson->pending_steps() == 0;
    }));
    if (step == 1)
      REQUIRE(test::wait_for([&] { return message_lines(app.snapshot().lesson) == 1; }));
    CHECK(message_lines(app.snapshot().lesson) <= step);
  }
  REQUIRE(
      test::wait_for([&] { return lesson->finished() && !app.classroom()->state().running(); }));
  CHECK(message_lines(app.snapshot().lesson) == 4);
  for (const Student& st : app.classroom()->state().students) {
    INFO(st.name << ": " << st.outcome);
    CHECK(st.outcome == "finished");
  }
  CHECK(app.snapshot().lesson.sections_shown == app.snapshot().lesson.sections_total);
  CHECK(lesson->take_transcript() ==
        test::read_text(std::filesystem::path(DSGD_SOURCE_DIR) / "tests/golden/lessons/02.txt"));
  app.open_classroom(nullptr);
  for (auto& p : students) {
    INFO(p->err());
    CHECK(p->wait(std::chrono::seconds(30)) == 0);
  }
  CHECK(test::read_text(logs / "ann.out").find("Point-to-point") != std::string::npos);
}
