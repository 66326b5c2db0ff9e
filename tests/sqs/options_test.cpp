// sqs:// without a server: URL → options, validation, the SQS error mapping, the JSON text
// written for requests and the characters SQS accepts, the ReceiveMessage parser on broken
// answers.
#include "sqs/api.hpp"
#include "sqs/json_text.hpp"

#include <babelqueue/sqs/sqs_transport.hpp>

#include <gtest/gtest.h>

#include <cstdlib>

using babelqueue::transport_errc;
namespace sd = babelqueue::sqs::detail;

namespace {

babelqueue::result<babelqueue::sqs::options> parse(const std::string& url) {
  auto u = babelqueue::broker_url::parse(url);
  if (!u) return babelqueue::fail(u.error());
  return babelqueue::sqs::options_from_url(*u);
}

}  // namespace

TEST(SqsOptions, EveryKeyMapsOntoItsField) {
  auto o = parse(
      "sqs://eu-west-1?endpoint=http://127.0.0.1:9324&prefix=http://127.0.0.1:9324/000000000000"
      "&fifo=true&group_id=g&content_based_dedup=true&wait_time=5&visibility=30&batch=4"
      "&dlq_suffix=_dead&dlq=all-dead&create_queues=true&ack_batch=true&max_message_bytes=1048576"
      "&connect_timeout=2s&operation_timeout=3s&retries=0&profile=ci&tls_verify=false");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->region, "eu-west-1");
  EXPECT_EQ(o->endpoint, "http://127.0.0.1:9324");
  EXPECT_EQ(o->prefix, "http://127.0.0.1:9324/000000000000");
  EXPECT_TRUE(o->fifo);
  EXPECT_EQ(o->group_id, "g");
  EXPECT_TRUE(o->content_based_dedup);
  EXPECT_EQ(o->wait_time, 5);
  EXPECT_EQ(o->visibility, 30);
  EXPECT_EQ(o->batch, 4);
  EXPECT_EQ(o->dlq_suffix, "_dead");
  EXPECT_EQ(o->dlq, "all-dead");
  EXPECT_TRUE(o->create_queues);
  EXPECT_TRUE(o->ack_batch);
  EXPECT_EQ(o->max_message_bytes, 1048576);
  EXPECT_EQ(o->connect_timeout, std::chrono::seconds(2));
  EXPECT_EQ(o->operation_timeout, std::chrono::seconds(3));
  EXPECT_EQ(o->retries, 0);
  EXPECT_EQ(o->profile, "ci");
  EXPECT_FALSE(o->tls_verify);
}

TEST(SqsOptions, DefaultsAreTheDocumentedOnes) {
  auto o = parse("sqs://us-east-1");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->endpoint, "");
  EXPECT_EQ(o->wait_time, 20);
  EXPECT_EQ(o->visibility, -1);
  EXPECT_EQ(o->batch, 10);
  EXPECT_EQ(o->dlq_suffix, "-dlq");
  EXPECT_EQ(o->max_message_bytes, 262144);
  EXPECT_FALSE(o->create_queues);
}

TEST(SqsOptions, BadValuesAreInvalidArgumentsNamingTheKey) {
  for (const std::string q :
       {"batch=0", "batch=11", "wait_time=21", "visibility=43201", "retries=11",
        "max_message_bytes=1048577", "endpoint=ftp://x", "prefix=nope", "dlq=orders.dlq",
        "dlq_suffix=.dlq", "nonsense=1", "operation_timeout=0s"}) {
    auto o = parse("sqs://us-east-1?" + q);
    ASSERT_FALSE(o) << q;
    EXPECT_EQ(o.code(), babelqueue::condition::invalid_argument) << q;
    const std::string key = q.substr(0, q.find('='));
    EXPECT_NE(o.error().message.find(key), std::string::npos) << q << ": " << o.error().message;
  }
  EXPECT_FALSE(parse("sqs://US_EAST?"));
  EXPECT_FALSE(parse("sqs://us-east-1:9324"));
  auto creds = parse("sqs://AKID:secret@us-east-1");
  ASSERT_FALSE(creds);
  EXPECT_EQ(creds.error().message.find("secret"), std::string::npos) << "never echoes a secret";
}

TEST(SqsOptions, AnEmptyRegionComesFromTheEnvironment) {
  ::setenv("AWS_REGION", "ap-south-1", 1);
  auto o = parse("sqs://?endpoint=http://127.0.0.1:1");
  ::unsetenv("AWS_REGION");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->region, "ap-south-1");
  ::unsetenv("AWS_DEFAULT_REGION");
  EXPECT_FALSE(parse("sqs://?endpoint=http://127.0.0.1:1"));
}

TEST(SqsErrors, CodesMapOntoTransportErrors) {
  EXPECT_EQ(sd::errc_of_sqs_error(400, "QueueDoesNotExist"), transport_errc::not_found);
  EXPECT_EQ(sd::errc_of_sqs_error(400, "AWS.SimpleQueueService.NonExistentQueue"),
            transport_errc::not_found);
  EXPECT_EQ(sd::errc_of_sqs_error(403, "SignatureDoesNotMatch"), transport_errc::permission);
  EXPECT_EQ(sd::errc_of_sqs_error(400, "InvalidClientTokenId"), transport_errc::permission);
  EXPECT_EQ(sd::errc_of_sqs_error(400, "ThrottlingException"), transport_errc::unavailable);
  EXPECT_EQ(sd::errc_of_sqs_error(500, "InternalError"), transport_errc::unavailable);
  EXPECT_EQ(sd::errc_of_sqs_error(503, ""), transport_errc::unavailable);
  EXPECT_EQ(sd::errc_of_sqs_error(400, "InvalidAttributeName"), transport_errc::invalid_argument);
  EXPECT_EQ(sd::errc_of_sqs_error(400, "MissingParameter"), transport_errc::invalid_argument);
  EXPECT_EQ(sd::errc_of_sqs_error(400, "BatchRequestTooLong"), transport_errc::too_large);
  EXPECT_EQ(sd::errc_of_sqs_error(400, "QueueNameExists"), transport_errc::refused);
}

TEST(SqsErrors, TheCodeComesFromTypeOrTheQueryErrorHeader) {
  using babelqueue::json;
  EXPECT_EQ(sd::sqs_error_code(json{{"__type", "com.amazonaws.sqs#QueueDoesNotExist"}}, ""),
            "QueueDoesNotExist");
  EXPECT_EQ(sd::sqs_error_code(json{{"__type", "MissingParameter"}}, ""), "MissingParameter");
  EXPECT_EQ(sd::sqs_error_code(json{{"__type", "Sender"}},
                               "AWS.SimpleQueueService.NonExistentQueue;Sender"),
            "AWS.SimpleQueueService.NonExistentQueue");
  EXPECT_EQ(sd::sqs_error_code(json::object(), "com.amazonaws.sqs#QueueDoesNotExist"),
            "QueueDoesNotExist")
      << "ElasticMQ 1.7's header form";
  EXPECT_EQ(sd::sqs_error_code(json::array(), ""), "");
}

TEST(SqsJsonText, StringsAreEscapedExactlyOnce) {
  std::string out;
  sd::append_json_string(out, std::string("a\"b\\c\n\t\x01\x7f h\xc3\xa9", 13));
  EXPECT_EQ(out, std::string("\"a\\\"b\\\\c\\n\\t\\u0001\x7f h\xc3\xa9\""));
  auto back = babelqueue::json::parse(out);
  EXPECT_EQ(back.get<std::string>(), std::string("a\"b\\c\n\t\x01\x7f h\xc3\xa9", 13));
}

TEST(SqsJsonText, OnlyCharactersSqsAcceptsPass) {
  EXPECT_FALSE(sd::sqs_text_problem("plain {\"json\": 1}\t\r\n"));
  EXPECT_FALSE(sd::sqs_text_problem("h\xc3\xa9 \xf0\x9f\x98\x80 \xee\x80\x80"));
  EXPECT_TRUE(sd::sqs_text_problem(std::string("\0", 1)));
  EXPECT_TRUE(sd::sqs_text_problem("\x1f"));
  EXPECT_TRUE(sd::sqs_text_problem("\xff"));
  EXPECT_TRUE(sd::sqs_text_problem("\xc3"));              // truncated
  EXPECT_TRUE(sd::sqs_text_problem("\xc0\xaf"));          // overlong
  EXPECT_TRUE(sd::sqs_text_problem("\xed\xa0\x80"));      // a surrogate
  EXPECT_TRUE(sd::sqs_text_problem("\xef\xbf\xbe"));      // U+FFFE
  EXPECT_TRUE(sd::sqs_text_problem("\xf4\x90\x80\x80"));  // > U+10FFFF
}

TEST(SqsReceive, BrokenAnswersAreTypedErrorsNeverExceptions) {
  using babelqueue::json;
  EXPECT_TRUE(sd::parse_receive_response(json::object())->empty());
  EXPECT_TRUE(sd::parse_receive_response(json{{"Messages", json::array()}})->empty());
  EXPECT_TRUE(sd::parse_receive_response(json{{"Messages", nullptr}})->empty());
  EXPECT_FALSE(sd::parse_receive_response(json{{"Messages", 3}}));
  EXPECT_FALSE(sd::parse_receive_response(json{{"Messages", json::array({json{{"Body", "x"}}})}}));
  auto ok = sd::parse_receive_response(
      json::parse(R"({"Messages":[{"MessageId":"m","ReceiptHandle":"r","Body":"b",
      "Attributes":{"ApproximateReceiveCount":"3"},
      "MessageAttributes":{"k":{"DataType":"String","StringValue":"v"},"bin":{"DataType":"Binary","BinaryValue":"AA=="},
                           "bad":7}}]})"));
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ((*ok)[0].receive_count, "3");
  ASSERT_EQ((*ok)[0].attributes.size(), 1u) << "binary and malformed attributes skipped";
  EXPECT_EQ((*ok)[0].attributes[0].name, "k");
}

TEST(SqsMd5, MatchesSqsMd5OfBody) {
  EXPECT_EQ(sd::md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(sd::md5_hex("hello {\"x\":1}"), "81f77912380b91caeb8bb651f38939c2");
}
