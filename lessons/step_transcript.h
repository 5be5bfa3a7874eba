// StepTranscript: a lesson's output while it runs, for watching it live (`dsgd lesson N
// --step` prints its lines as they come; dsgd-gui's lesson panel shows them). Every rank's
// items (Recorder::set_live) come out in the rank's program order, across ranks in the order
// they were recorded, as lines: a section's text, say, print and message lines. A rank's
// items wait while the message its receive took has not come out, so a receiver's output
// never comes before the message it got. How messages and sections come out is the pace:
// - stepped (`dsgd lesson --step`): the caller delivers every message itself (SimControl in
//   step mode throughout) and reports it with delivered(), which puts out its line; a
//   receive waits for its delivery. The lesson keeps its ranks in step at each section
//   (LessonSettings::sync_sections), so a section comes out as rank 0 reaches it.
// - free (dsgd-gui): messages are stepped or run freely; a message's line comes out with its
//   receive, after its send; a section once every rank has reached it (without messages).
// Not the merged transcript of a finished run (transcript.h: logical time, golden files).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "lessons/readme.h"
#include "lessons/transcript.h"
#include "sim/control.h"

namespace dsgd::lessons {

struct TranscriptLine {
  enum class Kind : uint8_t { section, say, print, message, call };
  Kind kind = Kind::say;
  int rank = 0;      // print, message, call: the rank (the sender for a message)
  std::string text;  // section: its README text; message: message_line()
};

class StepTranscript {
 public:
  enum class Pace { stepped, free };

  StepTranscript(int world, LessonText text, Pace pace);

  void add(int rank, const LogItem& item);  // from Recorder::set_live; any thread
  // Stepped: `message` was delivered; its line comes out when `shown` (its sender showed
  // messages when it sent it: Recorder::take_shown; not a section's message).
  void delivered(const sim::StepInfo& message, bool shown);
  // The run is over: whatever is held back comes out.
  void finish();

  // The lines from the `first`-th on.
  std::vector<TranscriptLine> lines(size_t first = 0) const;
  size_t line_count() const;
  int sections_shown() const;

 private:
  using Key = std::tuple<int, int, int>;  // (source, dest, tag)
  struct Queued {
    uint64_t seq;  // the order items were recorded in, over all ranks
    LogItem item;
  };
  struct Sent {  // free: a send that came out, waiting for its receive
    bool shown = true;
    uint64_t bytes = 0;
    std::vector<float> preview;
  };

  void drain_locked();
  int next_rank_locked() const;  // the rank whose next item comes out now, or -1
  bool may_come_out_locked(int rank, const LogItem& item) const;
  void take_locked(int rank, const LogItem& item);
  void take_section_locked(int rank, const LogItem& item);
  bool next_section_locked();  // free: the next section, once every rank reached it

  const int world_;
  const LessonText text_;
  const Pace pace_;
  mutable std::mutex mutex_;
  std::vector<std::deque<Queued>> queues_;  // per rank, not yet out
  uint64_t next_seq_ = 0;
  bool finished_ = false;
  std::vector<TranscriptLine> lines_;
  // Stepped: deliveries, and the receives that came out, per (source, dest, tag).
  std::map<Key, uint64_t> delivered_, received_;
  // Free: sends that came out, unreceived; sections each rank has passed, their ids in the
  // order reached, and how many came out (barriers passed, with text or from next_group()).
  std::map<Key, std::deque<Sent>> sent_;
  std::vector<int> reached_;
  std::vector<std::string> section_ids_;
  int passed_sections_ = 0;
};

}  // namespace dsgd::lessons
