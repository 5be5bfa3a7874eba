// The keys of `dsgd lesson --step`: at each pause a prompt says where the student is
// ("message 3 so far", "next: part 2") and what the keys do; Enter goes on, the end of input
// (Ctrl-D) runs the lesson to its end without pausing again. Prompts go to standard error,
// so that standard output stays the lesson's text (as it prints without --step); where
// standard error is a terminal a prompt is erased once answered.
// Not the stepping itself: LiveLesson delivers the messages (lessons/live_lesson.h).
#pragma once

#include <istream>
#include <string>

namespace dsgd::cli {

class StepKeys {
 public:
  explicit StepKeys(std::istream& in);

  // Shows `prompt` and waits for a line of input; nothing once the input has ended.
  void pause(const std::string& prompt);

 private:
  std::istream& in_;
  bool waiting_ = true;
  bool erase_ = false;  // standard error and input are terminals: erase an answered prompt
};

}  // namespace dsgd::cli
