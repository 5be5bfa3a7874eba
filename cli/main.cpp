#include "cli/app.h"

int main(int argc, char** argv) {
  return dsgd::cli::run_cli(argc, argv);
}
