#include <babelqueue/urn.hpp>

#include <gtest/gtest.h>

using namespace babelqueue;

TEST(Urn, ConventionVerdicts) {
  struct c {
    const char* urn;
    urn_rule want;
  } cases[] = {
      {"urn:babel:orders:created", urn_rule::ok},
      {"urn:babel:orders:invoice.requested", urn_rule::ok},
      {"urn:babel:notifications:email.welcome.send", urn_rule::ok},
      {"urn:babel:orders:created.v2", urn_rule::ok},
      {"urn:babel:my-ctx:do_it", urn_rule::ok},
      {"", urn_rule::empty},
      {"App\\Jobs\\ProcessOrder", urn_rule::class_name},
      {"urn:babel:Orders:created", urn_rule::not_ascii_lowercase},
      {"urn:babel:orders:créé", urn_rule::not_ascii_lowercase},
      {"urn:babel:orders: created", urn_rule::not_ascii_lowercase},
      {"urn:other:orders:created", urn_rule::bad_prefix},
      {"urn:babel:orders", urn_rule::bad_event},
      {"urn:babel::created", urn_rule::bad_context},
      {"urn:babel:or.ders:created", urn_rule::bad_context},
      {"urn:babel:orders:", urn_rule::bad_event},
      {"urn:babel:orders:a..b", urn_rule::bad_event},
      {"urn:babel:orders:.a", urn_rule::bad_event},
      {"urn:babel:orders:created:1042", urn_rule::extra_segments},
  };
  for (const auto& k : cases) {
    auto v = check_urn(k.urn);
    EXPECT_EQ(v.rule, k.want) << k.urn << " -> " << to_string(v.rule);
    EXPECT_EQ(static_cast<bool>(v), k.want == urn_rule::ok);
    if (k.want != urn_rule::ok) {
      EXPECT_FALSE(v.message.empty());
    }
  }
}
