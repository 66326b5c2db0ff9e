// AWS credential resolution: the environment pair first, then the shared credentials file's
// profile section. The environment is faked through the env_lookup seam; files live in a
// fresh temporary directory per test.
#include "sqs/credentials.hpp"

#include <babelqueue/runtime/error.hpp>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace {

namespace fs = std::filesystem;
using babelqueue::transport_errc;
using babelqueue::sqs::detail::credentials;
using babelqueue::sqs::detail::credentials_from_ini;
using babelqueue::sqs::detail::env_lookup;
using babelqueue::sqs::detail::process_env;
using babelqueue::sqs::detail::resolve_credentials;

// Values that must never show up in an error message.
constexpr const char* kFileSecret = "FILESECRETwJalrXUtnFEMIK7MDENG";
constexpr const char* kFileToken = "FILETOKENAQoDYXdzEPT//////////wEXAMPLE==";
constexpr const char* kEnvSecret = "ENVSECRETbPxRfiCYEXAMPLEKEY";

class Credentials : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "bq-sqs-creds-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    home_ = dir_ / "home";
    fs::create_directories(home_ / ".aws");
    env_["HOME"] = home_.string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }

  static void write(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  fs::path home_file() const { return home_ / ".aws" / "credentials"; }

  env_lookup env() const {
    return [vars = env_](std::string_view name) -> std::optional<std::string> {
      auto it = vars.find(std::string(name));
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  }

  // The failure's message, checked for every secret this suite uses.
  static std::string message_without_secrets(const babelqueue::result<credentials>& r) {
    EXPECT_FALSE(r.has_value());
    if (r.has_value()) return {};
    const std::string& m = r.error().message;
    for (const char* secret : {kFileSecret, kFileToken, kEnvSecret}) {
      EXPECT_EQ(m.find(secret), std::string::npos) << "secret in: " << m;
    }
    return m;
  }

  fs::path dir_, home_;
  std::map<std::string, std::string> env_;
};

const std::string kTwoProfiles = std::string("[default]\n") +
                                 "aws_access_key_id = AKIDDEFAULT\n"
                                 "aws_secret_access_key = " +
                                 kFileSecret +
                                 "\n"
                                 "\n"
                                 "[dev]\n"
                                 "aws_access_key_id = AKIDDEV\n"
                                 "aws_secret_access_key = devsecret\n"
                                 "aws_session_token = " +
                                 kFileToken + "\n";

TEST_F(Credentials, EnvironmentWinsOverTheFile) {
  write(home_file(), kTwoProfiles);
  env_["AWS_ACCESS_KEY_ID"] = "AKIDENV";
  env_["AWS_SECRET_ACCESS_KEY"] = kEnvSecret;
  env_["AWS_SESSION_TOKEN"] = "envtoken";
  env_["AWS_PROFILE"] = "dev";
  auto r = resolve_credentials({}, env());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->access_key_id, "AKIDENV");
  EXPECT_EQ(r->secret_access_key, kEnvSecret);
  EXPECT_EQ(r->session_token, "envtoken");

  // An explicit profile does not outrank the environment either.
  auto p = resolve_credentials("dev", env());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->access_key_id, "AKIDENV");
}

TEST_F(Credentials, EnvironmentWithoutTokenIsLongTerm) {
  env_["AWS_ACCESS_KEY_ID"] = "AKIDENV";
  env_["AWS_SECRET_ACCESS_KEY"] = kEnvSecret;
  auto r = resolve_credentials({}, env());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->session_token, "");
  env_["AWS_SESSION_TOKEN"] = "";
  auto e = resolve_credentials({}, env());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->session_token, "");
}

TEST_F(Credentials, HalfAnEnvironmentPairFallsToTheFile) {
  write(home_file(), kTwoProfiles);
  for (const char* present : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}) {
    env_.erase("AWS_ACCESS_KEY_ID");
    env_.erase("AWS_SECRET_ACCESS_KEY");
    env_[present] = kEnvSecret;
    env_["AWS_SESSION_TOKEN"] = "envtoken";  // not used with the file's keys
    auto r = resolve_credentials({}, env());
    ASSERT_TRUE(r) << present << ": " << r.error().message;
    EXPECT_EQ(r->access_key_id, "AKIDDEFAULT") << present;
    EXPECT_EQ(r->secret_access_key, kFileSecret) << present;
    EXPECT_EQ(r->session_token, "") << present;
  }
  // Set but empty counts as unset.
  env_["AWS_ACCESS_KEY_ID"] = "";
  env_["AWS_SECRET_ACCESS_KEY"] = kEnvSecret;
  auto r = resolve_credentials({}, env());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->access_key_id, "AKIDDEFAULT");
}

TEST_F(Credentials, ProfileSelection) {
  write(home_file(), kTwoProfiles);
  auto def = resolve_credentials({}, env());
  ASSERT_TRUE(def) << def.error().message;
  EXPECT_EQ(def->access_key_id, "AKIDDEFAULT");

  env_["AWS_PROFILE"] = "dev";
  auto dev = resolve_credentials({}, env());
  ASSERT_TRUE(dev) << dev.error().message;
  EXPECT_EQ(dev->access_key_id, "AKIDDEV");
  EXPECT_EQ(dev->secret_access_key, "devsecret");
  EXPECT_EQ(dev->session_token, kFileToken);  // '=' inside the value is kept

  // The parameter overrides AWS_PROFILE.
  auto param = resolve_credentials("default", env());
  ASSERT_TRUE(param);
  EXPECT_EQ(param->access_key_id, "AKIDDEFAULT");
  EXPECT_EQ(param->session_token, "");

  // An empty AWS_PROFILE means "default".
  env_["AWS_PROFILE"] = "";
  auto empty = resolve_credentials({}, env());
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->access_key_id, "AKIDDEFAULT");
}

TEST_F(Credentials, SharedCredentialsFileOverridesThePath) {
  write(home_file(), "[default]\naws_access_key_id = AKIDHOME\naws_secret_access_key = home\n");
  const fs::path other = dir_ / "elsewhere.ini";
  write(other, "[default]\naws_access_key_id = AKIDOTHER\naws_secret_access_key = other\n");
  env_["AWS_SHARED_CREDENTIALS_FILE"] = other.string();
  auto r = resolve_credentials({}, env());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->access_key_id, "AKIDOTHER");

  // A leading ~ is HOME.
  write(home_ / "creds", "[default]\naws_access_key_id = AKIDTILDE\naws_secret_access_key = t\n");
  env_["AWS_SHARED_CREDENTIALS_FILE"] = "~/creds";
  auto t = resolve_credentials({}, env());
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->access_key_id, "AKIDTILDE");
}

TEST_F(Credentials, IniCommentsAndWhitespace) {
  const std::string text = std::string("\xEF\xBB\xBF# a comment\r\n") +
                           "; another comment\r\n"
                           "\r\n"
                           "  [ work ]  \r\n"
                           "\t# indented comment\r\n"
                           "AWS_ACCESS_KEY_ID=AKIDWORK\r\n"
                           "   aws_secret_access_key   =   " +
                           kFileSecret +
                           "   \r\n"
                           "aws_session_token: tok\r\n"
                           "region = eu-west-1\r\n"
                           "\r\n"
                           "[other]\r\n"
                           "aws_access_key_id = AKIDOTHER\r\n";
  auto c = credentials_from_ini(text, "work");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->access_key_id, "AKIDWORK");
  EXPECT_EQ(c->secret_access_key, kFileSecret);
  EXPECT_EQ(c->session_token, "tok");

  write(home_file(), text);
  env_["AWS_PROFILE"] = "work";
  auto r = resolve_credentials({}, env());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->access_key_id, "AKIDWORK");
}

TEST(CredentialsIni, SectionRules) {
  const std::string text =
      "aws_access_key_id = OUTSIDE\n"
      "[default2]\naws_access_key_id = A2\naws_secret_access_key = S2\n"
      "[profile default]\naws_access_key_id = AP\naws_secret_access_key = SP\n"
      "[default]\naws_access_key_id = A1\n"
      "[half]\naws_access_key_id = AH\n"
      "[empty-value]\naws_access_key_id =\naws_secret_access_key = SE\n"
      "[default]\naws_secret_access_key = S1 # not a comment\n";
  // Keys outside the section, and sections whose names merely start alike, do not count; a
  // repeated section continues the first; inline '#' is part of the value (configparser).
  auto d = credentials_from_ini(text, "default");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->access_key_id, "A1");
  EXPECT_EQ(d->secret_access_key, "S1 # not a comment");
  EXPECT_FALSE(credentials_from_ini(text, "missing"));
  EXPECT_FALSE(credentials_from_ini(text, "half"));
  EXPECT_FALSE(credentials_from_ini(text, "empty-value"));
  EXPECT_FALSE(credentials_from_ini(text, "Default"));  // section names are case-sensitive
  EXPECT_FALSE(credentials_from_ini("", "default"));
}

TEST_F(Credentials, MissingFileIsAPermissionErrorSayingWhereItLooked) {
  env_["AWS_SECRET_ACCESS_KEY"] = kEnvSecret;  // half a pair: ignored, never quoted
  auto r = resolve_credentials({}, env());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::permission);
  EXPECT_EQ(r.code(), babelqueue::condition::permission);
  const std::string m = message_without_secrets(r);
  EXPECT_NE(m.find("no AWS credentials"), std::string::npos) << m;
  EXPECT_NE(m.find(home_file().string()), std::string::npos) << m;
  EXPECT_NE(m.find("AWS_ACCESS_KEY_ID"), std::string::npos) << m;
  EXPECT_NE(m.find("\"default\""), std::string::npos) << m;

  env_["AWS_SHARED_CREDENTIALS_FILE"] = (dir_ / "nope").string();
  auto o = resolve_credentials("dev", env());
  ASSERT_FALSE(o);
  EXPECT_EQ(o.code(), transport_errc::permission);
  const std::string mo = message_without_secrets(o);
  EXPECT_NE(mo.find((dir_ / "nope").string()), std::string::npos) << mo;
  EXPECT_NE(mo.find("AWS_SHARED_CREDENTIALS_FILE"), std::string::npos) << mo;
  EXPECT_NE(mo.find("\"dev\""), std::string::npos) << mo;
}

TEST_F(Credentials, MissingProfileIsAPermissionError) {
  write(home_file(), kTwoProfiles);
  env_["AWS_PROFILE"] = "prod";
  auto r = resolve_credentials({}, env());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::permission);
  const std::string m = message_without_secrets(r);
  EXPECT_NE(m.find("\"prod\""), std::string::npos) << m;
  EXPECT_NE(m.find("AWS_PROFILE"), std::string::npos) << m;
  EXPECT_NE(m.find(home_file().string()), std::string::npos) << m;

  // A section without either key holds no credentials either.
  write(home_file(), "[prod]\nregion = us-east-1\n");
  auto e = resolve_credentials({}, env());
  ASSERT_FALSE(e);
  EXPECT_EQ(e.code(), transport_errc::permission);
  message_without_secrets(e);
}

TEST_F(Credentials, NoHomeAndNoOverride) {
  env_.erase("HOME");
  auto r = resolve_credentials({}, env());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::permission);
  const std::string m = message_without_secrets(r);
  EXPECT_NE(m.find("HOME"), std::string::npos) << m;
}

TEST_F(Credentials, PartialProfileIsInvalid) {
  write(home_file(), std::string("[default]\naws_secret_access_key = ") + kFileSecret + "\n");
  auto r = resolve_credentials({}, env());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::invalid_argument);
  const std::string m = message_without_secrets(r);
  EXPECT_NE(m.find("aws_access_key_id"), std::string::npos) << m;
  EXPECT_NE(m.find("\"default\""), std::string::npos) << m;
}

TEST_F(Credentials, MalformedFileIsInvalidAndNamesTheProfile) {
  // A line without a delimiter: the secret on it must not be echoed.
  write(home_file(), std::string("[default]\naws_access_key_id = AKID\naws_secret_access_key ") +
                         kFileSecret + "\n");
  auto r = resolve_credentials({}, env());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::invalid_argument);
  const std::string m = message_without_secrets(r);
  EXPECT_NE(m.find("line 3"), std::string::npos) << m;
  EXPECT_NE(m.find("\"default\""), std::string::npos) << m;
  EXPECT_NE(m.find(home_file().string()), std::string::npos) << m;

  write(home_file(), "[default\naws_access_key_id = A\naws_secret_access_key = S\n");
  auto u = resolve_credentials({}, env());
  ASSERT_FALSE(u);
  EXPECT_EQ(u.code(), transport_errc::invalid_argument);
  EXPECT_NE(u.error().message.find("line 1"), std::string::npos) << u.error().message;
}

TEST_F(Credentials, DirectoryIsInvalid) {
  env_["AWS_SHARED_CREDENTIALS_FILE"] = dir_.string();  // a directory
  auto d = resolve_credentials({}, env());
  ASSERT_FALSE(d);
  EXPECT_EQ(d.code(), transport_errc::invalid_argument);
  EXPECT_NE(d.error().message.find("\"default\""), std::string::npos) << d.error().message;
}

TEST_F(Credentials, ModeZeroFileIsInvalid) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a mode-000 file";
  write(home_file(), kTwoProfiles);
  ::chmod(home_file().c_str(), 0);
  auto r = resolve_credentials({}, env());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), transport_errc::invalid_argument);
  message_without_secrets(r);
}

TEST(CredentialsEnv, ProcessEnvironment) {
  const std::string name = "BQ_SQS_CRED_TEST_" + std::to_string(::getpid());
  EXPECT_FALSE(process_env(name));
  ::setenv(name.c_str(), "value", 1);
  EXPECT_EQ(process_env(name), std::optional<std::string>("value"));
  ::setenv(name.c_str(), "", 1);
  EXPECT_EQ(process_env(name), std::optional<std::string>(""));
  ::unsetenv(name.c_str());
}

}  // namespace
