#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "cli/backend.h"
#include "cli/bench_command.h"
#include "cli/compare_command.h"
#include "cli/node_command.h"
#include "cli/lesson_command.h"
#include "cli/trace_command.h"
#include "cli/train_command.h"
#include "cli/workload_command.h"
#include "core/errors.h"
#include "sim/fd_limit.h"

namespace dsgd::cli {

int run_cli(int argc, char** argv) {
  sim::raise_open_file_limit();  // simulated nodes need descriptors: every one allowed
  CLI::App app{"dsgd: distributed synchronous SGD on simulated nodes or MPI ranks", "dsgd"};
  app.set_version_flag("--version", std::string("dsgd ") + DSGD_VERSION);
  app.require_subcommand(1);
  TrainFlags train;
  add_train_command(app, train);
  TraceFlags trace;
  add_trace_command(app, trace);
  BenchFlags bench;
  add_bench_command(app, bench);
  WorkloadFlags workload;
  add_workload_command(*app.get_subcommand("bench"), workload);
  NodeFlags node;
  add_node_command(app, node);
  LessonFlags lesson;
  add_lesson_command(app, lesson);
  CompareFlags compare;
  add_compare_command(app, compare);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other error: what CLI11 found, then where to read the usage of
    // the command that was being parsed.
    std::string command = "dsgd";
    for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
      sub = sub->get_subcommands().front();
      command += " " + sub->get_name();
    }
    return report_error(UsageError(fmt::format("{}; see '{} --help'", e.what(), command)), argc,
                        argv);
  }
  try {
    if (app.got_subcommand("train")) return run_train(train);
    if (app.got_subcommand("trace")) return run_trace(app, trace);
    if (app.got_subcommand("bench"))
      return app.get_subcommand("bench")->got_subcommand("workload") ? run_workload(workload)
                                                                     : run_bench(bench);
    if (app.got_subcommand("node")) return run_node(node);
    if (app.got_subcommand("lesson")) return run_lesson(lesson);
    if (app.got_subcommand("compare")) return run_compare(app, compare);
  } catch (const ReportedByRankZero& e) {  // rank 0 printed the message
    return e.exit_code();
  } catch (const Error& e) {
    return report_error(e, argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "dsgd: internal error: {}\n", e.what());
    return kExitOther;
  }
  return kExitOk;
}

}  // namespace dsgd::cli
