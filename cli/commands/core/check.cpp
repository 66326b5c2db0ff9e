// babelqueue check [FILE|-]: exit 0 + "ok <urn>", or exit 1 + the D3 reason on line one.
#include "command.hpp"

#include <babelqueue/codec.hpp>

#include <iostream>

namespace {

babelqueue::cli::command_registrar check_command{
    "check", [](CLI::App& root) {
      auto* cmd = root.add_subcommand(
          "check",
          "Check a message body against the accept rules (D3); prints `ok <urn>` or the reason");
      auto path = std::make_shared<std::string>("-");
      cmd->add_option("file", *path, "File holding the body, or - for standard input (default)");
      cmd->callback([path] {
        if (auto env = babelqueue::cli::read_envelope(*path))
          std::cout << "ok " << env->urn() << "\n";
      });
    }};

}  // namespace
