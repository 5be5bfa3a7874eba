// Lesson 11: launching and rendezvous. How a process group comes to be: PyTorch's
// init_process_group with MASTER_ADDR and MASTER_PORT, torchrun, mpirun, and dsgd node's
// --rendezvous, which is the same idea. Rank 0 of the lesson starts the nodes of small runs
// as threads that do exactly what `dsgd node` processes do (sim/node_process.h): rank 0
// listens, the others present the job's token and learn every address, then they talk
// directly. Then what goes wrong: a rank that never comes, a rank with the wrong token.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/comm/collectives.h"
#include "lessons/lesson.h"
#include "sim/node_process.h"

namespace dsgd::lessons {
namespace {

using boost::asio::ip::tcp;

// A port no one listens on now, for a rendezvous (MASTER_PORT).
uint16_t free_port() {
  boost::asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0));
  return acceptor.local_endpoint().port();
}

// What each started node of a run ended with: the sum of the ranks from an all_reduce, or
// its error (the port shown as MASTER_PORT, so that the text is the same in every run).
struct NodeOutcome {
  float sum = -1;
  std::string error;
};

// What a run's nodes ended with, and the connections rank 0's rendezvous refused (what
// `dsgd node` logs on standard error).
struct LaunchOutcome {
  std::vector<NodeOutcome> nodes;
  std::vector<sim::Refusal> refusals;
};

struct Launch {
  int world = 0;                             // WORLD_SIZE
  std::vector<std::string> tokens;           // of the nodes started, by rank
  std::chrono::milliseconds timeout{30000};  // --timeout: the good run never waits this long
};

std::string without_port(std::string text, uint16_t port) {
  const std::string p = std::to_string(port);
  for (size_t at = text.find(p); at != std::string::npos; at = text.find(p, at))
    text.replace(at, p.size(), "MASTER_PORT");
  return text;
}

// Starts one thread per token, each a `dsgd node --rank r --world W --rendezvous
// 127.0.0.1:PORT`, and waits for all of them.
LaunchOutcome launch(const Launch& l) {
  const auto loopback = boost::asio::ip::address_v4::loopback();
  const uint16_t port = free_port();
  sim::ClusterOptions cluster;
  cluster.nodes = l.world;
  cluster.timeout = l.timeout;
  LaunchOutcome out{.nodes = std::vector<NodeOutcome>(l.tokens.size())};
  std::mutex refusals;  // rank 0's rendezvous reports from its node's thread
  std::vector<std::thread> nodes;
  for (size_t r = 0; r < l.tokens.size(); ++r)
    nodes.emplace_back([&, r] {
      const sim::NodeProcessOptions p{.rank = static_cast<int>(r),
                                      .rendezvous = tcp::endpoint(loopback, port),
                                      .listen = loopback,
                                      .token = l.tokens[r],
                                      .on_refusal = [&](const sim::Refusal& refusal) {
                                        std::lock_guard lock(refusals);
                                        out.refusals.push_back(refusal);
                                      }};
      try {
        sim::run_node_process(p, cluster, [&](Communicator& comm) {
          std::vector<float> x{static_cast<float>(comm.rank())};
          all_reduce(comm, x, ReduceOp::SUM);
          out.nodes[r].sum = x[0];
        });
      } catch (const std::exception& e) {
        out.nodes[r].error = without_port(e.what(), port);
      }
    });
  for (std::thread& t : nodes)
    t.join();
  return out;
}

// What a node's error (from sim, in English) says, in Chinese; the last of `world` ranks is
// the one missing or refused.
std::string gloss_zh(const std::string& error, int world) {
  if (error.find("refused this node") != std::string::npos)
    return "（即：秩 0 拒绝了这个节点——它的令牌与本作业的不同。）";
  if (error.find("did not join") == std::string::npos) return "";
  return fmt::format(
      "（即：秩 {} 没有在截止时间内加入会合{}；每个秩都要用相同的 --rendezvous、--world 和 "
      "--token 启动。）",
      world - 1, error.find("rank 0 gave up") != std::string::npos ? "，秩 0 已放弃等待" : "");
}

// Rank 0's log line, without the stranger's port (it changes from run to run).
void show_refusal(LessonContext& ctx, const sim::Refusal& refusal) {
  const std::string host = refusal.from.substr(0, refusal.from.rfind(':'));
  ctx.say_tr("rank 0's log: the rendezvous refused a connection from {}: {}",
             "秩 0 的日志：会合点拒绝了来自 {} 的连接：{}", host, refusal.reason);
  if (ctx.lang() == Lang::zh && refusal.reason == "wrong job token")
    ctx.say("（即：对方出示的作业令牌不对。）");
}

void show_outcomes(LessonContext& ctx, const LaunchOutcome& outcome, int world) {
  for (const sim::Refusal& refusal : outcome.refusals)
    show_refusal(ctx, refusal);
  const std::vector<NodeOutcome>& nodes = outcome.nodes;
  for (size_t r = 0; r < nodes.size(); ++r) {
    if (nodes[r].error.empty())
      ctx.say_tr("node {}: joined; all_reduce of the ranks' numbers: {:g}",
                 "节点 {}：已加入；各秩编号的全归约：{:g}", r, nodes[r].sum);
    else
      ctx.say_tr("node {}: {}", "节点 {}：{}", r, nodes[r].error);
    if (ctx.lang() == Lang::zh && !nodes[r].error.empty())
      ctx.say("{}", gloss_zh(nodes[r].error, world));
  }
}

}  // namespace

void lesson_11(LessonContext& ctx) {
  const int world = ctx.size();
  using namespace std::chrono_literals;
  ctx.section("rendezvous");
  if (ctx.rank() == 0) {
    ctx.say("WORLD_SIZE = {}, MASTER_ADDR = 127.0.0.1", world);
    show_outcomes(
        ctx, launch({.world = world, .tokens = std::vector<std::string>(world, "sesame")}), world);
  }
  ctx.section("missing");
  if (ctx.rank() == 0) {
    std::vector<std::string> tokens(world - 1, "sesame");  // the last rank never starts
    show_outcomes(ctx, launch({.world = world, .tokens = tokens, .timeout = 2s}), world);
  }
  ctx.section("token");
  if (ctx.rank() == 0) {
    std::vector<std::string> tokens(world, "sesame");
    tokens.back() = "open";  // another job's node, or a stranger
    show_outcomes(ctx, launch({.world = world, .tokens = tokens, .timeout = 2s}), world);
  }
  ctx.section("mapping");
  ctx.section("cluster");
  ctx.section("next");
}

}  // namespace dsgd::lessons
