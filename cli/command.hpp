#pragma once
// Self-registering CLI commands. A command lives in one file under
// cli/commands/<component>/ and registers itself with a static `command_registrar`, so a
// new command never edits main.cpp:
//
//   static babelqueue::cli::command_registrar reg{"check", [](CLI::App& app) {
//     auto* cmd = app.add_subcommand("check", "…");
//     …; cmd->callback([=] { throw CLI::RuntimeError(exit_code); });
//   }};
//
// A command reports its exit status by storing it in cli::exit_status() (0 ok, 1 finding /
// rejected, 2 usage or I/O error), which main() returns.

#include <babelqueue/envelope.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue::cli {

using command_setup = std::function<void(CLI::App& root)>;

struct command_entry {
  std::string name;
  command_setup setup;
};

/// Every registered command, in registration order (main sorts them by name).
std::vector<command_entry>& command_registry();

struct command_registrar {
  command_registrar(std::string name, command_setup setup) {
    command_registry().push_back({std::move(name), std::move(setup)});
  }
};

/// The process exit status a command's callback sets.
int& exit_status();

/// Reads a whole file, or standard input for "-" or an empty path. Returns false and fills
/// `error` on failure.
bool read_input(const std::string& path, std::string& out, std::string& error);

/// Reads and decodes one message body for a command. On an I/O error prints it and sets
/// exit status 2; on a rejection prints the D3 reason (line one) and message and sets 1.
std::optional<babelqueue::envelope> read_envelope(const std::string& path);

}  // namespace babelqueue::cli
