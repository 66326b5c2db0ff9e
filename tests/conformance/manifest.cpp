#include "manifest.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace conformance {

std::filesystem::path suite_dir() { return BABELQUEUE_CONFORMANCE_DIR; }

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const nlohmann::json& manifest() {
  static const nlohmann::json parsed =
      nlohmann::json::parse(read_file(suite_dir() / "manifest.json"));
  return parsed;
}

std::map<std::string, block_runner>& block_registry() {
  static std::map<std::string, block_runner> registry;
  return registry;
}

}  // namespace conformance
