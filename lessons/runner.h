// Runs a lesson's program on one rank: makes its LessonContext, records its output, and on
// backends where every rank is its own process (MPI) sends each rank's log to rank 0, which
// merges the transcript. Not a launcher: the caller provides the Communicator.
#pragma once

#include "core/comm/communicator.h"
#include "lessons/lesson.h"
#include "lessons/transcript.h"

namespace dsgd::lessons {

// Tag of the log transfer, the highest user tag: lessons use small tags.
inline constexpr int kLogTag = kCollectiveTagBase - 1;

// Runs info.run on this rank, recording into `recorder` (which must also be the events
// sink of `comm`). With gather_logs, ranks other than 0 then send their logs to rank 0,
// which stores them in its recorder. Rethrows what the lesson throws.
void run_lesson_rank(Communicator& comm, const LessonInfo& info, Recorder& recorder,
                     const LessonSettings& settings, bool gather_logs);

}  // namespace dsgd::lessons
