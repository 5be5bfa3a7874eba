#include "lessons/step_transcript.h"

#include <algorithm>

#include "lessons/lesson.h"

namespace dsgd::lessons {

StepTranscript::StepTranscript(int world, LessonText text, Pace pace)
    : world_(world), text_(std::move(text)), pace_(pace), queues_(world), reached_(world, 0) {}

void StepTranscript::add(int rank, const LogItem& item) {
  if (rank < 0 || rank >= world_) return;
  std::lock_guard lock(mutex_);
  queues_[rank].push_back({next_seq_++, item});
  drain_locked();
}

void StepTranscript::delivered(const sim::StepInfo& m, bool shown) {
  std::lock_guard lock(mutex_);
  ++delivered_[{m.source, m.dest, m.tag}];
  if (shown)
    lines_.push_back({.kind = TranscriptLine::Kind::message,
                      .rank = m.source,
                      .text = message_line(m.source, m.dest, m.tag, m.count * sizeof(float),
                                           m.preview, text_.lang)});
  drain_locked();  // the receiver's items that waited for it
}

void StepTranscript::finish() {
  std::lock_guard lock(mutex_);
  finished_ = true;
  drain_locked();
}

std::vector<TranscriptLine> StepTranscript::lines(size_t first) const {
  std::lock_guard lock(mutex_);
  if (first >= lines_.size()) return {};
  return {lines_.begin() + static_cast<std::ptrdiff_t>(first), lines_.end()};
}

size_t StepTranscript::line_count() const {
  std::lock_guard lock(mutex_);
  return lines_.size();
}

int StepTranscript::sections_shown() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(std::count_if(lines_.begin(), lines_.end(), [](const TranscriptLine& l) {
    return l.kind == TranscriptLine::Kind::section;
  }));
}

void StepTranscript::drain_locked() {
  for (;;) {
    if (const int r = next_rank_locked(); r >= 0) {
      take_locked(r, queues_[r].front().item);
      queues_[r].pop_front();
    } else if (!next_section_locked()) {
      return;
    }
  }
}

int StepTranscript::next_rank_locked() const {
  int best = -1;
  for (int r = 0; r < world_; ++r) {
    const auto& q = queues_[r];
    if (q.empty() || (best >= 0 && q.front().seq > queues_[best].front().seq)) continue;
    if (may_come_out_locked(r, q.front().item)) best = r;
  }
  return best;
}

bool StepTranscript::may_come_out_locked(int rank, const LogItem& item) const {
  // Free: section k is a barrier; a rank past it waits until every rank has reached it.
  if (pace_ == Pace::free && reached_[rank] > passed_sections_) return false;
  if (finished_ || item.kind != LogItem::Kind::recv || item.peer == rank) return true;
  const Key key{item.peer, rank, item.tag};
  if (pace_ == Pace::free) {  // after its send
    auto it = sent_.find(key);
    return it != sent_.end() && !it->second.empty();
  }
  auto delivered = delivered_.find(key);  // stepped: after its delivery
  auto received = received_.find(key);
  return (delivered == delivered_.end() ? 0 : delivered->second) >
         (received == received_.end() ? 0 : received->second);
}

void StepTranscript::take_locked(int rank, const LogItem& item) {
  switch (item.kind) {
    case LogItem::Kind::say:
      lines_.push_back({.kind = TranscriptLine::Kind::say, .rank = rank, .text = item.text});
      break;
    case LogItem::Kind::print:
      lines_.push_back({.kind = TranscriptLine::Kind::print, .rank = rank, .text = item.text});
      break;
    case LogItem::Kind::call:
      lines_.push_back({.kind = TranscriptLine::Kind::call, .rank = item.peer, .text = item.text});
      break;
    case LogItem::Kind::section:
      take_section_locked(rank, item);
      break;
    case LogItem::Kind::send:
      if (pace_ == Pace::free)
        sent_[{rank, item.peer, item.tag}].push_back(
            {.shown = item.shown, .bytes = item.bytes, .preview = item.preview});
      break;
    case LogItem::Kind::recv: {
      if (item.peer == rank) break;  // a rank's receive from itself shows nothing
      const Key key{item.peer, rank, item.tag};
      if (pace_ == Pace::stepped) {
        ++received_[key];
        break;
      }
      auto it = sent_.find(key);
      if (it == sent_.end() || it->second.empty()) break;  // finished without its send
      const Sent sent = std::move(it->second.front());
      it->second.pop_front();
      if (sent.shown)
        lines_.push_back({.kind = TranscriptLine::Kind::message,
                          .rank = item.peer,
                          .text = message_line(item.peer, rank, item.tag, sent.bytes, sent.preview,
                                               text_.lang)});
      break;
    }
  }
}

void StepTranscript::take_section_locked(int rank, const LogItem& item) {
  if (pace_ == Pace::stepped) {  // the lesson's own barrier: every rank is there already
    if (rank == 0 && !item.text.empty())
      lines_.push_back({.kind = TranscriptLine::Kind::section, .text = text_.section(item.text)});
    return;
  }
  if (static_cast<int>(section_ids_.size()) == reached_[rank]) section_ids_.push_back(item.text);
  ++reached_[rank];
}

// Free: the next section comes out once every rank has reached it (a finished run's ranks
// with nothing left count as past every section).
bool StepTranscript::next_section_locked() {
  if (pace_ != Pace::free) return false;
  const int next = passed_sections_;
  if (next >= static_cast<int>(section_ids_.size())) return false;
  for (int r = 0; r < world_; ++r)
    if (reached_[r] <= next && !(finished_ && queues_[r].empty())) return false;
  const std::string& id = section_ids_[next];
  if (!id.empty())
    lines_.push_back({.kind = TranscriptLine::Kind::section, .text = text_.section(id)});
  ++passed_sections_;
  return true;
}

}  // namespace dsgd::lessons
