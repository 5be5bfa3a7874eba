#include "cli/app.h"

namespace dsgd::cli {
int run_cli(int, char**) {
  return 0;
}
}  // namespace dsgd::cli
