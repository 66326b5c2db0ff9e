#include "command.hpp"

#include <babelqueue/codec.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace babelqueue::cli {

std::vector<command_entry>& command_registry() {
  static std::vector<command_entry> registry;
  return registry;
}

int& exit_status() {
  static int status = 0;
  return status;
}

bool read_input(const std::string& path, std::string& out, std::string& error) {
  if (path.empty() || path == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    out = buffer.str();
    return true;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  out.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  return true;
}

std::optional<babelqueue::envelope> read_envelope(const std::string& path) {
  std::string body, io_error;
  if (!read_input(path, body, io_error)) {
    std::cerr << io_error << "\n";
    exit_status() = 2;
    return std::nullopt;
  }
  auto env = babelqueue::decode(std::move(body));
  if (!env) {
    std::cout << env.error().reason() << "\n" << env.error().message << "\n";
    exit_status() = 1;
    return std::nullopt;
  }
  return std::move(*env);
}

}  // namespace babelqueue::cli
