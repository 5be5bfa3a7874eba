// The `dsgd` command line: subcommands, flags and exit codes. main() only calls run_cli.
#pragma once

namespace dsgd::cli {

// Parses argv, runs the subcommand, turns typed errors into exit codes (0 ok, 2 bad
// usage or input, 3 communication failure, 1 anything else) with a one-line message.
int run_cli(int argc, char** argv);

}  // namespace dsgd::cli
