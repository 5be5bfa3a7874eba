// Lesson 3: non-blocking isend/irecv, and deadlock. Two ranks that both receive first wait
// for each other forever; dsgd detects it and names the cycle. The fix posts the send
// without waiting for it (isend), then receives. The deadlocking programs run on a small
// cluster of their own, started by rank 0 (demo_run.h), so that the lesson's own ranks can
// go on; their calls are told one by one.
#include <chrono>
#include <vector>

#include "core/errors.h"
#include "lessons/demo_run.h"
#include "lessons/lesson.h"

namespace dsgd::lessons {
namespace {

// Both ranks receive first: neither ever reaches its send.
void receive_first(Communicator& comm) {
  std::vector<float> mine{static_cast<float>(comm.rank() + 1)}, theirs(1);
  const int other = 1 - comm.rank();
  comm.recv(theirs, other);
  comm.send(mine, other);
}

// Both ranks send first, then receive: fine while a send is copied (up to the eager limit),
// a deadlock above it, where a send waits for its receive.
void send_first(Communicator& comm, size_t count) {
  std::vector<float> mine(count, static_cast<float>(comm.rank() + 1)), theirs(count);
  const int other = 1 - comm.rank();
  comm.send(mine, other);
  comm.recv(theirs, other);
}

// Rank 0 waits for a message that rank 1 never sends.
void never_sent(Communicator& comm) {
  std::vector<float> buffer(1);
  if (comm.rank() == 0) comm.recv(buffer, 1);
}

// Two nodes of a cluster of the demo's own (demo_run.h), with a blocking call's deadline.
sim::ClusterOptions two_nodes(std::chrono::milliseconds timeout) {
  sim::ClusterOptions two;
  two.nodes = 2;
  two.timeout = timeout;
  return two;
}

// Runs send_first with Open MPI's eager limit over TCP (64 KiB, dsgd's default), whatever
// the lesson's --eager-limit, and says how it ended.
void run_send_first(LessonContext& ctx, size_t count) {
  using namespace std::chrono_literals;
  const size_t bytes = count * sizeof(float);
  try {
    run_demo(ctx, two_nodes(10s), [count](Communicator& c) { send_first(c, count); });
    ctx.say_tr(
        "{} floats each way ({} bytes): both sends returned at once (each message was "
        "copied), and both receives completed",
        "每个方向 {} 个浮点数（{} 字节）：两个 send 都立即返回（消息各被复制了一份），"
        "两个 recv 都完成了",
        count, bytes);
  } catch (const DeadlockError& e) {
    ctx.say_tr("{} floats each way ({} bytes): DeadlockError: {}",
               "每个方向 {} 个浮点数（{} 字节）：DeadlockError：{}", count, bytes, e.what());
    if (ctx.lang() == Lang::zh)  // the simulator's errors are in English
      ctx.say(
          "（即：两个秩都在 send 里等对方开始接收，因为 {} 字节超过了 65536 字节的 eager "
          "上限；谁也走不到自己的 recv。）",
          bytes);
  }
}

}  // namespace

void lesson_03(LessonContext& ctx) {
  Communicator& comm = ctx.comm();
  const int rank = comm.rank();
  using namespace std::chrono_literals;

  ctx.section("deadlock");
  try {
    run_demo(ctx, two_nodes(10s), receive_first);
    ctx.say("(no deadlock?)");
  } catch (const DeadlockError& e) {
    ctx.say("DeadlockError: {}", e.what());
    if (ctx.lang() == Lang::zh)
      ctx.say(
          "（即：每个仍在运行的秩都被阻塞，也没有消息在路上：秩 0 在 recv 里等秩 1，"
          "秩 1 在 recv 里等秩 0。）");
  }

  ctx.section("fix");
  // Pairs (0, 1), (2, 3), ...: each rank posts its send, receives, then waits for the send.
  const int other = rank ^ 1;
  std::vector<float> mine{static_cast<float>(rank + 1), static_cast<float>(-(rank + 1))};
  std::vector<float> theirs(2, 0.0f);
  if (other < comm.size()) {
    Request send = comm.isend(mine, other);  // returns at once; `mine` stays untouched
    comm.recv(theirs, other);                // now both ranks can receive
    comm.wait(send);                         // the buffer `mine` may be reused after this
    ctx.print("{} {}, {} {}", ctx.tr("sent", "发送"), format_values(mine),
              ctx.tr("received", "接收"), format_values(theirs));
  } else {
    ctx.print("{}", ctx.tr("no partner (odd number of ranks)", "没有搭档（秩数为奇数）"));
  }

  ctx.section("send-first");
  if (rank == 0)
    for (const size_t count : {size_t(2), size_t(100'000)})
      run_send_first(ctx, count);

  ctx.section("overlap");
  // Post both operations first, work while the messages travel, then wait for both.
  if (other < comm.size()) {
    std::vector<float> incoming(2, 0.0f);
    Request recv = comm.irecv(incoming, other);
    Request send = comm.isend(mine, other);
    double work = 0;  // stands for computation that does not need `incoming`
    for (int i = 1; i <= 1000; ++i)
      work += 1.0 / (static_cast<double>(i) * i);
    comm.wait(send);
    comm.wait(recv);
    ctx.print("{} {:.4f}; {} {}", ctx.tr("worked meanwhile:", "等待期间算出"), work,
              ctx.tr("then received", "然后收到"), format_values(incoming));
  }

  ctx.section("timeout");
  sim::ClusterOptions deadline = two_nodes(200ms);
  deadline.detect_deadlock = false;  // let the deadline fire instead
  try {
    run_demo(ctx, deadline, never_sent);
  } catch (const TimeoutError& e) {
    ctx.say("TimeoutError: {}", e.what());
    if (ctx.lang() == Lang::zh)
      ctx.say(
          "（即：秩 0 从秩 1 接收（标签 0）时超过了 0.2 秒的截止时间；秩 1 还活着吗？"
          "它发送了吗？）");
  }

  ctx.section("exercise");
  ctx.section("next");
}

}  // namespace dsgd::lessons
