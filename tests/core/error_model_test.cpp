// The one error model: a category per component, stable reason names, portable conditions,
// is_transient(), native errors, and the one exception type.
#include <babelqueue/codec.hpp>
#include <babelqueue/error.hpp>
#include <babelqueue/result.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace babelqueue;

TEST(ErrorModel, EachComponentHasItsOwnCategory) {
  std::set<std::string> names{core_category().name(), runtime_category().name(),
                              transport_category().name(), condition_category().name()};
  EXPECT_EQ(names, (std::set<std::string>{"babelqueue.core", "babelqueue.runtime",
                                          "babelqueue.transport", "babelqueue"}));
  EXPECT_EQ(std::error_code(errc::invalid_argument).category(), core_category());
  EXPECT_EQ(std::error_code(runtime_errc::invalid_argument).category(), runtime_category());
  EXPECT_EQ(std::error_code(transport_errc::invalid_argument).category(), transport_category());
  // Same name, different codes: they are not equal as codes...
  EXPECT_NE(std::error_code(errc::invalid_argument), std::error_code(transport_errc::invalid_argument));
  // ...but the same portable condition.
  EXPECT_EQ(std::error_code(errc::invalid_argument), condition::invalid_argument);
  EXPECT_EQ(std::error_code(runtime_errc::unknown_scheme), condition::invalid_argument);
  EXPECT_EQ(std::error_code(transport_errc::invalid_argument), condition::invalid_argument);
}

TEST(ErrorModel, ReasonNamesAreStable) {
  EXPECT_EQ(reason(errc::malformed_json), "malformed_json");
  EXPECT_EQ(reason(errc::ok), "ok");
  EXPECT_EQ(reason(std::error_code(transport_errc::permission)), "permission");
  EXPECT_EQ(reason(std::error_code(runtime_errc::handler_failed)), "handler_failed");
  EXPECT_EQ(reason(std::error_code(runtime_errc::resource_exhausted)), "resource_exhausted");
  EXPECT_EQ(reason(std::make_error_code(std::errc::io_error)), "unknown");  // not ours
  EXPECT_EQ(std::error_code(transport_errc::too_large).message(), "too_large");
}

TEST(ErrorModel, ConditionsGroupD3RejectionsAndTransportKinds) {
  for (auto e : {errc::malformed_json, errc::missing_urn, errc::missing_meta,
                 errc::unsupported_schema_version, errc::invalid_data, errc::missing_trace_id,
                 errc::invalid_attempts}) {
    EXPECT_EQ(std::error_code(e), condition::rejected) << reason(e);
  }
  EXPECT_NE(std::error_code(errc::invalid_utf8), condition::rejected);
  EXPECT_EQ(std::error_code(transport_errc::timeout), condition::timeout);
  EXPECT_EQ(std::error_code(transport_errc::unavailable), condition::unavailable);
  EXPECT_EQ(std::error_code(transport_errc::not_found), condition::not_found);
  EXPECT_EQ(std::error_code(transport_errc::closed), condition::closed);
  EXPECT_NE(std::error_code(transport_errc::refused), condition::permission);
}

TEST(ErrorModel, TransientIsWhatARetryCanFix) {
  EXPECT_TRUE(is_transient(transport_errc::unavailable));
  EXPECT_TRUE(is_transient(transport_errc::timeout));
  EXPECT_TRUE(is_transient(runtime_errc::io));
  for (auto e : {transport_errc::refused, transport_errc::permission, transport_errc::not_found,
                 transport_errc::too_large, transport_errc::invalid_argument,
                 transport_errc::not_supported, transport_errc::closed}) {
    EXPECT_FALSE(is_transient(e)) << reason(std::error_code(e));
  }
  EXPECT_FALSE(is_transient(errc::malformed_json));
}

TEST(ErrorModel, ResultCarriesCodeMessageAndNative) {
  result<int> ok = 3;
  EXPECT_EQ(ok.code(), errc::ok);
  EXPECT_FALSE(ok.code());
  result<int> bad = fail(transport_errc::permission, "redis AUTH refused: WRONGPASS",
                         native_error{"redis", 0, "WRONGPASS invalid username-password pair"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), transport_errc::permission);
  EXPECT_EQ(bad.error().reason(), "permission");
  ASSERT_TRUE(bad.error().native);
  EXPECT_EQ(bad.error().native->source, "redis");
  try {
    (void)bad.value();
    FAIL() << "value() must throw";
  } catch (const error& e) {  // the one exception type, also a std::system_error
    EXPECT_STREQ(e.what(), "permission: redis AUTH refused: WRONGPASS");
    EXPECT_EQ(e.code(), transport_errc::permission);
    EXPECT_EQ(e.info().native->text, "WRONGPASS invalid username-password pair");
  }
  result<void> v;
  EXPECT_TRUE(v);
  EXPECT_EQ(v.code(), errc::ok);
}

TEST(ErrorModel, WhatNamesThePathWhenThereIsOne) {
  error e(error_info{errc::invalid_argument, "bad", "a[1].b"});
  EXPECT_STREQ(e.what(), "invalid_argument: bad (at a[1].b)");
}

TEST(ErrorModel, DecodeFailuresAreCoreCodes) {
  auto r = decode(std::string_view("{"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code().category(), core_category());
  EXPECT_EQ(r.code(), errc::malformed_json);
  EXPECT_EQ(r.code(), condition::rejected);
  EXPECT_EQ(check("{"), errc::malformed_json);
}
