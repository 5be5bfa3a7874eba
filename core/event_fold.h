// The event fold: the one place where the event stream (events.h) becomes what people look
// at. Fed events in order per rank (ranks may interleave, a receive may come before its
// send), it keeps slices per rank (steps, compute phases, collectives, message ends, notes,
// and what is still open), messages (the k-th send src -> dst with tag t paired with the k-th
// receive at dst from src with tag t), each message's place in its collective
// (message_phase.h), and per rank its state (step, computing, in a collective, how far its
// all_reduce has come). The trace writer and the GUI snapshot (live runs and replayed
// traces alike) use it, so they draw and label the same things.
// Not thread-safe and not a sink: the caller owns the events and feeds them one by one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "core/comm/message_phase.h"
#include "core/events.h"

namespace dsgd {

// An instant in both clocks, and which event (its index among those fed) gave it.
struct Stamp {
  size_t event = 0;
  double wall_s = 0;
  double model_s = -1;  // -1: the event had no model time
};

enum class SliceKind : uint8_t { step, compute, collective, send, recv, note };

struct FoldSlice {
  SliceKind kind = SliceKind::note;
  int rank = 0;
  const char* name = "";  // compute, collective, note: the event's op
  // collective: its messages' tag label ("all_reduce halving_doubling"), naming the algorithm
  // that ran it; "" before a message of it is seen
  const char* label = "";
  uint64_t seq = 0;    // step: the step number; note: the event's seq
  uint64_t bytes = 0;  // collective: its payload (from its begin); send, recv: the message's
  int peer = -1;       // send: dst; recv: src (-1: any source, for a receive never completed); note
  int tag = 0;         // send, recv, note
  uint64_t k = 0;      // send, recv: the message's ordinal among src -> dst with this tag
  int message = -1;    // send, recv: index into messages(); -1 while the send is not seen
  Stamp begin, end;    // a receive begins where it was posted (or at its end, if never)
  bool ended = true;   // false: a send whose send_end has not come (yet), or an open slice
  // Ended by a kRoundEndNote (events.h) rather than by its own end: it never finished.
  bool abandoned = false;
};

struct FoldMessage {
  int src = 0, dst = 0, tag = 0;
  uint64_t k = 0, bytes = 0;
  Stamp sent;     // its send_begin
  Stamp arrived;  // its recv_end, when has_arrived
  bool has_arrived = false;
  int ordinal = -1;                // the sender's m-th message in its collective; -1: user p2p
  uint64_t collective_floats = 0;  // that collective's buffer (its begin's bytes / 4), 0 unknown
  int send_slice = -1, recv_slice = -1;  // indices into slices()
  int retransmits = 0;     // times it was lost and sent again (a kRetransmitNote, events.h)
  bool abandoned = false;  // not received when its sender's or receiver's round ended
  uint8_t preview_count = 0;
  std::array<float, 4> preview{};
};

// What a rank is doing, as of the last event fed for it.
struct RankFold {
  int64_t step = 0;  // the highest step it began
  Stamp last;        // its latest event
  bool computing = false, in_collective = false;
};

class EventFold {
 public:
  // `world`: the ranks, when known (the schedules need it); more are counted as seen.
  explicit EventFold(int world = 0) : world_(world) {}

  // Room for `events` more events' slices and messages (at most one of each per event), so
  // that a fold of a whole window does not copy them as it grows.
  void reserve(size_t events);
  void add(const Event& e);
  // A receive that completes past the caller's time cursor: it gives its message's arrival
  // and nothing else (a replay scrubbed back knows when messages in flight will land). Feed
  // it after every add() of its rank.
  void add_arrival(const Event& recv_end);

  int world() const { return world_; }
  // In the order recorded: sends and notes when they begin, the others when they end.
  const std::vector<FoldSlice>& slices() const { return slices_; }
  // Rank r's slices still open: steps, compute phases, collectives, posted receives, in
  // that order, each in the order begun (ended = false, end = begin).
  std::vector<FoldSlice> open_slices(int rank) const;
  const std::vector<FoldMessage>& messages() const { return messages_; }  // in send order
  MessagePhase phase(const FoldMessage& m) const;
  RankFold rank(int r) const;

  // Rank r's latest all_reduce: the algorithm its messages' tag names (automatic before
  // one is seen), and how many ranks' values each part of its buffer holds: for the ring
  // one count per chunk (R of them, RingSchedule::contributions after the steps it has
  // completed), otherwise one count for the whole buffer. All 1 before it began; all R once
  // it ended. `assumed`: the algorithm while its messages have not shown one.
  Algorithm all_reduce_algorithm(int r) const;
  std::vector<int> all_reduce_contributions(int r, Algorithm assumed) const;

 private:
  struct Open {
    const char* name = "";
    uint64_t value = 0;      // step: its number; collective: its bytes
    int peer = -1, tag = 0;  // recv: the source asked for (-1: any) and the tag
    Stamp begin;
  };
  // The collective a rank is in (or was last in), as its messages count it.
  struct Progress {
    const char* op = "";
    bool open = false, ended = false, all_reduce = false;
    uint64_t bytes = 0;
    int tag = -1;  // the reserved tag its messages carry; -1 before the first
    int sent = 0, received = 0;
  };
  struct RankState {
    std::vector<Open> steps, computes, collectives, recvs;
    std::vector<size_t> unended_sends;  // slices of sends waiting for their send_end
    Progress current, all_reduce;       // the latest collective, and the latest all_reduce
    int64_t round_ended = -1;           // the latest round of an elastic run it ended
    RankFold fold;
  };
  // src, dst, tag, and the round of an elastic run (a message event's seq >> kRoundShift,
  // events.h): a message of a round that ended unreceived pairs with nothing of the next.
  using Key = std::tuple<int, int, int, uint64_t>;
  struct Pairing {                 // one (src, dst, tag): its sends and receives so far, by k
    std::vector<int> messages;     // index into messages_
    std::vector<Stamp> arrivals;   // the receives' completions
    std::vector<int> recv_slices;  // index into slices_ (-1: from add_arrival)
  };

  RankState& state(int rank);
  static const char* label_of(const Progress& p);  // its messages' tag label, "" before one
  void close(std::vector<Open>& open, const char* name, SliceKind kind, int rank, Stamp end);
  void on_step_end(RankState& st, const Event& e, Stamp t);
  void end_round(RankState& st, int rank, Stamp t);
  void on_collective(RankState& st, const Event& e, Stamp t);
  Progress& progress_for(RankState& st, int tag);
  void count_collective_message(RankState& st, int tag, FoldMessage* sent);
  void on_send_begin(RankState& st, const Event& e, Stamp t);
  void on_send_end(RankState& st, const Event& e, Stamp t);
  void on_recv_end(RankState& st, const Event& e, Stamp t);
  void on_note(const Event& e, Stamp t);
  int pair_receive(Pairing& pair, Stamp t, int recv_slice);

  int world_ = 0;
  size_t events_ = 0;
  std::vector<RankState> ranks_;
  std::vector<FoldSlice> slices_;
  std::vector<FoldMessage> messages_;
  std::map<Key, Pairing> pairs_;
};

}  // namespace dsgd
