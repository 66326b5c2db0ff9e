// babelqueue schema check --registry R: does every registered schema load and parse?
#include "command.hpp"
#include "commands/schema/schema_group.hpp"

#include <babelqueue/schema/tooling.hpp>

#include <iostream>
#include <memory>

namespace {

babelqueue::cli::command_registrar schema_check_command{
    "schema check", [](CLI::App& root) {
      auto* cmd = babelqueue::cli::schema_group(root)->add_subcommand(
          "check", "Check the registry itself (every schema loads and parses)");
      cmd->footer(
          "Check the registry itself: the manifest is well-formed (non-empty urn and schema, no "
          "duplicate URN) and every schema file reads and parses as a JSON object. Prints `  ok "
          "<urn>` / `  x <urn>: <error>` per URN; exit 1 when any fails, 2 when the manifest is "
          "bad.");
      auto registry = std::make_shared<std::string>("registry.json");
      cmd->add_option("--registry", *registry, "Registry manifest (default registry.json)");
      cmd->callback([registry] {
        babelqueue::cli::exit_status() =
            babelqueue::schema::run_check(*registry, std::cout, std::cerr);
      });
    }};

}  // namespace
