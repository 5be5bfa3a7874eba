// ServedNode: this process's node of a multi-process run (run_node_process), held open in a
// thread of its own that runs the operations other threads hand it, one at a time, in the
// order they were handed over. How a library that is called rather than calling (the
// PyTorch backend, pytorch/) uses a simulated node: its constructor returns once the
// rendezvous is done, each submit() returns at once, and `done` reports how the operation
// ended. An operation may leave a non-blocking send or receive posted (isend, irecv): the
// node completes it when the request does, while it goes on with the next operations, so
// that two ranks that both isend before they irecv do not wait for each other. Not a thread
// pool: one node, one thread, so every rank runs its collectives in the order it was given
// them, as collectives require.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include "sim/node_process.h"

namespace dsgd::sim {

class ServedNode {
 public:
  // What an operation left running: a posted request, and what to do once it completes.
  struct Posted {
    Request request;
    std::function<void(const Status&)> then;
  };
  using Operation = std::function<std::optional<Posted>(Communicator&)>;
  // Called on the node's thread once an operation has ended: null, or what it threw.
  using Done = std::function<void(std::exception_ptr)>;

  // Joins the run (the rendezvous's errors are thrown here) and starts serving.
  ServedNode(const NodeProcessOptions& process, const ClusterOptions& cluster);
  // Runs what was handed over, ends what is still posted with an error, then leaves the run
  // (its sends written, its connections closed).
  ~ServedNode();
  ServedNode(const ServedNode&) = delete;
  ServedNode& operator=(const ServedNode&) = delete;

  // Hands `op` to the node. Once the node has failed (an operation threw a CommError: a peer
  // is gone, a deadline passed) it leaves the run at once, and every operation not yet run
  // ends with that error.
  void submit(Operation op, Done done);

 private:
  struct Item {
    Operation op;
    Done done;
  };
  struct Waiting {
    Posted posted;
    Done done;
    Clock::time_point deadline;
  };
  void serve(Communicator& comm);
  // The next operation; nullopt once closed and drained, or after `wait` with none.
  std::optional<Item> next(std::chrono::milliseconds wait);
  void run(Communicator& comm, Item& item);
  void poll(Communicator& comm);  // completes the posted requests that are done
  // Calls `done`; what a caller's callback throws is reported on stderr, not thrown.
  void finish(const Done& done, std::exception_ptr error);
  void fail(std::exception_ptr failure);  // the run's first failure: every later operation's
  std::exception_ptr failure();

  const int rank_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::list<Waiting> posted_;  // the node's thread only
  // Posted requests that ended unfinished (the group was destroyed, the run failed): their
  // buffers live until the node has left the run, which may still move bytes.
  std::list<Posted> retired_;
  bool closed_ = false;
  bool serving_ = false;  // the rendezvous is done
  bool ended_ = false;    // the node's thread is done with every operation
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace dsgd::sim
