// babelqueue schema codegen --lang cpp --registry R --out DIR [--namespace NS] [--single F]:
// C++ message types from the registry (schema/codegen.hpp, docs/typed.md).
#include "command.hpp"
#include "commands/schema/schema_group.hpp"

#include <babelqueue/schema/codegen.hpp>

#include <iostream>
#include <memory>
#include <string>

namespace {

struct codegen_args {
  std::string registry = "registry.json";
  std::string out;
  babelqueue::schema::codegen_options options;
};

babelqueue::cli::command_registrar schema_codegen_command{
    "schema codegen", [](CLI::App& root) {
      auto* cmd = babelqueue::cli::schema_group(root)->add_subcommand(
          "codegen", "Generate typed message code from the registry (C++ structs per URN)");
      cmd->footer(
          "One header per URN (structs with the schema's fields, the URN binding and the "
          "checked conversions) plus messages.hpp including them all, or one header with "
          "--single. Files whose text did not change are not rewritten. Exit 0 ok, 1 a schema "
          "cannot be generated, 2 usage or I/O error. See docs/typed.md.");
      auto args = std::make_shared<codegen_args>();
      cmd->add_option("--lang", args->options.language, "Target language (cpp)")->required();
      cmd->add_option("--registry", args->registry,
                      "Registry manifest, or the directory holding registry.json");
      cmd->add_option("--out", args->out, "Output directory")->required();
      cmd->add_option("--namespace", args->options.name_space,
                      "C++ namespace of the generated types (default messages)");
      cmd->add_option("--single", args->options.single_header,
                      "Write every URN into this one header instead");
      cmd->callback([args] {
        babelqueue::cli::exit_status() = babelqueue::schema::run_codegen(
            args->registry, args->out, args->options, std::cout, std::cerr);
      });
    }};

}  // namespace
