#include "sim/node_process.h"

#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "core/errors.h"
#include "sim/node_setup.h"
#include "sim/rendezvous.h"

namespace dsgd::sim {
namespace {

using boost::asio::ip::tcp;

// The rendezvous, in its two halves: first the run's epoch (rank 0 opens the rendezvous and
// picks it; the others join and learn it, and whether they share rank 0's machine), then,
// once this node listens, every rank's address.
class Rendezvous {
 public:
  // `since`: when the wait began (deadline = since + the timeout).
  Rendezvous(const NodeProcessOptions& p, int world, Clock::time_point since,
             Clock::time_point deadline)
      : p_(p), since_(since), deadline_(deadline) {
    if (p.rank == 0) {
      // Rank 0 accepts on the listen address (loopback by default) at the rendezvous port.
      server_.emplace(tcp::endpoint(p.listen, p.rendezvous.port()), world, p.token, p.run_hash);
      epoch_ns_ = server_->epoch_ns();
      return;
    }
    client_.emplace(p.rendezvous, p.rank, world, p.token, p.run_hash);
    const Hello rank0 = client_->join(deadline);
    epoch_ns_ = rank0.epoch_ns;
    same_host_as_rank0_ = rank0.host_id != 0 && rank0.host_id == host_id();
  }

  int64_t epoch_ns() const { return epoch_ns_; }
  bool same_host_as_rank0() const { return same_host_as_rank0_; }

  // The table of every rank's address; this node accepts peers on `port`.
  RendezvousTable finish(uint16_t port) {
    if (server_) {
      // Others reach rank 0 where they reached the rendezvous, unless it listens on one
      // address.
      const std::string host =
          p_.listen.is_unspecified() ? p_.rendezvous.address().to_string() : p_.listen.to_string();
      RendezvousTable table = server_->serve({.host = host, .port = port}, deadline_, since_);
      server_.reset();  // the rendezvous port is free again
      return table;
    }
    // A little longer than rank 0 waits, so that its word on who is missing arrives first.
    RendezvousTable table = client_->finish(port, deadline_ + std::chrono::seconds(2));
    client_.reset();
    return table;
  }

 private:
  const NodeProcessOptions& p_;
  const Clock::time_point since_, deadline_;
  std::optional<RendezvousServer> server_;
  std::optional<RendezvousClient> client_;
  int64_t epoch_ns_ = 0;
  bool same_host_as_rank0_ = true;
};

}  // namespace

void run_node_process(const NodeProcessOptions& p, const ClusterOptions& options,
                      const NodeFunction& fn) {
  const Clock::time_point since = Clock::now();
  Rendezvous rendezvous(p, options.nodes, since, since + options.timeout);
  const Clock::time_point epoch{
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(rendezvous.epoch_ns()))};
  const bool same_host = rendezvous.same_host_as_rank0();
  std::optional<NetClock> clock;
  if (same_host && p.clock != ClockChoice::local)
    clock.emplace(epoch);  // one CLOCK_MONOTONIC: every node's network time agrees
  else
    clock.emplace();  // this machine's own; frames will carry delays, not times
  Network network(options.network, options.nodes);
  const NodeJob job{
      .job = {.token = p.token, .epoch_ns = rendezvous.epoch_ns(), .run_hash = p.run_hash},
      .epoch = same_host ? epoch : Clock::now()};
  const auto node = make_node(options, p.rank, network, *clock, job, nullptr, p.listen.to_string());
  if (p.on_listening) p.on_listening(node->port());

  const RendezvousTable table = rendezvous.finish(node->port());
  if (p.clock == ClockChoice::shared && !table.one_host)
    throw UsageError(
        "--clock shared: the ranks run on several machines, whose clocks differ; "
        "use --clock auto");
  node->set_shared_clock(p.clock == ClockChoice::shared ||
                         (p.clock == ClockChoice::automatic && table.one_host));
  node->set_peer_addresses(table.peers);
  node->start();
  if (!run_node_function(*node, fn, options.timeout))
    throw CommError(fmt::format("rank {} crashed (a --crash fault)", p.rank), p.rank);
  node->close();
}

}  // namespace dsgd::sim
