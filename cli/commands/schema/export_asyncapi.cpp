// babelqueue schema export-asyncapi --registry R [-o FILE] [--title T] [--doc-version V]
#include "command.hpp"
#include "commands/schema/schema_group.hpp"

#include <babelqueue/schema/tooling.hpp>

#include <iostream>
#include <memory>
#include <optional>

namespace {

struct export_args {
  std::string registry = "registry.json";
  std::string output;
  babelqueue::schema::asyncapi_options options;
};

babelqueue::cli::command_registrar schema_export_command{
    "schema export-asyncapi", [](CLI::App& root) {
      auto* cmd = babelqueue::cli::schema_group(root)->add_subcommand(
          "export-asyncapi",
          "Emit an AsyncAPI 3.0.0 event catalog from the registry: one channel per URN whose "
          "message payload is that URN's schema (byte-identical to bqschema's output).");
      auto args = std::make_shared<export_args>();
      cmd->add_option("--registry", args->registry, "Registry manifest (default registry.json)");
      cmd->add_option("-o", args->output, "Write to this file instead of standard output");
      cmd->add_option("--title", args->options.title,
                      "info.title (default \"BabelQueue Event Catalog\")");
      cmd->add_option("--doc-version", args->options.version, "info.version (default \"1.0.0\")");
      cmd->callback([args] {
        std::optional<std::string> out;
        if (!args->output.empty()) out = args->output;
        babelqueue::cli::exit_status() = babelqueue::schema::run_export_asyncapi(
            args->registry, out, args->options, std::cout, std::cerr);
      });
    }};

}  // namespace
