// The runtime's two categories (runtime/error.hpp): names, stable reasons, their portable
// conditions and is_transient() on them.
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/error.hpp>

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace babelqueue;

namespace {

TEST(RuntimeErrorCodes, EachHasItsOwnCategory) {
  std::set<std::string> names{core_category().name(), runtime_category().name(),
                              transport_category().name(), condition_category().name()};
  EXPECT_EQ(names, (std::set<std::string>{"babelqueue.core", "babelqueue.runtime",
                                          "babelqueue.transport", "babelqueue"}));
  EXPECT_EQ(std::error_code(runtime_errc::invalid_argument).category(), runtime_category());
  EXPECT_EQ(std::error_code(transport_errc::invalid_argument).category(), transport_category());
  // Same name, different codes: they are not equal as codes...
  EXPECT_NE(std::error_code(errc::invalid_argument),
            std::error_code(transport_errc::invalid_argument));
  // ...but the same portable condition.
  EXPECT_EQ(std::error_code(runtime_errc::unknown_scheme), condition::invalid_argument);
  EXPECT_EQ(std::error_code(runtime_errc::already_running), condition::invalid_argument);
  EXPECT_EQ(std::error_code(transport_errc::invalid_argument), condition::invalid_argument);
}

TEST(RuntimeErrorCodes, ReasonNamesAreStable) {
  EXPECT_EQ(reason(std::error_code(transport_errc::permission)), "permission");
  EXPECT_EQ(reason(std::error_code(runtime_errc::handler_failed)), "handler_failed");
  EXPECT_EQ(reason(std::error_code(runtime_errc::resource_exhausted)), "resource_exhausted");
  EXPECT_EQ(std::error_code(transport_errc::too_large).message(), "too_large");
  EXPECT_EQ(reason(std::error_code(0, transport_category())), "ok");
  EXPECT_EQ(reason(std::error_code(99, runtime_category())), "unknown");
}

TEST(RuntimeErrorCodes, TransportKindsMapOntoConditions) {
  EXPECT_EQ(std::error_code(transport_errc::timeout), condition::timeout);
  EXPECT_EQ(std::error_code(transport_errc::unavailable), condition::unavailable);
  EXPECT_EQ(std::error_code(transport_errc::permission), condition::permission);
  EXPECT_EQ(std::error_code(transport_errc::not_found), condition::not_found);
  EXPECT_EQ(std::error_code(transport_errc::too_large), condition::too_large);
  EXPECT_EQ(std::error_code(transport_errc::not_supported), condition::not_supported);
  EXPECT_EQ(std::error_code(transport_errc::closed), condition::closed);
  EXPECT_EQ(std::error_code(runtime_errc::io), condition::io);
  EXPECT_NE(std::error_code(transport_errc::refused), condition::permission);
}

TEST(RuntimeErrorCodes, TransientIsWhatARetryCanFix) {
  EXPECT_TRUE(is_transient(transport_errc::unavailable));
  EXPECT_TRUE(is_transient(transport_errc::timeout));
  EXPECT_TRUE(is_transient(runtime_errc::io));
  for (auto e : {transport_errc::refused, transport_errc::permission, transport_errc::not_found,
                 transport_errc::too_large, transport_errc::invalid_argument,
                 transport_errc::not_supported, transport_errc::closed}) {
    EXPECT_FALSE(is_transient(e)) << reason(std::error_code(e));
  }
  for (auto e :
       {runtime_errc::invalid_argument, runtime_errc::unknown_scheme, runtime_errc::already_running,
        runtime_errc::resource_exhausted, runtime_errc::handler_failed}) {
    EXPECT_FALSE(is_transient(e)) << reason(std::error_code(e));
  }
}

}  // namespace
