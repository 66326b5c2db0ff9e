// babelqueue schema compat OLD NEW: is the schema change backward-compatible?
#include "command.hpp"
#include "commands/schema/schema_group.hpp"

#include <babelqueue/schema/tooling.hpp>

#include <iostream>
#include <memory>

namespace {

constexpr const char* compat_help =
    "Report the breaking changes from OLD to NEW schema (exit 1; mint a new URN instead), or "
    "`backward-compatible: no breaking changes.` (exit 0). Applies every bqschema 0.4.0 rule "
    "with its text. Differs from bqschema, which calls these compatible: (1) removing or "
    "renaming a property under an open schema (`<path>: property removed`, as bqschema 0.4.1) "
    "- the field is no longer governed; (2) adding a type where any was allowed; (3) adding or "
    "changing `const`; (4) adding `items` constraints to an array that allowed any item; "
    "(5) enum values compare as JSON values, so \"1\" -> 1 is a removal. Why: each of these "
    "rejects data the old schema accepted, which the versioning policy calls breaking.";

babelqueue::cli::command_registrar schema_compat_command{
    "schema compat", [](CLI::App& root) {
      auto* cmd = babelqueue::cli::schema_group(root)->add_subcommand(
          "compat",
          "Lint OLD -> NEW schema for breaking changes (bqschema rules plus stricter ones)");
      cmd->footer(compat_help);
      auto files = std::make_shared<std::vector<std::string>>();
      cmd->add_option("schemas", *files, "OLD and NEW schema files");
      cmd->callback([files] {
        if (files->size() != 2) {
          std::cerr << "babelqueue: compat: need exactly two schema files: <old> <new>\n";
          babelqueue::cli::exit_status() = 2;
          return;
        }
        babelqueue::cli::exit_status() =
            babelqueue::schema::run_compat((*files)[0], (*files)[1], std::cout, std::cerr);
      });
    }};

}  // namespace
