// Plain main() for the fuzz targets (no libFuzzer, any compiler): runs every file named on
// the command line, or found (recursively, sorted) under a directory named there, through
// LLVMFuzzerTestOneInput once. CTest runs it over fuzz/corpus/ and the conformance fixtures
// (label `fuzz-replay`), so every seed and every past crash is a regression test.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size);

namespace {

bool replay_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "replay: cannot read " << path << '\n';
    return false;
  }
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
  // A fresh heap copy of exactly `size` bytes, so ASan sees reads past the end.
  const auto copy = std::make_unique<std::uint8_t[]>(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), copy.get());
  LLVMFuzzerTestOneInput(copy.get(), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " <file-or-directory>...\n";
    return 2;
  }
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path root(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_regular_file(root, ec)) {
      if (!replay_file(root)) return 1;
      ++count;
      continue;
    }
    if (!std::filesystem::is_directory(root, ec)) {
      std::cerr << "replay: no such file or directory: " << root << '\n';
      return 1;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root, ec)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    if (ec) {
      std::cerr << "replay: cannot list " << root << ": " << ec.message() << '\n';
      return 1;
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      if (!replay_file(file)) return 1;
      ++count;
    }
  }
  if (count == 0) {
    std::cerr << "replay: no inputs found\n";
    return 1;
  }
  std::cout << "replayed " << count << " inputs without a violated invariant\n";
  return 0;
}
