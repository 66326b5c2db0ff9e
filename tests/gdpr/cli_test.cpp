// `babelqueue schema gdpr`: stdout, stderr and exit codes against checked-in expected files
// (tests/gdpr/expected, derived from bqschema's `gdpr` command; wire-helpers §5.5).
#include "gdpr/process.hpp"

#include <gtest/gtest.h>

#include <filesystem>

using gdpr_test::run;
using gdpr_test::shell_quote;

namespace {

const std::string cli = std::string(BABELQUEUE_BINARY_DIR) + "/cli/babelqueue";
const std::string here = std::string(BABELQUEUE_SOURCE_DIR) + "/tests/gdpr";
const std::string registry = here + "/registry/registry.json";

gdpr_test::run_result gdpr_cmd(const std::string& args) {
  return run(shell_quote(cli) + " schema gdpr --registry " + shell_quote(registry) + " " + args);
}
std::string expected(const std::string& name) {
  return gdpr_test::read_file(here + "/expected/" + name);
}
std::string message(const std::string& name) {
  return shell_quote(here + "/registry/messages/" + name);
}

class SchemaGdprCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(cli)) GTEST_SKIP() << "the babelqueue CLI was not built: " << cli;
  }
};

}  // namespace

TEST_F(SchemaGdprCli, Inventory) {
  const auto r = gdpr_cmd("");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected("inventory.txt"));
  EXPECT_EQ(r.err, "");
}

TEST_F(SchemaGdprCli, RequireFlagsUnannotatedPiiNames) {
  const auto r = gdpr_cmd("--require");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, expected("require.txt"));
}

TEST_F(SchemaGdprCli, RequireWithCustomPattern) {
  auto r = gdpr_cmd("--require --pattern fax");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, expected("require-pattern-fax.txt"));
  r = gdpr_cmd("--require --pattern '^zzz$'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected("require-ok.txt"));
  r = gdpr_cmd("--require --pattern '('");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("babelqueue: gdpr: invalid PII name pattern: ", 0), 0u) << r.err;
}

TEST_F(SchemaGdprCli, MaskEnvelopeMasksDataOnly) {
  const auto r = gdpr_cmd("--mask " + message("order-created.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected("mask-envelope.txt"));
}

TEST_F(SchemaGdprCli, MaskBareObjectAgainstUrn) {
  auto r = gdpr_cmd("--mask " + message("crm-bare.json") + " --urn urn:babel:crm:profile-updated");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected("mask-bare.txt"));
  r = gdpr_cmd("--mask " + message("crm-bare.json") + " --urn urn:babel:audit:logged");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected("mask-root.txt"));
}

TEST_F(SchemaGdprCli, MaskFindings) {
  // Unregistered URN: exit 1, nothing on stdout.
  auto r = gdpr_cmd("--mask " + message("unknown-urn.json"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "babelqueue: gdpr --mask: no schema registered for \"urn:babel:nobody:registered\"\n");
  // No URN anywhere: usage error.
  r = gdpr_cmd("--mask " + message("no-urn.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "babelqueue: gdpr --mask: no URN — pass --urn, or use an envelope with a job/urn field\n");
  r = gdpr_cmd("--mask " + message("crm-bare.json"));
  EXPECT_EQ(r.exit_code, 2);
  // Unreadable or invalid message: I/O error.
  r = gdpr_cmd("--mask " + shell_quote(here + "/registry/messages/absent.json"));
  EXPECT_EQ(r.exit_code, 2);
  r = gdpr_cmd("--mask " +
               shell_quote(registry.substr(0, registry.size() - 5)));  // "registry" – no such file
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(SchemaGdprCli, RegistryErrorsAreExit2) {
  auto r =
      run(shell_quote(cli) + " schema gdpr --registry " + shell_quote(here + "/no/registry.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("babelqueue: registry: read ", 0), 0u) << r.err;
  r = run(shell_quote(cli) + " schema gdpr --bogus");
  EXPECT_EQ(r.exit_code, 2);
}
