// make() / continue_trace(): producer rules and the exact frame layout.
#include <babelqueue/codec.hpp>
#include <babelqueue/uuid.hpp>

#include <gtest/gtest.h>

#include <regex>

using namespace babelqueue;

TEST(Make, WritesTheCanonicalFrame) {
  auto env = make("urn:babel:orders:created", {{"order_id", 1042}, {"amount", 99.9}}, {"orders", ""});
  ASSERT_TRUE(env);
  std::string text = encode(*env).value();
  std::regex shape(
      R"(\{"job":"urn:babel:orders:created","trace_id":"[0-9a-f-]{36}","data":\{"order_id":1042,"amount":99\.9\},)"
      R"("meta":\{"id":"[0-9a-f-]{36}","queue":"orders","lang":"cpp","schema_version":1,"created_at":\d{13}\},"attempts":0\})");
  EXPECT_TRUE(std::regex_match(text, shape)) << text;
  EXPECT_TRUE(is_uuid(env->id()));
  EXPECT_TRUE(is_uuid(env->trace_id()));
  EXPECT_NE(env->id(), env->trace_id());
  EXPECT_EQ(env->lang(), "cpp");
  EXPECT_EQ(env->attempts(), 0);
  EXPECT_TRUE(accepts(text));
  EXPECT_EQ(decode(text).value(), decode(text).value());
}

TEST(Make, TrimsUrnAndTraceAndDefaultsQueue) {
  auto env = make(" \t\v urn:babel:orders:created\r\n\f", json::object(), {"", "  trace-123 \t"});
  ASSERT_TRUE(env);
  EXPECT_EQ(env->urn(), "urn:babel:orders:created");
  EXPECT_EQ(env->trace_id(), "trace-123");
  EXPECT_EQ(env->queue(), "default");
}

// D3a: the producer trims ASCII white space only; Unicode spaces are part of the value.
TEST(Make, TrimsOnlyAsciiWhiteSpace) {
  auto env = make("\u00a0urn:babel:orders:created\u3000 ", json::object(), {"", " \u2003t\u2003 "});
  ASSERT_TRUE(env);
  EXPECT_EQ(env->urn(), "\u00a0urn:babel:orders:created\u3000");
  EXPECT_EQ(env->trace_id(), "\u2003t\u2003");
  // What make() wrote is what a consumer routes (the decoder does not trim either).
  auto back = decode(encode(*env).value()).value();
  EXPECT_EQ(back.urn(), env->urn());
  EXPECT_EQ(back.trace_id(), env->trace_id());
  // A URN of only U+00A0 is not blank: made, and accepted by the decoder.
  auto nbsp = make("\xC2\xA0", json::object());
  ASSERT_TRUE(nbsp) << nbsp.error().message;
  EXPECT_EQ(nbsp->urn(), "\xC2\xA0");
  EXPECT_TRUE(accepts(encode(*nbsp).value()));
  // A trace of only U+2003 is not blank: kept, not replaced by a fresh UUID.
  auto em = make("urn:x", json::object(), {"", "\xE2\x80\x83"});
  ASSERT_TRUE(em);
  EXPECT_EQ(em->trace_id(), "\xE2\x80\x83");
}

TEST(Make, BlankTraceMintsAFreshOne) {
  for (const char* t : {"", " \n ", "\t\v\f\r"}) {
    auto env = make("urn:x", json::object(), {"", t});
    ASSERT_TRUE(env);
    EXPECT_TRUE(is_uuid(env->trace_id())) << env->trace_id();
  }
}

TEST(Make, BlankUrnIsATypedError) {
  for (const char* u : {"", "   ", "\t\n", "\v\f\r "}) {
    auto env = make(u, json::object());
    ASSERT_FALSE(env);
    EXPECT_EQ(env.error().code, errc::empty_urn) << u;
  }
  EXPECT_THROW(make("", json::object()).value(), babelqueue::error);
}

TEST(Make, EscapesUserStringsInTheFrame) {
  auto env = make("urn:\"q\"", json::object(), {"q\\1", "t\n"});
  ASSERT_TRUE(env);
  std::string text = encode(*env).value();
  auto back = decode(text).value();
  EXPECT_EQ(back.urn(), "urn:\"q\"");
  EXPECT_EQ(back.queue(), "q\\1");
  EXPECT_EQ(env->queue(), "q\\1");
  EXPECT_EQ(env->urn(), "urn:\"q\"");
}

TEST(Make, ContinueTraceKeepsTraceAndMintsNewId) {
  auto inbound = make("urn:babel:orders:created", json::object(), {"orders", "trace-abc"}).value();
  auto next = continue_trace(inbound, "urn:babel:billing:invoice.requested", {{"order", 1}}, {"billing", "ignored"});
  ASSERT_TRUE(next);
  EXPECT_EQ(next->trace_id(), "trace-abc");
  EXPECT_NE(next->id(), inbound.id());
  EXPECT_EQ(next->queue(), "billing");
}

TEST(Make, ProducedEnvelopeRefusesUrnMember) {
  auto env = make("urn:x", json::object()).value();
  ASSERT_TRUE(env.set_extension("urn", "urn:y"));
  EXPECT_EQ(encode(env).code(), errc::forbidden_key);
}

TEST(Errors, WhatIsReasonAndMessage) {
  try {
    (void)make("", json::object()).value();
    FAIL() << "no throw";
  } catch (const babelqueue::error& e) {
    EXPECT_STREQ(e.what(), "empty_urn: a message needs a non-blank URN");
    EXPECT_EQ(e.code(), make_error_code(errc::empty_urn));
    EXPECT_EQ(e.reason(), "empty_urn");
  }
}

TEST(Errors, RvalueValueDoesNotDangle) {
  auto f = [] { return result<std::vector<int>>(std::vector<int>{1, 2, 3}); };
  int sum = 0;
  for (int x : f().value()) sum += x;
  EXPECT_EQ(sum, 6);
}
