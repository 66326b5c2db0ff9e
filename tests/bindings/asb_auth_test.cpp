// The Azure Service Bus credentials helpers (babelqueue::asb): the SAS token against the
// Python azure-servicebus generator, and the connection-string parser.
#include <babelqueue/asb/connection_string.hpp>
#include <babelqueue/asb/sas_token.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <string_view>

namespace asb = babelqueue::asb;
using asb::auth_errc;

namespace {

std::chrono::system_clock::time_point at(std::int64_t seconds) {
  return std::chrono::system_clock::time_point{std::chrono::seconds(seconds)};
}

struct sas_case {
  const char* uri;
  const char* key_name;
  const char* key;
  std::int64_t expiry;
  const char* token;
};

// Expected tokens produced once with the real Python generator, azure-servicebus 7.15.0
// (PyPI), on CPython 3.11:
//   python3 -m venv /tmp/asb-venv && /tmp/asb-venv/bin/pip install azure-servicebus==7.15.0
//   from azure.servicebus._pyamqp.utils import generate_sas_token   # what _base_handler.py
//   generate_sas_token(uri, key_name, key, expiry)                  # _generate_sas_token calls
// (the C++ strings below are the same text, with \u00e9 / \u00fc spelled as UTF-8 escapes).
// This test needs no Python.
constexpr sas_case k_python_tokens[] = {
    {"sb://contoso.servicebus.windows.net/orders", "RootManageSharedAccessKey", "SAS_KEY_VALUE",
     1749136327,
     "SharedAccessSignature sr=sb%3A%2F%2Fcontoso.servicebus.windows.net%2Forders"
     "&sig=gz2kYelTxkRaTmxK2fUb2eKzGwZ93UY9XqqdQbGpXnY%3D&se=1749136327"
     "&skn=RootManageSharedAccessKey"},
    {"sb://contoso.servicebus.windows.net/", "send-only_policy.1",
     "2zR8LtjTq4JrXbyYv0mKp6WcN1sHdF9eA3uQ7oIxGkM=", 2000000000,
     "SharedAccessSignature sr=sb%3A%2F%2Fcontoso.servicebus.windows.net%2F"
     "&sig=rxa8kYB4aRXpSsALDkhw45bYZlok47q3%2BhiAZ9%2B%2FAyA%3D&se=2000000000"
     "&skn=send-only_policy.1"},
    // Space -> '+', `~` kept, `!*()'` and UTF-8 percent-encoded in upper case; a non-ASCII key.
    {"sb://ns.servicebus.windows.net/my queue/~a!*()'\xc3\xa9", "Listen", "k3y+/=\xc3\xbc", 1,
     "SharedAccessSignature sr=sb%3A%2F%2Fns.servicebus.windows.net%2Fmy+queue%2F~a%21%2A%28%29%27"
     "%C3%A9&sig=zuL7aXkQENnM0wHZtxulC1EdO7GyVOqekGxID0UYb20%3D&se=1&skn=Listen"},
    {"amqps://localhost:5671/q?x=1&y=2#f", "RootManageSharedAccessKey", "a", 4102444800,
     "SharedAccessSignature sr=amqps%3A%2F%2Flocalhost%3A5671%2Fq%3Fx%3D1%26y%3D2%23f"
     "&sig=my35UNw74JGGz9XsRXQ%2FQCgpWB4yaIs4ASldi5eQoYY%3D&se=4102444800"
     "&skn=RootManageSharedAccessKey"},
};

}  // namespace

TEST(AsbSasToken, MatchesThePythonAzureServiceBusGenerator) {
  for (const auto& c : k_python_tokens) {
    auto token = asb::make_sas_token(c.uri, c.key_name, c.key, at(c.expiry));
    ASSERT_TRUE(token) << token.error().message;
    EXPECT_EQ(*token, c.token) << c.uri;
  }
}

TEST(AsbSasToken, KeyNameIsPercentEncodedOnceUnlikePython) {
  // Python (same version and call as above) writes
  //   SharedAccessSignature sr=sb%3A%2F%2Fns.servicebus.windows.net%2Fq
  //   &sig=IRK0buA%2B3QNsL8wsbYZU%2FcB%2FS03inXJAiDVC6Y%2FlGLY%3D&se=1749136327
  //   &skn=my%2Bpolicy%252B%2525
  // for the key name "my policy+%": it quote_plus()es the name and then urlencode()s it
  // again. The service URL-decodes once, so that names the policy "my+policy%2B%25"; this
  // SDK encodes once, as .NET does. sr, sig and se are the same.
  auto token =
      asb::make_sas_token("sb://ns.servicebus.windows.net/q", "my policy+%", "key", at(1749136327));
  ASSERT_TRUE(token);
  EXPECT_EQ(*token,
            "SharedAccessSignature sr=sb%3A%2F%2Fns.servicebus.windows.net%2Fq"
            "&sig=IRK0buA%2B3QNsL8wsbYZU%2FcB%2FS03inXJAiDVC6Y%2FlGLY%3D&se=1749136327"
            "&skn=my+policy%2B%25");
}

TEST(AsbSasToken, ExpiryIsTruncatedToWholeSeconds) {
  const auto base = at(1749136327);
  auto a = asb::make_sas_token("sb://h/q", "p", "k", base);
  auto b = asb::make_sas_token("sb://h/q", "p", "k", base + std::chrono::milliseconds(999));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  EXPECT_NE(a->find("&se=1749136327&"), std::string::npos);
  EXPECT_EQ(a->rfind(asb::sas_token_prefix, 0), 0U);
}

TEST(AsbSasToken, RefusesUnusableArguments) {
  const auto expiry = at(1749136327);
  for (const auto& r :
       {asb::make_sas_token("", "p", "k", expiry), asb::make_sas_token("sb://h/q", "", "k", expiry),
        asb::make_sas_token("sb://h/q", "p", "", expiry),
        asb::make_sas_token("sb://h/q", "p", "k", at(-1))}) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.code(), auth_errc::invalid_argument);
    EXPECT_EQ(r.code(), babelqueue::condition::invalid_argument);
    EXPECT_EQ(r.error().reason(), "invalid_argument");
  }
  EXPECT_TRUE(asb::make_sas_token("sb://h/q", "p", "k", at(0)));
}

TEST(AsbConnectionString, ParsesAKeyConnectionString) {
  auto cs = asb::parse_connection_string(
      "Endpoint=sb://contoso.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
      "SharedAccessKey=2zR8LtjTq4JrXbyYv0mKp6WcN1sHdF9eA3uQ7oIxGkM=;EntityPath=orders");
  ASSERT_TRUE(cs) << cs.error().message;
  EXPECT_EQ(cs->endpoint, "sb://contoso.servicebus.windows.net");
  EXPECT_EQ(cs->host, "contoso.servicebus.windows.net");
  EXPECT_FALSE(cs->port);
  EXPECT_EQ(cs->shared_access_key_name, "RootManageSharedAccessKey");
  EXPECT_EQ(cs->shared_access_key, "2zR8LtjTq4JrXbyYv0mKp6WcN1sHdF9eA3uQ7oIxGkM=")
      << "split at the first '=' only";
  EXPECT_FALSE(cs->shared_access_signature);
  EXPECT_EQ(cs->entity_path, "orders");
  EXPECT_FALSE(cs->use_development_emulator);
}

TEST(AsbConnectionString, ParsesTheEmulatorAndSignatureForms) {
  auto emulator = asb::parse_connection_string(
      "Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;"
      "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;");
  ASSERT_TRUE(emulator) << emulator.error().message;
  EXPECT_TRUE(emulator->use_development_emulator);
  EXPECT_EQ(emulator->host, "localhost");
  EXPECT_FALSE(emulator->entity_path);

  const std::string token =
      "SharedAccessSignature sr=sb%3A%2F%2Fns.servicebus.windows.net%2Fq&sig=abc%3D&se=1&skn=p";
  auto sas = asb::parse_connection_string(
      "Endpoint=amqps://ns.servicebus.windows.net:5671;"
      "SharedAccessSignature=" +
      token);
  ASSERT_TRUE(sas) << sas.error().message;
  EXPECT_EQ(sas->shared_access_signature, token);
  EXPECT_EQ(sas->port, 5671);
  EXPECT_FALSE(sas->shared_access_key);
  EXPECT_FALSE(sas->shared_access_key_name);
}

TEST(AsbConnectionString, KeysAreCaseInsensitiveAndWhiteSpaceIsTrimmed) {
  auto cs = asb::parse_connection_string(
      "  endpoint = sb://[::1]:5672/ ;;  sharedaccesskeyname=p ; SHAREDACCESSKEY= k== ;"
      "usedevelopmentemulator=FALSE ; ");
  ASSERT_TRUE(cs) << cs.error().message;
  EXPECT_EQ(cs->endpoint, "sb://[::1]:5672");
  EXPECT_EQ(cs->host, "::1");
  EXPECT_EQ(cs->port, 5672);
  EXPECT_EQ(cs->shared_access_key_name, "p");
  EXPECT_EQ(cs->shared_access_key, "k==");
  EXPECT_FALSE(cs->use_development_emulator);
}

TEST(AsbConnectionString, TypedErrorsNameTheKey) {
  struct bad {
    const char* text;
    auth_errc code;
    const char* path;
  };
  const std::string creds = ";SharedAccessKeyName=p;SharedAccessKey=k";
  const bad cases[] = {
      {"", auth_errc::malformed, ""},
      {" ; ", auth_errc::malformed, ""},
      {"Endpoint", auth_errc::malformed, ""},
      {"Endpoint=sb://h;=x", auth_errc::malformed, ""},
      {"Endpoint=sb://h;SharedAccessKeyName=p;SharedAccessKey=k;HostName=h", auth_errc::unknown_key,
       "HostName"},
      {"Endpoint=sb://h;endpoint=sb://g;SharedAccessKeyName=p;SharedAccessKey=k",
       auth_errc::duplicate_key, "Endpoint"},
      {"Endpoint=sb://h;SharedAccessKeyName=p;SharedAccessKey=k;EntityPath=",
       auth_errc::invalid_value, "EntityPath"},
      {"SharedAccessKeyName=p;SharedAccessKey=k", auth_errc::missing_key, "Endpoint"},
      {"Endpoint=sb://h;SharedAccessKeyName=p", auth_errc::missing_key, "SharedAccessKey"},
      {"Endpoint=sb://h;SharedAccessKey=k", auth_errc::missing_key, "SharedAccessKeyName"},
      {"Endpoint=sb://h;EntityPath=q", auth_errc::missing_key, "SharedAccessKey"},
      {"Endpoint=sb://h;SharedAccessKey=k;SharedAccessSignature=SharedAccessSignature sr=x",
       auth_errc::conflicting_keys, "SharedAccessKey"},
      {"Endpoint=sb://h;SharedAccessKeyName=p;SharedAccessSignature=SharedAccessSignature sr=x",
       auth_errc::conflicting_keys, "SharedAccessKeyName"},
      {"Endpoint=sb://h;SharedAccessKeyName=p;SharedAccessKey=k;UseDevelopmentEmulator=yes",
       auth_errc::invalid_value, "UseDevelopmentEmulator"},
  };
  for (const auto& c : cases) {
    auto r = asb::parse_connection_string(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.code(), c.code) << c.text << ": " << r.error().message;
    EXPECT_EQ(r.error().path, c.path) << c.text;
    EXPECT_EQ(r.code(), babelqueue::condition::invalid_argument) << c.text;
  }
  for (const char* endpoint :
       {"contoso.servicebus.windows.net", "://h", "sb://", "sb:///", "sb://h/orders", "sb://h?x=1",
        "sb://u:p@h", "sb://h:0", "sb://h:65536", "sb://h:", "sb://h:+1", "sb://[::1",
        "sb://[::1]x", "s b://h", "sb://h h"}) {
    auto r = asb::parse_connection_string("Endpoint=" + std::string(endpoint) + creds);
    ASSERT_FALSE(r) << endpoint;
    EXPECT_EQ(r.code(), auth_errc::invalid_value) << endpoint;
    EXPECT_EQ(r.error().path, "Endpoint") << endpoint;
  }
  EXPECT_EQ(asb::reason(auth_errc::duplicate_key), "duplicate_key");
}

TEST(AsbConnectionString, ErrorsNeverCarryValues) {
  const std::string secret = "S3cr3tK3yValue";
  for (const std::string& text :
       {"Endpoint=sb://h;SharedAccessKey=" + secret,  // missing name
        "Endpoint=sb://h;SharedAccessKeyName=p;SharedAccessKey=" + secret + ";" + secret,
        "Endpoint=sb://h;SharedAccessKeyName=p;SharedAccessKey=" + secret +
            ";SharedAccessSignature=" + secret,
        "Endpoint=sb://" + secret + "/x;SharedAccessKeyName=p;SharedAccessKey=k"}) {
    auto r = asb::parse_connection_string(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().message.find(secret), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().path.find(secret), std::string::npos) << r.error().path;
  }
}
