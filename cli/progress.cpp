#include "cli/progress.h"

#include <unistd.h>

#include <string>

#include <fmt/format.h>

namespace dsgd::cli {

Progress::Progress(int64_t total_steps, bool quiet, std::FILE* out)
    : total_(total_steps), quiet_(quiet), tty_(isatty(fileno(out)) != 0), out_(out) {}

void Progress::update(const StepMetrics& m) {
  if (quiet_) return;
  std::string acc;
  if (m.test_accuracy)
    acc = fmt::format("  test acc {:5.1f} %", *m.test_accuracy * 100);
  else if (m.train_accuracy)
    acc = fmt::format("  acc {:5.1f} %", *m.train_accuracy * 100);
  if (tty_) {
    // Redraw at most 20 times a second, and always for the last step.
    if (m.step != total_ && m.wall_s - last_draw_s_ < 0.05 && !m.test_accuracy) return;
    last_draw_s_ = m.wall_s;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * m.step / std::max<int64_t>(total_, 1));
    fmt::print(out_, "\r[{}{}] {}/{}  epoch {}  loss {:.4f}{}\x1b[K", std::string(filled, '#'),
               std::string(kWidth - filled, '.'), m.step, total_, m.epoch + 1, m.loss, acc);
    std::fflush(out_);
    drawn_ = true;
    return;
  }
  if (m.step >= next_line_step_ || m.test_accuracy || m.step == total_) {
    fmt::print(out_, "step {}/{}  epoch {}  loss {:.4f}{}  ({:.1f} s)\n", m.step, total_,
               m.epoch + 1, m.loss, acc, m.wall_s);
    std::fflush(out_);
    next_line_step_ = m.step + std::max<int64_t>(total_ / 10, 1);
  }
}

void Progress::finish() {
  if (tty_ && drawn_ && !quiet_) fmt::print(out_, "\n");
}

}  // namespace dsgd::cli
