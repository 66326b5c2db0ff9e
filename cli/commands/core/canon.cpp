// babelqueue canon [FILE|-]: the canonical re-encoding (D2/D4) of an accepted envelope.
#include "command.hpp"

#include <babelqueue/codec.hpp>

#include <iostream>

namespace {

babelqueue::cli::command_registrar canon_command{"canon", [](CLI::App& root) {
  auto* cmd = root.add_subcommand(
      "canon", "Print the canonical re-encoding of an accepted envelope (numbers and unknown keys kept)");
  auto path = std::make_shared<std::string>("-");
  cmd->add_option("file", *path, "File holding the body, or - for standard input (default)");
  cmd->callback([path] {
    std::string body, io_error;
    if (!babelqueue::cli::read_input(*path, body, io_error)) {
      std::cerr << io_error << "\n";
      babelqueue::cli::exit_status() = 2;
      return;
    }
    auto env = babelqueue::decode(std::move(body));
    if (!env) {
      std::cout << env.error().reason() << "\n" << env.error().message << "\n";
      babelqueue::cli::exit_status() = 1;
      return;
    }
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
