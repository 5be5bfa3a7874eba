// The transcript of a lesson run. Each rank keeps a log, in its own program order, of what
// it printed, which README sections it reached and which messages it sent and received
// (from the event stream). The logs are merged into one text by logical time (Lamport
// clocks: a receive comes after its send; ties go to the lower rank), with sections acting
// as barriers, so the transcript depends only on what each rank did, never on how the
// threads or processes were scheduled: it can be compared with a golden file.
// Not a logger: it keeps what lessons show, and only while the lesson runs.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/events.h"
#include "lessons/lesson.h"

namespace dsgd::lessons {

struct LogItem {
  // call: one blocking call of a small program the lesson ran on a cluster of its own (the
  // deadlock demos), told as a line that --step pauses before.
  enum class Kind : uint8_t { say, print, section, send, recv, call };
  Kind kind = Kind::say;
  int peer = -1;  // send: destination; recv: source; call: the rank that made the call
  int tag = 0;
  uint64_t bytes = 0;
  bool shown = true;           // send: shown as a message line
  std::vector<float> preview;  // send: the first values (at most 4)
  std::string text;            // say, print, call: the line; section: its id
};

// "rank 0 -> rank 1 · tag 0 · 8 bytes · [1, -1]" ("秩 0 -> 秩 1 · 标签 0 · 8 字节 · ..."
// in Chinese); collectives show their name for the tag.
std::string message_line(int source, int dest, int tag, uint64_t bytes,
                         std::span<const float> preview, Lang lang);
// "[rank 2] " ("[秩 2] "): what starts a line a rank printed.
std::string rank_prefix(int rank, Lang lang);

// The text of a section, by id (readme.h), as the transcript shows it.
using SectionText = std::function<std::string(const std::string& id)>;

// Receives every rank's events (the EventSink of a run) and lesson output. Thread-safe:
// ranks record from their own threads; one reader takes the merged transcript.
class Recorder : public EventSink {
 public:
  // Messages and printed lines in `lang` (message_line, rank_prefix).
  explicit Recorder(Lang lang = Lang::en, int max_ranks = 256);

  void on_event(const Event& event) override;  // keeps send_begin and recv_end
  void add(int rank, LogItem item);
  void set_show_messages(int rank, bool on);
  bool shows_messages(int rank) const;
  // The rank's lesson has returned (or failed): its log is complete, later events of this
  // rank (such as the transfer of logs to rank 0) are not recorded.
  void set_done(int rank);
  // Called for each item as it is recorded (under the recorder's lock), for the live
  // output of --step mode. Also starts keeping each send's `shown` for take_shown().
  void set_live(std::function<void(int rank, const LogItem&)> live);
  // Whether the oldest message not yet taken from `source` to `dest` with `tag` is shown
  // (its sender's show_messages when it was sent); true when unknown.
  bool take_shown(int source, int dest, int tag);
  // What take_shown() will say for the next such message, without taking it.
  bool next_shown(int source, int dest, int tag) const;

  // MPI: a rank's log as floats (one byte each, exact), to send to rank 0, and back.
  std::vector<float> encode(int rank) const;
  void decode(int rank, std::span<const float> data);  // the log of `rank`; marks it done

  // The next part of the merged transcript of ranks 0..world-1: each run of items between
  // sections that every rank has finished (a done rank has finished them all); with
  // `final`, everything that is left. Each call returns only what earlier calls did not.
  std::string take_ready(int world, bool final, const SectionText& text);

  // Messages and payload bytes sent by ranks 0..world-1 so far (shown or not).
  std::pair<uint64_t, uint64_t> totals(int world) const;

  // What --step pauses at, in the logs of ranks 0..world-1 so far: parts (the most sections
  // one rank reached), messages shown and demo calls told.
  struct Pauses {
    int parts = 0;
    int messages = 0;
    int calls = 0;
  };
  Pauses pauses(int world) const;

 private:
  struct RankLog {
    std::vector<LogItem> items;
    bool show_messages = true;
    bool done = false;
  };
  using Key = std::tuple<int, int, int>;  // (source, dest, tag)

  std::string merge_segment_locked(int world, const std::vector<size_t>& end);

  mutable std::mutex mutex_;
  std::vector<RankLog> logs_;
  std::function<void(int, const LogItem&)> live_;
  std::map<std::tuple<int, int, int>, std::deque<bool>> shown_;  // live mode only
  Lang lang_;
  // Merge state, carried from one take_ready to the next.
  std::vector<size_t> cursor_;
  std::vector<uint64_t> clock_;
  std::map<Key, std::deque<uint64_t>> in_flight_;  // send clocks not yet received, FIFO
  std::map<Key, int> early_receives_;              // received before their send was merged
};

}  // namespace dsgd::lessons
