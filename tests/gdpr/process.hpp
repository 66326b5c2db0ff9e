#pragma once
// Runs a child process through the shell for the CLI and interop tests: captures stdout,
// stderr (via a temp file) and the exit code. Test-only helper.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "support/files.hpp"

namespace gdpr_test {

struct run_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

using babelqueue::test::read_file;
using babelqueue::test::shell_quote;

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// A fresh private directory under $TMPDIR (or /tmp).
inline std::string make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/bq-gdpr-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return {};
  return tmpl;
}

/// Runs `command` (a shell command line, already quoted), with stdin from /dev/null.
inline run_result run(const std::string& command) {
  run_result r;
  const std::string dir = make_temp_dir();
  const std::string err_file = dir + "/stderr";
  FILE* pipe = popen((command + " </dev/null 2>" + shell_quote(err_file)).c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_file);
  std::remove(err_file.c_str());
  rmdir(dir.c_str());
  return r;
}

}  // namespace gdpr_test
