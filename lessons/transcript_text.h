// A lesson's transcript as `dsgd lesson N` prints it: a header (the title, the ranks, the
// intro), the merged transcript, and a footer counting the messages and bytes. The terminal's
// runs, MPI's rank 0 and dsgd-gui's classroom (its laptops' lesson) print the same text, so
// each can be compared with the golden files (tests/golden/lessons).
#pragma once

#include <string>

#include "lessons/readme.h"
#include "lessons/transcript.h"

namespace dsgd::lessons {

// "# Lesson 2 · ...\n2 ranks\n\n" and the intro; `step`: with the --step hint.
std::string transcript_header(const LessonText& text, int world, Lang lang, bool step);
// "-- end of lesson: 4 messages, 20 bytes --\n".
std::string transcript_footer(const Recorder& recorder, int world, Lang lang);
// The header, what is left of the merged transcript of ranks 0..world-1
// (Recorder::take_ready, final), one blank line, and the footer.
std::string finished_transcript(Recorder& recorder, const LessonText& text, int world, Lang lang);

}  // namespace dsgd::lessons
