#include "lessons/runner.h"

#include <chrono>

namespace dsgd::lessons {

void run_lesson_rank(Communicator& comm, const LessonInfo& info, Recorder& recorder,
                     const LessonSettings& settings, bool gather_logs) {
  LessonContext ctx(comm, recorder, settings);
  try {
    info.run(ctx);
  } catch (...) {
    recorder.set_done(comm.rank());
    throw;
  }
  recorder.set_done(comm.rank());
  if (!gather_logs || comm.size() == 1) return;
  // Rank 0 may still be busy with a long part of the lesson when the others get here;
  // the transfer waits for it longer than an ordinary call would.
  const Deadline patient = Deadline::after(std::chrono::minutes(10));
  if (comm.rank() != 0) {
    std::vector<float> log = recorder.encode(comm.rank());
    const float length[2] = {static_cast<float>(log.size() >> 20),
                             static_cast<float>(log.size() & ((1u << 20) - 1))};
    comm.send(length, 0, kLogTag, patient);
    comm.send(log, 0, kLogTag, patient);
    return;
  }
  for (int r = 1; r < comm.size(); ++r) {
    float length[2];
    comm.recv(length, r, kLogTag, patient);
    std::vector<float> log((static_cast<size_t>(length[0]) << 20) + static_cast<size_t>(length[1]));
    comm.recv(log, r, kLogTag, patient);
    recorder.decode(r, log);
  }
}

}  // namespace dsgd::lessons
