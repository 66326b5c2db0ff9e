#pragma once
// The record behind the case × transport table: each contract test appends one line
// `<case>\t<target>\t<passed|failed|skipped>\t<reason>` to a results file when it ends.
// CTest runs every test in its own process (often two at once), so the line is written with
// one append-mode write(); contract_table.sh turns the file into the table. The file is
// $BABELQUEUE_CONTRACT_RESULTS, or BQ_CONTRACT_RESULTS (set by CMake, in the build tree).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#ifndef BQ_CONTRACT_RESULTS
#define BQ_CONTRACT_RESULTS ""
#endif

namespace bqcontract {

inline std::string results_path() {
  const char* env = std::getenv("BABELQUEUE_CONTRACT_RESULTS");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(BQ_CONTRACT_RESULTS);
}

/// Appends the running test's outcome on `target` (`skip_reason` when it skipped).
inline void record_outcome(const std::string& target, std::string skip_reason) {
  const std::string path = results_path();
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (path.empty() || info == nullptr) return;
  std::string name = info->name();  // "<Case>/<target>"
  name = name.substr(0, name.find('/'));
  const char* outcome = ::testing::Test::HasFailure()  ? "failed"
                        : ::testing::Test::IsSkipped() ? "skipped"
                                                       : "passed";
  if (std::string(outcome) != "skipped") skip_reason.clear();
  for (char& c : skip_reason) {
    if (c == '\t' || c == '\n' || c == '|') c = ' ';
  }
  const std::string line = name + '\t' + target + '\t' + outcome + '\t' + skip_reason + '\n';
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}

}  // namespace bqcontract
