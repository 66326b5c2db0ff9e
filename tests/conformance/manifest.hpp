#pragma once
// Shared plumbing of the conformance runner: where the suite is, how to read it, and the
// registry through which each block's runner is plugged in.

#include <babelqueue/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <string>

namespace conformance {

/// The suite's folder (BABELQUEUE_CONFORMANCE_DIR).
std::filesystem::path suite_dir();
/// manifest.json, parsed once (nlohmann, unordered: values are compared, never bytes).
const nlohmann::json& manifest();
/// A fixture file's exact bytes.
std::string read_file(const std::filesystem::path& path);

/// Runs one manifest block; reports failures through GoogleTest assertions.
using block_runner = std::function<void(const nlohmann::json& block)>;

/// block name → runner; a block with no entry is "not covered".
std::map<std::string, block_runner>& block_registry();

struct register_block {
  register_block(const std::string& name, block_runner run) {
    block_registry()[name] = std::move(run);
  }
};

}  // namespace conformance
