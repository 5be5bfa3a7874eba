#include "cli/app.h"
#include "core/io/interrupt.h"

int main(int argc, char** argv) {
  dsgd::handle_interrupts("dsgd");  // before any thread: they inherit the blocked signals
  return dsgd::cli::run_cli(argc, argv);
}
