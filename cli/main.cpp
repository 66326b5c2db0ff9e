// babelqueue — the operator's command line. Each command is one file under commands/.
#include "command.hpp"
#include "signals.hpp"

#include <babelqueue/version.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

namespace {

int run(int argc, char** argv) {
  // Before anything can start a thread (cli/signals.hpp says why).
  const babelqueue::cli::signal_router signals;
  CLI::App app{"babelqueue — BabelQueue C++ SDK command line (envelope codec, runtime, registry)",
               "babelqueue"};
  // The linked library's version (one place: project(VERSION) in CMakeLists.txt).
  app.set_version_flag("--version", std::string(babelqueue::library_version()));
  app.require_subcommand(1);
  auto& registry = babelqueue::cli::command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  for (auto& entry : registry) entry.setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // CLI11 returns 0 for --help/--version; usage errors are exit 2 across all commands.
    return rc == 0 ? 0 : 2;
  }
  return babelqueue::cli::exit_status();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    // A command's own errors are reported by the command; this is what escaped one (e.g. the
    // OS refusing a thread).
    std::fputs("babelqueue: ", stderr);
    std::fputs(e.what(), stderr);
    std::fputs("\n", stderr);
  } catch (...) {
    std::fputs("babelqueue: an unknown exception\n", stderr);
  }
  return 2;
}
