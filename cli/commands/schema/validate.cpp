// babelqueue schema validate --registry R FILE…: each envelope's `data` against its URN's schema.
#include "command.hpp"
#include "commands/schema/schema_group.hpp"

#include <babelqueue/schema/tooling.hpp>

#include <iostream>
#include <memory>

namespace {

struct validate_args {
  std::string registry = "registry.json";
  std::vector<std::string> files;
};

babelqueue::cli::command_registrar schema_validate_command{
    "schema validate", [](CLI::App& root) {
      auto* cmd = babelqueue::cli::schema_group(root)->add_subcommand(
          "validate",
          "Validate each envelope's `data` against the schema registered for its URN (`job`, else "
          "`urn`). Prints `<file> [<urn>]: ok` or the violations, as bqschema does. Exit 0 all "
          "valid "
          "or skipped, 1 a violation, 2 usage/IO error. minLength counts Unicode characters (D8).");
      auto args = std::make_shared<validate_args>();
      cmd->add_option("--registry", args->registry, "Registry manifest (default registry.json)");
      cmd->add_option("files", args->files, "Envelope JSON files");
      cmd->callback([args] {
        babelqueue::cli::exit_status() =
            babelqueue::schema::run_validate(args->registry, args->files, std::cout, std::cerr);
      });
    }};

}  // namespace
