#include "lessons/transcript.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/comm/collective_tags.h"
#include "core/errors.h"
#include "lessons/lesson.h"

namespace dsgd::lessons {
namespace {

void split_lines(const std::string& text, const std::string& prefix, std::string& out) {
  size_t start = 0;
  while (true) {
    const size_t end = text.find('\n', start);
    out += prefix;
    out.append(text, start, end == std::string::npos ? std::string::npos : end - start);
    out += '\n';
    if (end == std::string::npos) return;
    start = end + 1;
  }
}

// Byte codec for encode/decode: fixed-width little pieces appended to a byte string.
template <typename T>
void put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T>
T get(const std::string& in, size_t& pos) {
  if (pos + sizeof(T) > in.size()) throw CommError("lesson log from another rank is truncated", -1);
  T value;
  std::memcpy(&value, in.data() + pos, sizeof(T));
  pos += sizeof(T);
  return value;
}

}  // namespace

std::string message_line(int source, int dest, int tag, uint64_t bytes,
                         std::span<const float> preview, Lang lang) {
  const bool zh = lang == Lang::zh;
  const CollectiveTag* collective = find_collective_tag(tag);
  const std::string what = collective ? std::string(collective->label)
                                      : fmt::format(fmt::runtime(zh ? "标签 {}" : "tag {}"), tag);
  std::string values;
  const uint64_t count = bytes / sizeof(float);
  if (count == 0) {
    values = "[]";
  } else if (count <= preview.size()) {
    values = "[";
    for (size_t i = 0; i < preview.size(); ++i)
      values += fmt::format("{}{:.4g}", i ? ", " : "", preview[i]);
    values += "]";
  } else {
    values = "[";
    for (size_t i = 0; i < preview.size(); ++i)
      values += fmt::format("{:.4g}, ", preview[i]);
    values += "...]";
  }
  return fmt::format(fmt::runtime(zh ? "秩 {} -> 秩 {} · {} · {} 字节 · {}"
                                     : "rank {} -> rank {} · {} · {} bytes · {}"),
                     source, dest, what, bytes, values);
}

std::string rank_prefix(int rank, Lang lang) {
  return fmt::format(fmt::runtime(lang == Lang::zh ? "[秩 {}] " : "[rank {}] "), rank);
}

Recorder::Recorder(Lang lang, int max_ranks)
    : logs_(max_ranks), lang_(lang), cursor_(max_ranks), clock_(max_ranks) {}

void Recorder::on_event(const Event& e) {
  if (e.kind != EventKind::send_begin && e.kind != EventKind::recv_end) return;
  if (e.rank < 0 || e.rank >= static_cast<int>(logs_.size())) return;
  if (e.tag == kSectionTag) return;  // --step's section barrier, not the lesson's traffic
  LogItem item;
  item.kind = e.kind == EventKind::send_begin ? LogItem::Kind::send : LogItem::Kind::recv;
  item.peer = e.peer;
  item.tag = e.tag;
  item.bytes = e.bytes;
  if (item.kind == LogItem::Kind::send)
    item.preview.assign(e.preview.begin(), e.preview.begin() + e.preview_count);
  std::lock_guard lock(mutex_);
  RankLog& log = logs_[e.rank];
  if (log.done) return;
  item.shown = log.show_messages;
  if (live_) {
    if (item.kind == LogItem::Kind::send)
      shown_[{e.rank, item.peer, item.tag}].push_back(item.shown);
    live_(e.rank, item);
  }
  log.items.push_back(std::move(item));
}

void Recorder::add(int rank, LogItem item) {
  std::lock_guard lock(mutex_);
  RankLog& log = logs_.at(rank);
  if (log.done) return;
  if (live_) live_(rank, item);
  log.items.push_back(std::move(item));
}

void Recorder::set_show_messages(int rank, bool on) {
  std::lock_guard lock(mutex_);
  logs_.at(rank).show_messages = on;
}

bool Recorder::shows_messages(int rank) const {
  std::lock_guard lock(mutex_);
  return rank >= 0 && rank < static_cast<int>(logs_.size()) && logs_[rank].show_messages;
}

void Recorder::set_done(int rank) {
  std::lock_guard lock(mutex_);
  logs_.at(rank).done = true;
}

void Recorder::set_live(std::function<void(int, const LogItem&)> live) {
  std::lock_guard lock(mutex_);
  live_ = std::move(live);
}

bool Recorder::take_shown(int source, int dest, int tag) {
  std::lock_guard lock(mutex_);
  auto it = shown_.find({source, dest, tag});
  if (it == shown_.end() || it->second.empty()) return true;
  const bool shown = it->second.front();
  it->second.pop_front();
  return shown;
}

bool Recorder::next_shown(int source, int dest, int tag) const {
  std::lock_guard lock(mutex_);
  auto it = shown_.find({source, dest, tag});
  return it == shown_.end() || it->second.empty() || it->second.front();
}

std::vector<float> Recorder::encode(int rank) const {
  std::string bytes;
  {
    std::lock_guard lock(mutex_);
    for (const LogItem& item : logs_.at(rank).items) {
      put(bytes, static_cast<uint8_t>(item.kind));
      put(bytes, static_cast<int32_t>(item.peer));
      put(bytes, static_cast<int32_t>(item.tag));
      put(bytes, item.bytes);
      put(bytes, static_cast<uint8_t>(item.shown));
      put(bytes, static_cast<uint8_t>(item.preview.size()));
      for (float v : item.preview)
        put(bytes, v);
      put(bytes, static_cast<uint32_t>(item.text.size()));
      bytes += item.text;
    }
  }
  std::vector<float> out(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i)
    out[i] = static_cast<float>(static_cast<uint8_t>(bytes[i]));
  return out;
}

void Recorder::decode(int rank, std::span<const float> data) {
  std::string bytes(data.size(), '\0');
  for (size_t i = 0; i < data.size(); ++i)
    bytes[i] = static_cast<char>(static_cast<uint8_t>(data[i]));
  std::vector<LogItem> items;
  size_t pos = 0;
  while (pos < bytes.size()) {
    LogItem item;
    const auto kind = get<uint8_t>(bytes, pos);
    if (kind > static_cast<uint8_t>(LogItem::Kind::call))
      throw CommError(fmt::format("lesson log from rank {} is corrupt", rank), rank);
    item.kind = static_cast<LogItem::Kind>(kind);
    item.peer = get<int32_t>(bytes, pos);
    item.tag = get<int32_t>(bytes, pos);
    item.bytes = get<uint64_t>(bytes, pos);
    item.shown = get<uint8_t>(bytes, pos) != 0;
    const auto preview = get<uint8_t>(bytes, pos);
    for (int i = 0; i < preview; ++i)
      item.preview.push_back(get<float>(bytes, pos));
    const auto length = get<uint32_t>(bytes, pos);
    if (pos + length > bytes.size())
      throw CommError(fmt::format("lesson log from rank {} is truncated", rank), rank);
    item.text = bytes.substr(pos, length);
    pos += length;
    items.push_back(std::move(item));
  }
  std::lock_guard lock(mutex_);
  logs_.at(rank).items = std::move(items);
  logs_.at(rank).done = true;
}

std::pair<uint64_t, uint64_t> Recorder::totals(int world) const {
  std::lock_guard lock(mutex_);
  uint64_t messages = 0, bytes = 0;
  for (int r = 0; r < world && r < static_cast<int>(logs_.size()); ++r)
    for (const LogItem& item : logs_[r].items)
      if (item.kind == LogItem::Kind::send) {
        ++messages;
        bytes += item.bytes;
      }
  return {messages, bytes};
}

Recorder::Pauses Recorder::pauses(int world) const {
  std::lock_guard lock(mutex_);
  Pauses p;
  for (int r = 0; r < world && r < static_cast<int>(logs_.size()); ++r) {
    int parts = 0;
    for (const LogItem& item : logs_[r].items) {
      parts += item.kind == LogItem::Kind::section && !item.text.empty();  // not next_group()
      p.messages += item.kind == LogItem::Kind::send && item.shown;
      p.calls += item.kind == LogItem::Kind::call;
    }
    p.parts = std::max(p.parts, parts);
  }
  return p;
}

std::string Recorder::take_ready(int world, bool final, const SectionText& text) {
  std::lock_guard lock(mutex_);
  world = std::min(world, static_cast<int>(logs_.size()));
  std::string out;
  while (true) {
    // The current segment ends at each rank's next section, or at the end of a done log.
    std::vector<size_t> end(world);
    int first_marker = -1;
    for (int r = 0; r < world; ++r) {
      const auto& items = logs_[r].items;
      size_t i = cursor_[r];
      while (i < items.size() && items[i].kind != LogItem::Kind::section)
        ++i;
      end[r] = i;
      const bool has_marker = i < items.size();
      if (has_marker && first_marker < 0) first_marker = r;
      if (!has_marker && !logs_[r].done && !final) return out;  // still running
    }
    out += merge_segment_locked(world, end);
    if (first_marker < 0) return out;  // every log is merged to its end
    // The section is a barrier: it comes after everything before it on every rank.
    const uint64_t barrier = *std::max_element(clock_.begin(), clock_.begin() + world) + 1;
    const std::string id = logs_[first_marker].items[end[first_marker]].text;
    for (int r = 0; r < world; ++r) {
      clock_[r] = barrier;
      if (end[r] < logs_[r].items.size()) cursor_[r] = end[r] + 1;
    }
    if (id.empty()) continue;  // a break between groups of lines, without text
    out += '\n';
    std::string body = text(id);
    while (!body.empty() && body.back() == '\n')
      body.pop_back();
    out += body;
    out += "\n\n";
  }
}

// Merges items cursor_[r] .. end[r] of every rank in logical-clock order and renders them.
std::string Recorder::merge_segment_locked(int world, const std::vector<size_t>& end) {
  struct Placed {
    uint64_t clock;
    int rank;
    size_t index;
    bool operator<(const Placed& o) const {
      return std::tie(clock, rank, index) < std::tie(o.clock, o.rank, o.index);
    }
  };
  std::vector<Placed> placed;
  std::vector<size_t>& pos = cursor_;
  auto place = [&](int r, uint64_t clock) {
    clock_[r] = clock;
    placed.push_back({clock, r, pos[r]});
    ++pos[r];
  };
  while (true) {
    bool progress = false, left = false;
    for (int r = 0; r < world; ++r) {
      while (pos[r] < end[r]) {
        const LogItem& item = logs_[r].items[pos[r]];
        uint64_t clock = clock_[r] + 1;
        if (item.kind == LogItem::Kind::recv) {
          auto it = in_flight_.find({item.peer, r, item.tag});
          if (it == in_flight_.end() || it->second.empty()) break;  // its send is not merged
          clock = std::max(clock, it->second.front() + 1);
          it->second.pop_front();
        } else if (item.kind == LogItem::Kind::send) {
          int& early = early_receives_[{r, item.peer, item.tag}];
          if (early > 0) {
            --early;
          } else {
            in_flight_[{r, item.peer, item.tag}].push_back(clock);
          }
        }
        place(r, clock);
        progress = true;
      }
      if (pos[r] < end[r]) left = true;
    }
    if (!left) break;
    if (!progress) {
      // Every remaining rank waits for a send that is not in this segment (a message
      // that crosses a section backwards): place the lowest rank's receive now.
      for (int r = 0; r < world; ++r)
        if (pos[r] < end[r]) {
          const LogItem& item = logs_[r].items[pos[r]];
          ++early_receives_[{item.peer, r, item.tag}];
          place(r, clock_[r] + 1);
          break;
        }
    }
  }
  std::sort(placed.begin(), placed.end());
  std::string out;
  for (const Placed& p : placed) {
    const LogItem& item = logs_[p.rank].items[p.index];
    switch (item.kind) {
      case LogItem::Kind::say:
        split_lines(item.text, "", out);
        break;
      case LogItem::Kind::print:
        split_lines(item.text, rank_prefix(p.rank, lang_), out);
        break;
      case LogItem::Kind::send:
        if (item.shown)
          out += "  " + message_line(p.rank, item.peer, item.tag, item.bytes, item.preview, lang_) +
                 '\n';
        break;
      case LogItem::Kind::call:
        out += "  " + item.text + '\n';
        break;
      case LogItem::Kind::recv:
      case LogItem::Kind::section:
        break;
    }
  }
  return out;
}

}  // namespace dsgd::lessons
