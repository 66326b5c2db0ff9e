// The one error model: a category per component, stable reason names, portable conditions,
// is_transient(), native errors, and the one exception type. (The runtime and transport
// categories are tested with the runtime: tests/runtime/error_codes_test.cpp.)
#include <babelqueue/codec.hpp>
#include <babelqueue/error.hpp>
#include <babelqueue/result.hpp>

#include <gtest/gtest.h>

#include <string>

using namespace babelqueue;

namespace {

// A category of the kind a component (or a user) defines on error_category_base: is_transient()
// and the conditions must hold for it without core knowing it.
enum class user_errc : int { flaky = 1, slow = 2, broken_file = 3, bad_input = 4, other = 5 };
class user_category_impl final : public error_category_base {
 public:
  const char* name() const noexcept override { return "test.user"; }
  std::string_view reason(int value) const noexcept override {
    static constexpr std::string_view names[] = {"ok",          "flaky",     "slow",
                                                 "broken_file", "bad_input", "other"};
    return value >= 0 && value <= 5 ? names[value] : "unknown";
  }
  int condition_of(int value) const noexcept override {
    switch (static_cast<user_errc>(value)) {
      case user_errc::flaky:
        return static_cast<int>(condition::unavailable);
      case user_errc::slow:
        return static_cast<int>(condition::timeout);
      case user_errc::broken_file:
        return static_cast<int>(condition::io);
      case user_errc::bad_input:
        return static_cast<int>(condition::invalid_argument);
      case user_errc::other:
        return 0;
    }
    return 0;
  }
};
const user_category_impl user_category{};
std::error_code user_code(user_errc e) { return {static_cast<int>(e), user_category}; }

TEST(ErrorModel, CoreAndConditionCategoriesAreNamed) {
  EXPECT_STREQ(core_category().name(), "babelqueue.core");
  EXPECT_STREQ(condition_category().name(), "babelqueue");
  EXPECT_EQ(std::error_code(errc::invalid_argument).category(), core_category());
  EXPECT_EQ(std::error_code(errc::invalid_argument), condition::invalid_argument);
  EXPECT_EQ(std::error_code(errc::empty_urn), condition::invalid_argument);
}

TEST(ErrorModel, ReasonNamesAreStable) {
  EXPECT_EQ(reason(errc::malformed_json), "malformed_json");
  EXPECT_EQ(reason(errc::ok), "ok");
  EXPECT_EQ(reason(user_code(user_errc::flaky)), "flaky");
  EXPECT_EQ(reason(std::make_error_code(std::errc::io_error)), "unknown");  // not ours
  EXPECT_EQ(std::error_code(errc::forbidden_key).message(), "forbidden_key");
}

TEST(ErrorModel, ConditionsGroupD3Rejections) {
  for (auto e : {errc::malformed_json, errc::missing_urn, errc::missing_meta,
                 errc::unsupported_schema_version, errc::invalid_data, errc::missing_trace_id,
                 errc::invalid_attempts}) {
    EXPECT_EQ(std::error_code(e), condition::rejected) << reason(e);
  }
  EXPECT_NE(std::error_code(errc::invalid_utf8), condition::rejected);
}

TEST(ErrorModel, TransientIsDefinedOnThePortableConditionsOfAnyCategory) {
  EXPECT_TRUE(is_transient(user_code(user_errc::flaky)));        // condition::unavailable
  EXPECT_TRUE(is_transient(user_code(user_errc::slow)));         // condition::timeout
  EXPECT_TRUE(is_transient(user_code(user_errc::broken_file)));  // condition::io
  EXPECT_FALSE(is_transient(user_code(user_errc::bad_input)));
  EXPECT_FALSE(is_transient(user_code(user_errc::other)));
  EXPECT_EQ(user_code(user_errc::bad_input), condition::invalid_argument);
  EXPECT_FALSE(is_transient(errc::malformed_json));
  EXPECT_FALSE(is_transient(errc::invalid_argument));
  EXPECT_FALSE(is_transient(errc::ok));
  // A foreign category is never transient by accident (std::errc::timed_out is not ours).
  EXPECT_FALSE(is_transient(std::make_error_code(std::errc::timed_out)));
}

TEST(ErrorModel, ResultCarriesCodeMessageAndNative) {
  result<int> ok = 3;
  EXPECT_EQ(ok.code(), errc::ok);
  EXPECT_FALSE(ok.code());
  result<int> bad = fail(user_code(user_errc::other), "redis AUTH refused: WRONGPASS",
                         native_error{"redis", 0, "WRONGPASS invalid username-password pair"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.code(), user_code(user_errc::other));
  EXPECT_EQ(bad.error().reason(), "other");
  ASSERT_TRUE(bad.error().native);
  EXPECT_EQ(bad.error().native->source, "redis");
  try {
    (void)bad.value();
    FAIL() << "value() must throw";
  } catch (const error& e) {  // the one exception type, also a std::system_error
    EXPECT_STREQ(e.what(), "other: redis AUTH refused: WRONGPASS");
    EXPECT_EQ(e.code(), user_code(user_errc::other));
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

}  // namespace
