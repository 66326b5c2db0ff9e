// babelqueue schema gdpr --registry R [--require [--pattern RE] | --mask FILE [--urn U]]:
// inventory, CI gate and log masking of the x-gdpr-sensitive fields declared in a registry,
// with bqschema's outputs and exit codes (0 ok, 1 finding / unregistered URN, 2 usage or I/O).
// Compiled with the schema commands; it needs the gdpr component too.
#if defined(BABELQUEUE_HAVE_GDPR)

#include "command.hpp"
#include "commands/schema/schema_group.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/gdpr/audit.hpp>
#include <babelqueue/gdpr/sensitive_paths.hpp>
#include <babelqueue/schema/asyncapi.hpp>
#include <babelqueue/schema/registry.hpp>

#include <iostream>
#include <memory>
#include <string>

namespace {

namespace schema = babelqueue::schema;
namespace gdpr = babelqueue::gdpr;
using babelqueue::json;

struct gdpr_options {
  std::string registry = "registry.json";
  bool require = false;
  std::string pattern;
  std::string mask;
  std::string urn;
};

int fail(const std::string& message) {
  std::cerr << "babelqueue: " << message << '\n';
  return 2;
}

// Go's %q for the URNs bqschema quotes (printable text; escapes only what a URN could hold).
std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + '"';
}

int run_inventory(const schema::registry& reg) {
  std::size_t urns = 0;
  std::size_t fields = 0;
  std::string text;
  for (const auto& urn : reg.urns()) {
    ++urns;
    auto doc = reg.load_schema(urn);
    if (!doc) return fail(doc.error().message);
    if (!*doc) continue;
    const auto paths = gdpr::sensitive_paths((*doc)->raw());
    fields += paths.size();
    if (paths.empty()) {
      text += "  " + urn + ": no sensitive fields\n";
      continue;
    }
    text += "  " + urn + ": " + std::to_string(paths.size()) + " sensitive field(s)\n";
    for (const auto& p : paths)
      text += "    - " + p.path + (p.category.empty() ? "" : " (" + p.category + ")") + "\n";
  }
  std::cout << text << urns << " URN(s), " << fields << " sensitive field(s).\n";
  return 0;
}

int run_require(const schema::registry& reg, const std::string& pattern_text) {
  auto pattern = gdpr::name_pattern::compile(pattern_text);
  if (!pattern) return fail("gdpr: " + pattern.error().message);
  std::size_t checked = 0;
  std::vector<std::pair<std::string, std::string>> findings;
  for (const auto& urn : reg.urns()) {
    auto doc = reg.load_schema(urn);
    if (!doc) return fail(doc.error().message);
    if (!*doc) continue;
    ++checked;
    for (auto& path : gdpr::unannotated_pii((*doc)->raw(), *pattern))
      findings.emplace_back(urn, std::move(path));
  }
  if (findings.empty()) {
    std::cout << "ok: every PII-named field across " << checked
              << " URN(s) is marked x-gdpr-sensitive.\n";
    return 0;
  }
  std::cout << findings.size()
            << " un-annotated PII field(s) — add \"x-gdpr-sensitive\": true (or mint the URN "
               "deliberately):\n";
  for (const auto& [urn, path] : findings) std::cout << "  x " << urn << ": " << path << '\n';
  return 1;
}

std::string string_member(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int run_mask(const schema::registry& reg, const std::string& file, const std::string& urn_flag) {
  std::string text;
  std::string error;
  if (!babelqueue::cli::read_input(file, text, error)) return fail("read " + file + ": " + error);
  auto parsed = babelqueue::parse_json(text);
  if (!parsed) return fail(file + ": invalid JSON: " + parsed.error().message);
  json message = std::move(*parsed);
  if (message.is_null()) message = json::object();  // as Go: `null` decodes to an empty map
  if (!message.is_object()) return fail(file + ": invalid JSON: the message is not a JSON object");

  // A full envelope masks its `data` against the URN in job/urn; a bare object masks itself
  // against --urn.
  std::string urn = urn_flag;
  const bool envelope = message.contains("data");
  if (envelope && urn.empty()) {
    urn = string_member(message, "job");
    if (urn.empty()) urn = string_member(message, "urn");
  }
  if (urn.empty())
    return fail("gdpr --mask: no URN — pass --urn, or use an envelope with a job/urn field");

  auto doc = reg.load_schema(urn);
  if (!doc) return fail(doc.error().message);
  if (!*doc) {
    std::cerr << "babelqueue: gdpr --mask: no schema registered for " << quote(urn) << '\n';
    return 1;
  }
  json out;
  if (envelope) {
    out = message;
    out["data"] = gdpr::mask(message["data"], (*doc)->raw());
  } else {
    out = gdpr::mask(message, (*doc)->raw());
  }
  std::cout << schema::go_indent_json(out) << '\n';
  return 0;
}

int run(const gdpr_options& o) {
  schema::registry_options ro;
  ro.strict = true;  // bqschema's manifest rules
  auto reg = schema::registry::load(o.registry, ro);
  if (!reg) return fail(reg.error().message);
  if (!o.mask.empty()) return run_mask(*reg, o.mask, o.urn);
  if (o.require) return run_require(*reg, o.pattern);
  return run_inventory(*reg);
}

babelqueue::cli::command_registrar schema_gdpr_command{
    "schema gdpr", [](CLI::App& root) {
      auto* cmd = babelqueue::cli::schema_group(root)->add_subcommand(
          "gdpr",
          "Inventory, audit and mask the x-gdpr-sensitive fields declared in the registry "
          "(bqschema gdpr parity). Without flags: per URN its sensitive paths, then totals "
          "(exit 0). --require: CI gate, exit 1 when a PII-named scalar property is not marked. "
          "--mask FILE: print FILE with the marked fields redacted for logging (an envelope masks "
          "its data against job/urn, a bare object needs --urn); exit 1 when the URN has no "
          "schema. Masking is one-way redaction, not encryption.");
      auto options = std::make_shared<gdpr_options>();
      cmd->add_option("--registry", options->registry, "Registry manifest (default registry.json)");
      cmd->add_flag("--require", options->require,
                    "Fail (exit 1) when a PII-named field is not marked x-gdpr-sensitive");
      cmd->add_option(
          "--pattern", options->pattern,
          "PII name regex for --require (ECMAScript; a leading (?i) = case-insensitive; "
          "default: the built-in email/ssn/phone/tckn/... pattern)");
      cmd->add_option("--mask", options->mask,
                      "Mask the sensitive fields of this message JSON file and print it");
      cmd->add_option("--urn", options->urn,
                      "URN to mask against (required when --mask is a bare data object)");
      cmd->callback([options] { babelqueue::cli::exit_status() = run(*options); });
    }};

}  // namespace

#endif  // BABELQUEUE_HAVE_GDPR
