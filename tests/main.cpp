// Main of dsgd_tests and dsgd_gui_tests: the Catch2 session, with skipped tests reported as
// such (tests/skip.h).
#include "skip.h"

int main(int argc, char** argv) {
  return dsgd::test::run_catch(argc, argv);
}
