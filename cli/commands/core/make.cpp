// babelqueue make <urn> [--data JSON] [--queue Q] [--trace-id T]
#include "command.hpp"

#include <babelqueue/codec.hpp>

#include <iostream>

namespace {

babelqueue::cli::command_registrar make_command{
    "make", [](CLI::App& root) {
      auto* cmd =
          root.add_subcommand("make", "Build a fresh canonical envelope and print it on one line");
      struct args_t {
        std::string urn, data = "{}", queue, trace_id;
      };
      auto args = std::make_shared<args_t>();
      cmd->add_option("urn", args->urn, "Message URN, e.g. urn:babel:orders:created")->required();
      cmd->add_option("--data", args->data,
                      "JSON object for `data` (default {}); kept exactly, numbers included");
      cmd->add_option("--queue", args->queue,
                      "Logical queue written to meta.queue (default \"default\")");
      cmd->add_option("--trace-id", args->trace_id, "Trace to continue (default: a fresh UUIDv4)");
      cmd->callback([args] {
        // As text, not json: every number keeps its exact text (-12345678901234567890, 1.10).
        auto env = babelqueue::make(args->urn, babelqueue::json_text(args->data),
                                    {args->queue, args->trace_id});
        if (!env) {
          std::cout << env.error().reason() << "\n";
          std::cerr << env.error().message << "\n";
          babelqueue::cli::exit_status() = 2;
          return;
        }
        std::cout << babelqueue::encode(*env).value() << "\n";
      });
    }};

}  // namespace
