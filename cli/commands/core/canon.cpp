// babelqueue canon [FILE|-]: the canonical re-encoding (D2/D4) of an accepted envelope.
#include "command.hpp"

#include <babelqueue/codec.hpp>

#include <iostream>

namespace {

babelqueue::cli::command_registrar canon_command{
    "canon", [](CLI::App& root) {
      auto* cmd = root.add_subcommand("canon",
                                      "Print the canonical re-encoding of an accepted envelope "
                                      "(numbers and unknown keys kept)");
      auto path = std::make_shared<std::string>("-");
      cmd->add_option("file", *path, "File holding the body, or - for standard input (default)");
      cmd->callback([path] {
        auto env = babelqueue::cli::read_envelope(*path);
        if (!env) return;
        auto text = babelqueue::encode(*env);
        if (!text) {
          std::cout << text.error().reason() << "\n" << text.error().message << "\n";
          babelqueue::cli::exit_status() = 1;
          return;
        }
        std::cout << *text << "\n";
      });
    }};

}  // namespace
