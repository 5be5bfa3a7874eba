#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include <fmt/format.h>

#include "cli/train_command.h"
#include "core/errors.h"

namespace dsgd::cli {

int run_cli(int argc, char** argv) {
  CLI::App app{"dsgd: distributed synchronous SGD on simulated nodes or MPI ranks", "dsgd"};
  app.set_version_flag("--version", std::string("dsgd ") + DSGD_VERSION);
  app.require_subcommand(1);
  TrainFlags train;
  add_train_command(app, train);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "dsgd: error: {}\nRun 'dsgd --help' or 'dsgd train --help' for usage.\n",
               e.what());
    return kExitUsage;
  }
  try {
    if (app.got_subcommand("train")) return run_train(train);
  } catch (const Error& e) {
    fmt::print(stderr, "dsgd: error: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "dsgd: internal error: {}\n", e.what());
    return kExitOther;
  }
  return kExitOk;
}

}  // namespace dsgd::cli
