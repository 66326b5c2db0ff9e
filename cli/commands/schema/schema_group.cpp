#include "schema_group.hpp"

namespace babelqueue::cli {

CLI::App* schema_group(CLI::App& root) {
  auto existing = root.get_subcommands([](CLI::App* app) { return app->get_name() == "schema"; });
  if (!existing.empty()) return existing.front();
  auto* group = root.add_subcommand(
      "schema",
      "Per-URN schema registry tools (bqschema parity): validate messages, lint compatibility, "
      "check the registry, export AsyncAPI");
  group->require_subcommand(1);
  return group;
}

}  // namespace babelqueue::cli
