#pragma once
// Small helpers the test suites share: whole-file reads, shell quoting for popen/system
// command lines, and finding the Python peer (the PyPI `babelqueue` SDK in the venv that
// scripts/setup-python-peer.sh makes). Header-only; tests/ is on every test's include path.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace babelqueue::test {

// The whole file as bytes; empty when it cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `s` without trailing newlines, carriage returns and spaces.
inline std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// `s` as one single-quoted POSIX shell word.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

// True under CI (CI=true), where a missing peer is a failure instead of a skip.
inline bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// The Python peer's interpreter: $BABELQUEUE_PEER_PYTHON, else the path recorded in
// build/peer-python.txt (source or binary tree); empty when none is executable.
inline std::string peer_python() {
  if (const char* p = std::getenv("BABELQUEUE_PEER_PYTHON"); p != nullptr && *p != '\0') return p;
  for (std::string f : {std::string(BABELQUEUE_SOURCE_DIR) + "/build/peer-python.txt",
                        std::string(BABELQUEUE_BINARY_DIR) + "/peer-python.txt"}) {
    std::string p = trim(read_file(f));
    if (!p.empty() && ::access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

/// What a shell command printed on its standard output, and how it ended.
struct command_result {
  std::string out;
  int exit_code = -1;  ///< its exit status; -1 when it did not start or did not exit normally
};

/// Runs `command` (a shell command line, already quoted) and reads its standard output.
inline command_result run_command(const std::string& command) {
  command_result r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace babelqueue::test
