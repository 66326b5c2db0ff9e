#pragma once
// The `babelqueue schema` parent command. Every `schema …` command file (validate, compat,
// check, export-asyncapi, and the gdpr engineer's gdpr*.cpp) attaches itself to the one
// parent this returns, whichever registers first.

#include <CLI/CLI.hpp>

namespace babelqueue::cli {

/// The existing `schema` subcommand of `root`, or a new one (requiring one subcommand).
CLI::App* schema_group(CLI::App& root);

}  // namespace babelqueue::cli
