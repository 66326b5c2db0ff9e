// `babelqueue schema codegen`: load the registry, generate, write the files that changed.
#include <babelqueue/schema/codegen.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <system_error>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace {

bool same_content(const std::filesystem::path& file, const std::string& text) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  const std::string current((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return current == text;
}

}  // namespace

int run_codegen(const std::filesystem::path& registry_path, const std::filesystem::path& out_dir,
                const codegen_options& options, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  std::filesystem::path manifest = registry_path;
  if (std::filesystem::is_directory(manifest, ec)) manifest /= "registry.json";
  registry_options ro;
  ro.strict = true;  // the registry commands' (bqschema's) manifest rules
  auto reg = registry::load(manifest, ro);
  if (!reg) {
    err << "babelqueue: " << reg.error().message << '\n';
    return 2;
  }
  auto files = generate_code(*reg, options);
  if (!files) {
    err << "babelqueue: " << files.error().message << '\n';
    return files.error().code == make_error_code(babelqueue::errc::invalid_argument) &&
                   files.error().message.rfind("codegen:", 0) == 0
               ? 2
               : 1;
  }
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    err << "babelqueue: create " << out_dir.string() << ": " << ec.message() << '\n';
    return 2;
  }
  for (const auto& f : *files) {
    const auto path = out_dir / f.name;
    if (same_content(path, f.text)) continue;
    std::ofstream o(path, std::ios::binary | std::ios::trunc);
    o << f.text;
    o.close();
    if (!o) {
      err << "babelqueue: write " << path.string() << ": failed\n";
      return 2;
    }
  }
  out << "wrote " << files->size() << " file(s) to " << out_dir.string() << " ("
      << reg->urns().size() << " URN(s))\n";
  return 0;
}

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
