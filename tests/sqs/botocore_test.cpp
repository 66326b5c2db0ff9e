// The SigV4 signer against botocore's SigV4Auth for fixed SQS (AWS JSON 1.0) requests:
// tests/sqs/botocore_sign.py signs each case with botocore (clock frozen), and sign() must
// add the same X-Amz-Date, X-Amz-Security-Token and Authorization.
//
// Both sides sign the same header set: botocore signs the request's Content-Type and
// X-Amz-Target, derives `host` from the URL (port kept unless it is the scheme's default),
// and adds X-Amz-Date (+ X-Amz-Security-Token); the C++ side passes Host, Content-Type and
// X-Amz-Target and sign() adds the rest.
//
// Needs the Python peer (BABELQUEUE_PEER_PYTHON, or scripts/setup-python-peer.sh) with
// botocore (its `sqs` extra); without it the tests skip, except under CI /
// BABELQUEUE_REQUIRE_SERVICES=1, where they fail.
#include "sqs/aws_examples.hpp"
#include "sqs/sigv4.hpp"
#include "support/files.hpp"
#include "support/services.hpp"

#include <babelqueue/json.hpp>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace {

using babelqueue::json;
using babelqueue::sqs::detail::amz_date;
using babelqueue::sqs::detail::canonical_request;
using babelqueue::sqs::detail::credentials;
using babelqueue::sqs::detail::http_header;
using babelqueue::sqs::detail::sign;
using babelqueue::sqs::detail::signing_input;
using babelqueue::sqs::detail::signing_scope;
using babelqueue::sqs::detail::string_to_sign;

constexpr const char* kAccessKey = bqtest::aws_examples::access_key;
constexpr const char* kSecretKey = bqtest::aws_examples::secret_key;
constexpr const char* kStsToken = bqtest::aws_examples::session_token;

struct sqs_case {
  std::string name;
  std::string url;   ///< what botocore is given
  std::string host;  ///< what the C++ side sends as Host for that URL
  std::string target;
  std::string content_type = "application/x-amz-json-1.0";
  std::string body;
  credentials creds;
  std::string region = "us-east-1";
  std::chrono::system_clock::time_point time;
};

std::chrono::system_clock::time_point at(int y, unsigned mo, unsigned d, int h, int mi, int s) {
  using namespace std::chrono;
  return sys_days{year{y} / month{mo} / day{d}} + hours{h} + minutes{mi} + seconds{s};
}

const std::string kEnvelope =
    R"({"job":"urn:babel:orders:created","data":{"id":42,"name":"caf\u00e9"},)"
    R"("trace_id":"t-1","attempts":0,"meta":{"schema_version":1,"lang":"cpp"}})";

std::vector<sqs_case> cases() {
  std::vector<sqs_case> v;
  v.push_back(
      {"EmulatorSendMessage",
       "http://127.0.0.1:9324/",
       "127.0.0.1:9324",
       "AmazonSQS.SendMessage",
       "application/x-amz-json-1.0",
       json{{"QueueUrl", "http://127.0.0.1:9324/000000000000/orders"},
            {"MessageBody", kEnvelope},
            {"MessageAttributes",
             {{"bq-job", {{"DataType", "String"}, {"StringValue", "urn:babel:orders:created"}}},
              {"bq-schema-version", {{"DataType", "Number"}, {"StringValue", "1"}}}}}}
           .dump(),
       {kAccessKey, kSecretKey, ""},
       "us-east-1",
       at(2015, 8, 30, 12, 36, 0)});
  // Real endpoint, session credentials, a body with non-ASCII UTF-8 (and U+2028) bytes.
  v.push_back({"AwsSendMessageWithSessionToken",
               "https://sqs.us-east-1.amazonaws.com/",
               "sqs.us-east-1.amazonaws.com",
               "AmazonSQS.SendMessage",
               "application/x-amz-json-1.0",
               "{\"QueueUrl\":\"https://sqs.us-east-1.amazonaws.com/123456789012/orders\","
               "\"MessageBody\":\"caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xE2\x80\xA8 end\"}",
               {kAccessKey, kSecretKey, kStsToken},
               "us-east-1",
               at(2026, 1, 2, 3, 4, 5)});
  v.push_back({"AwsReceiveMessage",
               "https://sqs.us-east-1.amazonaws.com/",
               "sqs.us-east-1.amazonaws.com",
               "AmazonSQS.ReceiveMessage",
               "application/x-amz-json-1.0",
               R"({"QueueUrl":"https://sqs.us-east-1.amazonaws.com/123456789012/orders",)"
               R"("MaxNumberOfMessages":1,"WaitTimeSeconds":20,"MessageAttributeNames":["All"],)"
               R"("AttributeNames":["ApproximateReceiveCount"],)"
               R"("MessageSystemAttributeNames":["ApproximateReceiveCount"]})",
               {kAccessKey, kSecretKey, ""},
               "us-east-1",
               at(2024, 2, 29, 23, 59, 59)});
  // fauxqs' port, a short session token, an operation with a small body.
  v.push_back({"EmulatorChangeVisibilityWithToken",
               "http://127.0.0.1:4566/",
               "127.0.0.1:4566",
               "AmazonSQS.ChangeMessageVisibility",
               "application/x-amz-json-1.0",
               R"({"QueueUrl":"http://sqs.us-east-1.localhost:4566/000000000000/orders",)"
               R"("ReceiptHandle":"rh+/=1","VisibilityTimeout":0})",
               {"test", "test", "session-token-value"},
               "us-east-1",
               at(2025, 6, 5, 14, 12, 7)});
  // The scheme's default port is not part of Host.
  v.push_back({"DefaultHttpPortIsNotInHost",
               "http://localhost:80/",
               "localhost",
               "AmazonSQS.DeleteMessage",
               "application/x-amz-json-1.0",
               R"({"QueueUrl":"http://localhost/000000000000/orders","ReceiptHandle":"abc"})",
               {kAccessKey, kSecretKey, ""},
               "us-east-1",
               at(2015, 8, 30, 12, 36, 0)});
  // Another region and an HTTPS endpoint on a non-default port; an empty body.
  v.push_back({"OtherRegionNonDefaultHttpsPortEmptyBody",
               "https://localhost:8443/",
               "localhost:8443",
               "AmazonSQS.ListQueues",
               "application/x-amz-json-1.0",
               "",
               {kAccessKey, kSecretKey, kStsToken},
               "eu-west-1",
               at(2030, 12, 31, 0, 0, 1)});
  // Header values with extra blanks: both sides trim and collapse them.
  v.push_back({"HeaderWhitespace",
               "https://sqs.us-east-1.amazonaws.com/",
               "sqs.us-east-1.amazonaws.com",
               "  AmazonSQS.GetQueueUrl ",
               " application/x-amz-json-1.0  ",
               R"({"QueueName":"orders"})",
               {kAccessKey, kSecretKey, ""},
               "us-east-1",
               at(2015, 8, 30, 12, 36, 0)});
  return v;
}

// gtest prints a failing parameter; name it instead of dumping its bytes.
void PrintTo(const sqs_case& c, std::ostream* os) { *os << c.name; }

struct run_result {
  int status = -1;
  std::string out;
};

run_result run(const std::string& python, const json& spec) {
  using babelqueue::test::shell_quote;
  const std::string cmd =
      shell_quote(python) + " " +
      shell_quote(std::string(BABELQUEUE_SOURCE_DIR) + "/tests/sqs/botocore_sign.py") + " " +
      shell_quote(spec.dump()) + " 2>&1";
  run_result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  const int rc = ::pclose(p);
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return r;
}

class Botocore : public ::testing::TestWithParam<sqs_case> {
 protected:
  void SetUp() override { BQ_REQUIRE_PYTHON_PEER(python_); }
  std::string python_;
};

TEST_P(Botocore, SameSignature) {
  const sqs_case& c = GetParam();
  const json spec{{"method", "POST"},
                  {"url", c.url},
                  {"headers", json::array({json::array({"Content-Type", c.content_type}),
                                           json::array({"X-Amz-Target", c.target})})},
                  {"body", c.body},
                  {"access_key", c.creds.access_key_id},
                  {"secret_key", c.creds.secret_access_key},
                  {"token", c.creds.session_token},
                  {"region", c.region},
                  {"service", "sqs"},
                  {"time", amz_date(c.time)}};
  const run_result r = run(python_, spec);
  if (r.status == 3) {
    if (bqtest::services_required()) FAIL() << "the Python peer lacks botocore: " << r.out;
    GTEST_SKIP() << "the Python peer lacks botocore (pip install boto3): " << r.out;
  }
  ASSERT_EQ(r.status, 0) << r.out;
  const json boto = json::parse(r.out);

  signing_input in;
  in.method = "POST";
  in.path = "/";
  in.headers = {{"Host", c.host}, {"Content-Type", c.content_type}, {"X-Amz-Target", c.target}};
  in.body = c.body;
  const signing_scope scope{c.region, "sqs", c.time};
  const std::vector<http_header> added = sign(in, scope, c.creds);

  // Diagnostics first: the canonical request and string to sign botocore built, against ours
  // for the same headers (what sign() adds included).
  signing_input full = in;
  full.headers.emplace_back("X-Amz-Date", amz_date(c.time));
  if (!c.creds.session_token.empty()) {
    full.headers.emplace_back("X-Amz-Security-Token", c.creds.session_token);
  }
  const std::string creq = canonical_request(full);
  EXPECT_EQ(creq, boto.at("canonical_request").get<std::string>());
  EXPECT_EQ(string_to_sign(creq, scope), boto.at("string_to_sign").get<std::string>());

  std::vector<http_header> expected{{"X-Amz-Date", boto.at("X-Amz-Date").get<std::string>()}};
  if (!c.creds.session_token.empty()) {
    ASSERT_TRUE(boto.contains("X-Amz-Security-Token")) << r.out;
    expected.emplace_back("X-Amz-Security-Token",
                          boto.at("X-Amz-Security-Token").get<std::string>());
  } else {
    EXPECT_FALSE(boto.contains("X-Amz-Security-Token")) << r.out;
  }
  expected.emplace_back("Authorization", boto.at("Authorization").get<std::string>());
  EXPECT_EQ(added, expected) << "botocore " << boto.at("botocore_version").get<std::string>();
  RecordProperty("botocore_version", boto.at("botocore_version").get<std::string>());
}

INSTANTIATE_TEST_SUITE_P(SigV4, Botocore, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<sqs_case>& param_info) {
                           return param_info.param.name;
                         });

}  // namespace
