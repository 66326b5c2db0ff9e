#pragma once
// Runs a child process through the shell for the CLI and interop tests: captures stdout,
// stderr (via a temp file) and the exit code. Test-only helper.
#include "support/files.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

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
  const auto done =
      babelqueue::test::run_command(command + " </dev/null 2>" + shell_quote(err_file));
  r.out = done.out;
  r.exit_code = done.exit_code;
  r.err = read_file(err_file);
  std::remove(err_file.c_str());
  rmdir(dir.c_str());
  return r;
}

}  // namespace gdpr_test
