#include "lessons/demo_run.h"

#include <algorithm>
#include <exception>
#include <optional>

#include <fmt/format.h>

namespace dsgd::lessons {
namespace {

// A call's first event: the begin of a send or a receive.
bool begins_call(const Event& e) {
  return e.kind == EventKind::send_begin || e.kind == EventKind::recv_begin;
}
bool ends_call(const Event& e) {
  return e.kind == EventKind::send_end || e.kind == EventKind::recv_end;
}

// One rank's calls in program order: each begin, completed by the end that follows it.
std::vector<DemoCall> calls_of(const std::vector<Event>& events, int rank) {
  std::vector<DemoCall> calls;
  for (const Event& e : events) {
    if (e.rank != rank) continue;
    if (begins_call(e)) {
      calls.push_back({.rank = rank,
                       .send = e.kind == EventKind::send_begin,
                       .peer = e.peer,
                       .bytes = e.kind == EventKind::send_begin ? e.bytes : 0});
    } else if (ends_call(e) && !calls.empty() && !calls.back().returned) {
      calls.back().returned = true;
      if (!calls.back().send) {
        calls.back().peer = e.peer;
        calls.back().bytes = e.bytes;
      }
    }
  }
  return calls;
}

std::string floats(uint64_t bytes, Lang lang) {
  const uint64_t n = bytes / sizeof(float);
  return lang == Lang::zh ? fmt::format("{} 个浮点数", n)
                          : fmt::format("{} float{}", n, n == 1 ? "" : "s");
}

// The format string of `lang`.
auto tr(Lang lang, const char* en, const char* zh) {
  return fmt::runtime(lang == Lang::zh ? zh : en);
}

std::string send_line(const DemoCall& c, size_t eager_bytes, Lang lang) {
  std::string line =
      fmt::format(tr(lang, "rank {}: send({} to rank {}) ", "秩 {}：send（{}给秩 {}）"), c.rank,
                  floats(c.bytes, lang), c.peer);
  if (c.bytes <= eager_bytes)
    return line +
           fmt::format(tr(lang, "returns at once: {} bytes, under the eager limit, are copied",
                          "立即返回：{} 字节不超过 eager 上限，消息被复制"),
                       c.bytes);
  if (c.returned)
    return line +
           fmt::format(
               tr(lang, "returns once rank {} has posted its recv ({} bytes, over the eager limit)",
                  "在秩 {} 开始 recv 之后返回（{} 字节超过 eager 上限）"),
               c.peer, c.bytes);
  return line +
         fmt::format(
             tr(lang,
                "waits for rank {}'s recv: {} bytes are over the eager limit, so nothing is copied",
                "等待秩 {} 的 recv：{} 字节超过 eager 上限，不会被复制"),
             c.peer, c.bytes);
}

std::string recv_line(const DemoCall& c, Lang lang) {
  if (c.returned)
    return fmt::format(
        tr(lang, "rank {}: recv(from rank {}) receives {}", "秩 {}：recv（来自秩 {}）收到 {}"),
        c.rank, c.peer, floats(c.bytes, lang));
  return fmt::format(tr(lang, "rank {}: recv(from rank {}) waits: nothing from rank {} has arrived",
                        "秩 {}：recv（来自秩 {}）等待：秩 {} 还没有发来任何消息"),
                     c.rank, c.peer, c.peer);
}

}  // namespace

std::vector<DemoCall> demo_calls(const std::vector<Event>& events, int world) {
  std::vector<std::vector<DemoCall>> per_rank;
  size_t longest = 0;
  for (int r = 0; r < world; ++r) {
    per_rank.push_back(calls_of(events, r));
    longest = std::max(longest, per_rank.back().size());
  }
  std::vector<DemoCall> out;
  for (size_t i = 0; i < longest; ++i)
    for (const auto& calls : per_rank)
      if (i < calls.size()) out.push_back(calls[i]);
  return out;
}

std::string demo_call_line(const DemoCall& call, size_t eager_bytes, Lang lang) {
  return call.send ? send_line(call, eager_bytes, lang) : recv_line(call, lang);
}

void run_demo(LessonContext& ctx, const sim::ClusterOptions& options, const sim::NodeFunction& fn) {
  if (ctx.comm().rank() != 0) return;
  EventBuffer events;
  sim::ClusterOptions own = options;
  own.events = &events;
  std::exception_ptr failure;
  try {
    sim::run_cluster(own, fn);
  } catch (...) {
    failure = std::current_exception();
  }
  for (const DemoCall& call : demo_calls(events.snapshot(), own.nodes))
    ctx.say_call(call.rank, demo_call_line(call, own.node.eager_bytes, ctx.lang()));
  if (failure) std::rethrow_exception(failure);
}

}  // namespace dsgd::lessons
