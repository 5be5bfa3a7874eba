// Sections: [feeding] [slices] [collectives] [messages] [queries].
#include "core/event_fold.h"

#include <algorithm>
#include <cstring>

#include "core/comm/ring_schedule.h"

namespace dsgd {

// ---------------------------------------------------------------------------------------
// [feeding]
// ---------------------------------------------------------------------------------------

EventFold::RankState& EventFold::state(int rank) {
  if (rank >= static_cast<int>(ranks_.size())) ranks_.resize(rank + 1);
  world_ = std::max(world_, rank + 1);
  return ranks_[rank];
}

void EventFold::reserve(size_t events) {
  slices_.reserve(slices_.size() + events);
  messages_.reserve(messages_.size() + events);
}

void EventFold::add(const Event& e) {
  const Stamp t{events_++, e.wall_s, e.model_s};
  if (e.rank < 0) return;
  RankState& st = state(e.rank);
  world_ = std::max(world_, e.peer + 1);
  st.fold.last = t;
  switch (e.kind) {
    case EventKind::step_begin:
      st.steps.push_back({.name = "step", .value = e.seq, .begin = t});
      st.fold.step = std::max(st.fold.step, static_cast<int64_t>(e.seq));
      break;
    case EventKind::step_end:
      on_step_end(st, e, t);
      break;
    case EventKind::compute_begin:
      st.computes.push_back({.name = e.op, .begin = t});
      break;
    case EventKind::compute_end:
      close(st.computes, e.op, SliceKind::compute, e.rank, t);
      break;
    case EventKind::collective_begin:
    case EventKind::collective_end:
      on_collective(st, e, t);
      break;
    case EventKind::send_begin:
      on_send_begin(st, e, t);
      break;
    case EventKind::send_end:
      on_send_end(st, e, t);
      break;
    case EventKind::recv_begin:
      st.recvs.push_back({.peer = e.peer, .tag = e.tag, .begin = t});
      break;
    case EventKind::recv_end:
      on_recv_end(st, e, t);
      break;
    case EventKind::note:
      on_note(e, t);
      break;
  }
  st.fold.computing = !st.computes.empty();
  st.fold.in_collective = !st.collectives.empty();
}

void EventFold::add_arrival(const Event& e) {
  const Stamp t{events_++, e.wall_s, e.model_s};
  if (e.rank < 0 || e.kind != EventKind::recv_end) return;
  state(e.rank);
  world_ = std::max(world_, e.peer + 1);
  pair_receive(pairs_[{e.peer, e.rank, e.tag, e.seq >> kRoundShift}], t, -1);
}

// ---------------------------------------------------------------------------------------
// [slices]
// ---------------------------------------------------------------------------------------

// Closes the innermost open entry named `name` (a mismatched end closes what it names).
void EventFold::close(std::vector<Open>& open, const char* name, SliceKind kind, int rank,
                      Stamp end) {
  for (size_t i = open.size(); i-- > 0;) {
    if (std::strcmp(open[i].name, name) != 0) continue;
    slices_.push_back({.kind = kind,
                       .rank = rank,
                       .name = open[i].name,
                       .bytes = kind == SliceKind::collective ? open[i].value : 0,
                       .begin = open[i].begin,
                       .end = end});
    open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
}

void EventFold::on_step_end(RankState& st, const Event& e, Stamp t) {
  auto it = std::find_if(st.steps.begin(), st.steps.end(),
                         [&](const Open& o) { return o.value == e.seq; });
  if (it == st.steps.end()) return;  // began before the events did
  slices_.push_back(
      {.kind = SliceKind::step, .rank = e.rank, .seq = e.seq, .begin = it->begin, .end = t});
  st.steps.erase(it);
}

std::vector<FoldSlice> EventFold::open_slices(int rank) const {
  std::vector<FoldSlice> out;
  if (rank < 0 || rank >= static_cast<int>(ranks_.size())) return out;
  const RankState& st = ranks_[rank];
  const auto add = [&](SliceKind kind, const Open& o) {
    FoldSlice s{.kind = kind, .rank = rank, .name = o.name, .begin = o.begin, .end = o.begin};
    s.ended = false;
    if (kind == SliceKind::step) s.seq = o.value;
    if (kind == SliceKind::collective) s.bytes = o.value;
    if (kind == SliceKind::recv) s.peer = o.peer, s.tag = o.tag;
    out.push_back(s);
  };
  for (const Open& o : st.steps)
    add(SliceKind::step, o);
  for (const Open& o : st.computes)
    add(SliceKind::compute, o);
  for (const Open& o : st.collectives)
    add(SliceKind::collective, o);
  if (!st.collectives.empty() && st.current.open)  // the innermost is the current one
    out.back().label = label_of(st.current);
  for (const Open& o : st.recvs)
    add(SliceKind::recv, o);
  return out;
}

// ---------------------------------------------------------------------------------------
// [collectives]
// ---------------------------------------------------------------------------------------

void EventFold::on_collective(RankState& st, const Event& e, Stamp t) {
  if (e.kind == EventKind::collective_begin) {
    st.collectives.push_back({.name = e.op, .value = e.bytes, .begin = t});
    st.current = {.op = e.op,
                  .open = true,
                  .all_reduce = std::strcmp(e.op, to_string(CollectiveOp::all_reduce)) == 0,
                  .bytes = e.bytes};
  } else {
    const size_t closed = slices_.size();
    close(st.collectives, e.op, SliceKind::collective, e.rank, t);
    if (!st.current.open || std::strcmp(st.current.op, e.op) != 0) return;
    if (slices_.size() > closed) slices_.back().label = label_of(st.current);
    st.current.open = false;
    st.current.ended = true;
  }
  if (st.current.all_reduce) st.all_reduce = st.current;
}

const char* EventFold::label_of(const Progress& p) {
  return p.tag < 0 ? "" : tag_label(p.tag);
}

// The collective a message with reserved `tag` belongs to: the open one (its messages all
// carry one tag), else one without a begin in the events (a window that starts in the
// middle of a collective, or an algorithm called directly), counted from this message.
EventFold::Progress& EventFold::progress_for(RankState& st, int tag) {
  Progress& p = st.current;
  if (p.open && (p.tag < 0 || p.tag == tag)) {
    p.tag = tag;
    return p;
  }
  if (!p.open && !p.ended && p.tag == tag) return p;
  const CollectiveTag* c = find_collective_tag(tag);
  p = {.op = to_string(c->op), .all_reduce = c->op == CollectiveOp::all_reduce, .tag = tag};
  return p;
}

// Counts a message of a collective on its rank: a send gets its ordinal there.
void EventFold::count_collective_message(RankState& st, int tag, FoldMessage* sent) {
  if (!find_collective_tag(tag)) return;
  Progress& p = progress_for(st, tag);
  if (sent) {
    sent->ordinal = p.sent++;
    sent->collective_floats = p.bytes / sizeof(float);
  } else {
    ++p.received;
  }
  if (p.all_reduce) st.all_reduce = p;
}

// ---------------------------------------------------------------------------------------
// [messages]
// ---------------------------------------------------------------------------------------

void EventFold::on_send_begin(RankState& st, const Event& e, Stamp t) {
  const uint64_t round = e.seq >> kRoundShift;
  Pairing& pair = pairs_[{e.rank, e.peer, e.tag, round}];
  const int index = static_cast<int>(messages_.size());
  FoldMessage m{.src = e.rank,
                .dst = e.peer,
                .tag = e.tag,
                .k = (round << kRoundShift) + pair.messages.size(),
                .bytes = e.bytes,
                .sent = t,
                .send_slice = static_cast<int>(slices_.size()),
                .preview_count = std::min<uint8_t>(e.preview_count, 4),
                .preview = e.preview};
  count_collective_message(st, e.tag, &m);
  // Its receiver's round ended before it came here (a watched run: each process's events
  // arrive on their own): abandoned, unless its receive comes after all.
  m.abandoned = e.peer >= 0 && e.peer < static_cast<int>(ranks_.size()) &&
                ranks_[size_t(e.peer)].round_ended >= static_cast<int64_t>(round);
  if (m.k < pair.arrivals.size()) {  // its receive came first
    m.arrived = pair.arrivals[m.k];
    m.has_arrived = true;
    m.abandoned = false;
    m.recv_slice = pair.recv_slices[m.k];
    if (m.recv_slice >= 0) slices_[m.recv_slice].message = index;
  }
  FoldSlice s{.kind = SliceKind::send,
              .rank = e.rank,
              .bytes = e.bytes,
              .peer = e.peer,
              .tag = e.tag,
              .k = m.k,
              .message = index,
              .begin = t,
              .end = t};
  s.ended = false;
  st.unended_sends.push_back(slices_.size());
  slices_.push_back(s);
  pair.messages.push_back(index);
  messages_.push_back(m);
}

// Sends to one peer with one tag complete in order: the oldest open one ends here.
void EventFold::on_send_end(RankState& st, const Event& e, Stamp t) {
  auto it = std::find_if(st.unended_sends.begin(), st.unended_sends.end(), [&](size_t i) {
    return slices_[i].peer == e.peer && slices_[i].tag == e.tag;
  });
  if (it == st.unended_sends.end()) return;
  slices_[*it].end = t;
  slices_[*it].ended = true;
  st.unended_sends.erase(it);
}

// The oldest posted receive this message could satisfy begins the slice; a recv_end without
// one (a backend that reports completions only) is a receive of no duration.
void EventFold::on_recv_end(RankState& st, const Event& e, Stamp t) {
  Stamp begin = t;
  auto it = std::find_if(st.recvs.begin(), st.recvs.end(), [&](const Open& o) {
    return o.tag == e.tag && (o.peer == e.peer || o.peer == -1);
  });
  if (it != st.recvs.end()) {
    begin = it->begin;
    st.recvs.erase(it);
  }
  const int index = static_cast<int>(slices_.size());
  const uint64_t round = e.seq >> kRoundShift;
  Pairing& pair = pairs_[{e.peer, e.rank, e.tag, round}];
  slices_.push_back({.kind = SliceKind::recv,
                     .rank = e.rank,
                     .bytes = e.bytes,
                     .peer = e.peer,
                     .tag = e.tag,
                     .k = (round << kRoundShift) + pair.arrivals.size(),
                     .begin = begin,
                     .end = t});
  slices_[index].message = pair_receive(pair, t, index);
  count_collective_message(st, e.tag, nullptr);
}

// A note; a retransmit note counts against the rank's latest send to its peer with its tag.
void EventFold::on_note(const Event& e, Stamp t) {
  slices_.push_back({.kind = SliceKind::note,
                     .rank = e.rank,
                     .name = e.op,
                     .seq = e.seq,
                     .peer = e.peer,
                     .tag = e.tag,
                     .begin = t,
                     .end = t});
  if (std::strcmp(e.op, kRoundEndNote) == 0) {
    RankState& st = state(e.rank);
    st.round_ended = std::max(st.round_ended, static_cast<int64_t>(e.seq));
    end_round(st, e.rank, t);
  }
  if (e.peer < 0 || std::strcmp(e.op, kRetransmitNote) != 0) return;
  // The latest round's pair (a retransmit note's seq is its count, not a message's).
  auto it = pairs_.lower_bound({e.rank, e.peer, e.tag + 1, 0});
  if (it == pairs_.begin()) return;
  --it;
  const auto [src, dst, tag, round] = it->first;
  if (src == e.rank && dst == e.peer && tag == e.tag && !it->second.messages.empty())
    messages_[it->second.messages.back()].retransmits = static_cast<int>(e.seq);
}

// The rank's round of an elastic run ended at t: what it left open ends there, abandoned,
// and so do the messages to or from it that were never received.
void EventFold::end_round(RankState& st, int rank, Stamp t) {
  const auto abandon = [&](std::vector<Open>& open, SliceKind kind) {
    for (const Open& o : open) {
      FoldSlice s{.kind = kind, .rank = rank, .name = o.name, .begin = o.begin, .end = t};
      if (kind == SliceKind::step) s.seq = o.value;
      if (kind == SliceKind::collective) s.bytes = o.value;
      s.abandoned = true;
      slices_.push_back(s);
    }
    open.clear();
  };
  abandon(st.steps, SliceKind::step);
  abandon(st.computes, SliceKind::compute);
  abandon(st.collectives, SliceKind::collective);
  st.recvs.clear();  // a receive never completed: no slice, as no message
  st.current.open = false;
  for (FoldMessage& m : messages_)
    if (!m.has_arrived && (m.src == rank || m.dst == rank)) m.abandoned = true;
}

// Records the k-th receive src -> dst (tag t) and completes the k-th send if it was seen;
// returns that message's index, or -1.
int EventFold::pair_receive(Pairing& pair, Stamp t, int recv_slice) {
  const size_t k = pair.arrivals.size();
  pair.arrivals.push_back(t);
  pair.recv_slices.push_back(recv_slice);
  if (k >= pair.messages.size()) return -1;
  FoldMessage& m = messages_[pair.messages[k]];
  m.arrived = t;
  m.has_arrived = true;
  m.abandoned = false;  // a round's end was folded before this receive: it was not
  m.recv_slice = recv_slice;
  return pair.messages[k];
}

// ---------------------------------------------------------------------------------------
// [queries]
// ---------------------------------------------------------------------------------------

MessagePhase EventFold::phase(const FoldMessage& m) const {
  return message_phase(m.tag, world_, m.src, m.dst, m.ordinal, m.collective_floats);
}

RankFold EventFold::rank(int r) const {
  return r >= 0 && r < static_cast<int>(ranks_.size()) ? ranks_[r].fold : RankFold{};
}

Algorithm EventFold::all_reduce_algorithm(int r) const {
  if (r < 0 || r >= static_cast<int>(ranks_.size())) return Algorithm::automatic;
  const CollectiveTag* c = find_collective_tag(ranks_[r].all_reduce.tag);
  return c ? c->algorithm : Algorithm::automatic;
}

std::vector<int> EventFold::all_reduce_contributions(int r, Algorithm assumed) const {
  Algorithm algorithm = all_reduce_algorithm(r);
  if (algorithm == Algorithm::automatic) algorithm = assumed;
  const int parts = algorithm == Algorithm::ring ? std::max(world_, 1) : 1;
  const Progress p =
      r >= 0 && r < static_cast<int>(ranks_.size()) ? ranks_[r].all_reduce : Progress{};
  if (p.ended) return std::vector<int>(parts, world_);
  std::vector<int> out(parts, 1);
  if (!p.all_reduce || algorithm != Algorithm::ring) return out;
  const RingSchedule ring = RingSchedule::of(p.bytes / sizeof(float), world_);
  for (int c = 0; c < parts; ++c)
    out[c] = ring.contributions(r, c, p.received / ring.segments);
  return out;
}

}  // namespace dsgd
