// The point-to-point part of the conformance suite: send, recv, isend, irecv, wait, test,
// receives from any source, tags, order, sizes and deadlines. Messages go around the ring
// (to the right, from the left); on one rank both neighbours are the rank itself, so every
// check also covers sending to oneself. Large messages are above every backend's eager
// limit (a send of one waits for its receive), small ones below.
#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "core/comm/collectives.h"
#include "core/errors.h"
#include "tests/conformance/communicator_suite.h"
#include "tests/conformance/exact_values.h"
#include "tests/wait_until.h"

namespace dsgd::conformance {

namespace {

using namespace std::chrono_literals;

constexpr size_t kRendezvousCount = (1 << 15) + 1;  // 128 KiB: above every eager limit (sim: 64)
// One tag per check, below the collectives' tags.
enum Tag : int {
  kTagChain = 1,
  kTagRing,
  kTagShift,
  kTagAny,
  kTagAnyOther = kTagAny + 8,
  kTagOrderA = kTagAnyOther + 8,
  kTagOrderB,
  kTagMismatch,
  kTagSilent,
  kTagLater,
};

int right_of(const Communicator& comm) {
  return (comm.rank() + 1) % comm.size();
}
int left_of(const Communicator& comm) {
  return (comm.rank() + comm.size() - 1) % comm.size();
}

bool status_is(const Status& s, int source, int tag, size_t count) {
  return s.source == source && s.tag == tag && s.count == count;
}

std::string show(const Status& s) {
  return fmt::format("status (source {}, tag {}, count {})", s.source, s.tag, s.count);
}

}  // namespace

// Blocking send and recv: a large message down the chain 0 -> 1 -> ... -> R-1 (each send
// waits for the next rank's receive; every rank adds its rank), then a small one around
// the ring, sent before it is received (it completes once copied).
void check_send_recv(Communicator& comm, Report& report) {
  const int r = comm.rank(), n = comm.size();
  std::vector<float> v = labels(0, kRendezvousCount);
  if (r > 0) {
    const Status s = comm.recv(v, r - 1, kTagChain);
    report.expect(status_is(s, r - 1, kTagChain, kRendezvousCount),
                  [&] { return "send/recv down the chain: " + show(s); });
  }
  for (float& x : v)
    x += static_cast<float>(r);
  if (r + 1 < n) comm.send(v, r + 1, kTagChain);
  if (r + 1 == n) {
    const float added = static_cast<float>(n * (n - 1) / 2);
    report.expect_values(
        v, [&](size_t i) { return label(0, i) + added; }, "send/recv down the chain");
  }
  const std::vector<float> out{static_cast<float>(r), 0.25f};
  comm.send(out, right_of(comm), kTagRing);
  std::vector<float> in(2, kUntouched);
  const Status s = comm.recv(in, left_of(comm), kTagRing);
  report.expect(in == std::vector<float>{static_cast<float>(left_of(comm)), 0.25f} &&
                    status_is(s, left_of(comm), kTagRing, 2),
                [&] { return fmt::format("small send/recv around the ring: {}", show(s)); });
}

// isend and irecv of a large message around the ring, both posted before either is waited
// for; the receive completes through test() polled until a deadline, the send through
// wait(). A completed request's wait() and test() return the same Status again.
void check_isend_irecv(Communicator& comm, Report& report) {
  const int left = left_of(comm);
  const std::vector<float> out = labels(comm.rank(), kRendezvousCount);
  std::vector<float> in(kRendezvousCount, kUntouched);
  Request recv = comm.irecv(in, left, kTagShift);
  Request send = comm.isend(out, right_of(comm), kTagShift);
  Status got;
  const bool done = test::wait_for([&] { return comm.test(recv, &got); }, 20s);
  comm.wait(send);
  report.expect(done, "test() never saw the irecv complete (20 s)");
  if (!done) return;
  report.expect(status_is(got, left, kTagShift, kRendezvousCount),
                [&] { return "irecv completed by test(): " + show(got); });
  report.expect_values(
      in, [&](size_t i) { return label(left, i); }, "isend/irecv around the ring");
  const Status again = comm.wait(recv);
  Status tested;
  const bool test_again = comm.test(recv, &tested);
  report.expect(status_is(again, got.source, got.tag, got.count) && test_again &&
                    status_is(tested, got.source, got.tag, got.count),
                [&] { return "wait() and test() after completion: " + show(again); });
}

namespace {

// Every rank sends its rank to `root` on `tag` (the root to itself too), and the last rank
// also sends on `other_tag`; the root receives from any source on `other_tag` first
// (sent later, but selected by tag), then R messages on `tag`, each sender once.
void check_any_source_at(Communicator& comm, Report& report, int root, int tag, int other_tag) {
  const int r = comm.rank(), n = comm.size();
  const std::vector<float> mine{static_cast<float>(r)}, extra{static_cast<float>(r + 100)};
  Request sent = comm.isend(mine, root, tag);
  Request sent_extra;
  if (r == n - 1) sent_extra = comm.isend(extra, root, other_tag);
  if (r == root) {
    std::vector<float> v(1, kUntouched);
    Status s = comm.recv(v, kAnySource, other_tag);
    report.expect(status_is(s, n - 1, other_tag, 1) && v[0] == n - 1 + 100, [&] {
      return fmt::format("any source, root {}: the other tag's message {}, {}", root, v[0],
                         show(s));
    });
    std::set<int> senders;
    for (int k = 0; k < n; ++k) {
      s = comm.recv(v, kAnySource, tag);
      senders.insert(s.source);
      report.expect(status_is(s, static_cast<int>(v[0]), tag, 1), [&] {
        return fmt::format("any source, root {}: message {} with {}", root, v[0], show(s));
      });
    }
    report.expect(static_cast<int>(senders.size()) == n, [&] {
      return fmt::format("any source, root {}: {} distinct senders of {}", root, senders.size(), n);
    });
  }
  comm.wait(sent);
  if (sent_extra.valid()) comm.wait(sent_extra);
}

}  // namespace

void check_any_source(Communicator& comm, Report& report) {
  check_any_source_at(comm, report, 0, kTagAny, kTagAnyOther);
  if (comm.size() > 1)
    check_any_source_at(comm, report, comm.size() - 1, kTagAny + 1, kTagAnyOther + 1);
}

// Tags are kept apart, and messages between one pair on one tag never overtake each other:
// each rank posts five messages on tag A (small and large alternating, so eager and
// rendezvous sends race), then two on tag B, to its right; the right receives B's first,
// then A's in order. The sends are waited for in reverse order.
void check_tags_and_order(Communicator& comm, Report& report) {
  const int r = comm.rank(), left = left_of(comm);
  const size_t sizes_a[] = {3, kRendezvousCount, 5, kRendezvousCount + 1, 7},
               sizes_b[] = {kRendezvousCount, 2};
  // Message k of rank r: labels, but element 0 says k.
  auto message = [](int rank, size_t count, int k) {
    std::vector<float> v = labels(rank, count);
    v[0] = static_cast<float>(k);
    return v;
  };
  std::vector<std::vector<float>> out;
  std::vector<Request> sends;
  for (size_t k = 0; k < std::size(sizes_a); ++k)
    out.push_back(message(r, sizes_a[k], static_cast<int>(k)));
  for (size_t k = 0; k < std::size(sizes_b); ++k)
    out.push_back(message(r, sizes_b[k], static_cast<int>(k)));
  for (size_t m = 0; m < out.size(); ++m)
    sends.push_back(
        comm.isend(out[m], right_of(comm), m < std::size(sizes_a) ? kTagOrderA : kTagOrderB));
  auto receive = [&](int tag, size_t count, int k) {
    std::vector<float> in(count, kUntouched);
    const Status s = comm.recv(in, left, tag);
    const std::vector<float> want = message(left, count, k);
    report.expect(in == want && status_is(s, left, tag, count), [&] {
      return fmt::format("tag {} message {} of {} floats: got message {}, {}", tag, k, count, in[0],
                         show(s));
    });
  };
  for (size_t k = 0; k < std::size(sizes_b); ++k)
    receive(kTagOrderB, sizes_b[k], static_cast<int>(k));
  for (size_t k = 0; k < std::size(sizes_a); ++k)
    receive(kTagOrderA, sizes_a[k], static_cast<int>(k));
  for (auto it = sends.rbegin(); it != sends.rend(); ++it)
    comm.wait(*it);
}

// A receive buffer of the wrong size is a UsageError naming both sizes, for a larger and
// a smaller message, small and large; the communicator works on afterwards.
void check_size_mismatch(Communicator& comm, Report& report) {
  const size_t sent[] = {5, 3, kRendezvousCount + 1, kRendezvousCount - 1},
               posted[] = {4, 4, kRendezvousCount, kRendezvousCount};
  std::vector<std::vector<float>> out;
  std::vector<Request> sends;
  for (size_t count : sent)
    out.push_back(std::vector<float>(count, 1.0f));
  out.push_back({7, 8});
  for (const auto& v : out)
    sends.push_back(comm.isend(v, right_of(comm), kTagMismatch));
  for (size_t k = 0; k < std::size(sent); ++k) {
    std::vector<float> in(posted[k]);
    std::string what = "no error";
    try {
      comm.recv(in, left_of(comm), kTagMismatch);
    } catch (const UsageError& e) {
      what = e.what();
    }
    report.expect(what.find(fmt::format("holds {} floats", posted[k])) != std::string::npos &&
                      what.find(fmt::format("has {} floats", sent[k])) != std::string::npos,
                  [&] {
                    return fmt::format("recv of {} floats, message of {}: {}", posted[k], sent[k],
                                       what);
                  });
  }
  std::vector<float> in(2);
  comm.recv(in, left_of(comm), kTagMismatch);
  report.expect(in == std::vector<float>{7, 8},
                [&] { return fmt::format("after the mismatches: got {}, {}", in[0], in[1]); });
  for (Request& s : sends)
    comm.wait(s);
}

namespace {

// A receive from the left on a tag nobody sends, with `deadline` (default: the
// communicator's timeout), expected to end in a TimeoutError naming the left, no sooner
// than `limit_s` after the deadline was made (the call, for the default).
void expect_timeout(Communicator& comm, Report& report, Deadline deadline, double limit_s,
                    const char* how) {
  const int left = left_of(comm);
  std::vector<float> buf(1, kUntouched);
  std::string what = "no error";
  int peer = -2, exit_code = 0;
  // A given deadline counts from its making, before this call: time the wait from there.
  const auto limit =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s));
  const auto t0 = deadline.at ? *deadline.at - limit : Clock::now();
  try {
    comm.recv(buf, left, kTagSilent, deadline);
  } catch (const TimeoutError& e) {
    what = e.what();
    peer = e.peer();
    exit_code = e.exit_code();
  }
  const double waited_s = std::chrono::duration<double>(Clock::now() - t0).count();
  report.expect(peer == left && exit_code == kExitComm &&
                    what.find(fmt::format("recv from rank {}", left)) != std::string::npos &&
                    what.find(fmt::format("tag {}", int{kTagSilent})) != std::string::npos,
                [&] {
                  return fmt::format(
                      "{}: a TimeoutError naming rank {}, exit code {}: peer {}, "
                      "exit code {}, {}",
                      how, left, kExitComm, peer, exit_code, what);
                });
  report.expect(waited_s >= limit_s && waited_s < limit_s + 10, [&] {
    return fmt::format("{}: a {:.3f} s deadline fired after {:.3f} s", how, limit_s, waited_s);
  });
}

}  // namespace

// A receive nobody answers fails at its deadline, not before, with a TimeoutError naming
// the peer and tag: a deadline given, then the communicator's timeout (no deadline given).
// A cancelled receive takes nothing: a message sent on that tag later reaches the next
// receive. test() says "not done" while nothing is sent (the sends come after a barrier).
void check_deadline(Communicator& comm, Report& report) {
  const int left = left_of(comm), r = comm.rank();
  std::vector<float> later(1, kUntouched);
  Request pending = comm.irecv(later, left, kTagLater);
  report.expect(!comm.test(pending), "test() true before any send");
  expect_timeout(comm, report, Deadline::after(100ms), 0.1, "Deadline::after(100ms)");
  const std::chrono::milliseconds timeout = comm.timeout();
  comm.set_timeout(50ms);
  expect_timeout(comm, report, {}, 0.05, "set_timeout(50ms)");
  comm.set_timeout(timeout);
  barrier(comm);
  comm.send(std::vector<float>{static_cast<float>(42 + r)}, right_of(comm), kTagSilent);
  comm.send(std::vector<float>{static_cast<float>(7 + r)}, right_of(comm), kTagLater);
  std::vector<float> buf(1, kUntouched);
  comm.recv(buf, left, kTagSilent);
  comm.wait(pending);
  report.expect(buf[0] == 42 + left && later[0] == 7 + left, [&] {
    return fmt::format("after the deadlines: got {} and {} (want {} and {})", buf[0], later[0],
                       42 + left, 7 + left);
  });
}

}  // namespace dsgd::conformance
