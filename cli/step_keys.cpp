#include "cli/step_keys.h"

#include <cstdio>
#include <unistd.h>

namespace dsgd::cli {

StepKeys::StepKeys(std::istream& in)
    : in_(in), erase_(isatty(STDERR_FILENO) == 1 && isatty(STDIN_FILENO) == 1) {}

void StepKeys::pause(const std::string& prompt) {
  if (!waiting_) return;
  std::fflush(stdout);  // everything before the pause is on the screen first
  std::fprintf(stderr, "%s%s", prompt.c_str(), erase_ ? " " : "\n");
  std::fflush(stderr);
  std::string line;
  if (!std::getline(in_, line)) {
    waiting_ = false;
    if (erase_) std::fputs("\n", stderr);
  }
  // The terminal echoed Enter: back up to the prompt's line and clear it.
  if (erase_) std::fputs("\033[1A\r\033[2K", stderr);
  std::fflush(stderr);
}

}  // namespace dsgd::cli
