// Block `idempotency`: the consume-side dedupe decision (ADR-0022) through
// babelqueue::idempotency::wrap on the runtime (memory://): the dedupe key of the fixture,
// then every delivery sequence — run or skip, the handler's outcome, forget_before — and the
// expected effects. The block's prose says expected_effects counts "run + ok"; its numbers
// count every handler invocation, failed ones included (throw-leaves-id-unmarked expects 3
// for two throwing runs and one good run), so that is what is asserted (wire-helpers §1.2).
#include "../manifest.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/idempotency/wrap.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace {

// A delivery of `meta_id` ("" = the key is there but empty: no usable id).
std::string envelope_with_id(const std::string& meta_id) {
  return R"({"job":"urn:babel:orders:created","trace_id":"5c1d1f8e-2f3a-4b6c-9d0e-1a2b3c4d5e6f",)"
         R"("data":{"order_id":1042},"meta":{"id":")" +
         meta_id + R"(","queue":"orders","lang":"php","schema_version":1},"attempts":0})";
}

conformance::register_block idempotency_block{
    "idempotency", [](const nlohmann::json& block) {
      // The dedupe key is meta.id verbatim, as decoded from the fixture.
      const auto& key = block.at("dedup_key");
      auto fixture = babelqueue::decode(conformance::read_file(
          conformance::suite_dir() / key.at("envelope_file").get<std::string>()));
      ASSERT_TRUE(fixture) << fixture.error().message;
      EXPECT_EQ(key.at("key_field"), "meta.id");
      EXPECT_EQ(fixture->id(), key.at("expected_key").get<std::string>());

      babelqueue::memory::register_transport();
      static std::atomic<int> broker_n{0};
      for (const auto& sequence : block.at("sequences").at("cases")) {
        SCOPED_TRACE(sequence.at("name").get<std::string>());
        const std::string broker = "conformance-idempotency-" + std::to_string(broker_n++);
        babelqueue::app_options o;
        o.queue = "orders";
        o.max_attempts = 1;  // a throwing run is dropped: the sequence lists every redelivery
        o.poll_timeout = std::chrono::milliseconds(10);
        babelqueue::app a("memory://" + broker, o);
        auto seen = std::make_shared<babelqueue::idempotency::memory_store>();
        int invocations = 0;
        std::string next_outcome;
        a.handle("urn:babel:orders:created",
                 babelqueue::idempotency::wrap(seen, [&](babelqueue::message&) {
                   ++invocations;
                   if (next_outcome == "throw") throw std::runtime_error("conformance: throw");
                 }));
        babelqueue::memory::memory_transport raw(broker);
        for (const auto& delivery : sequence.at("deliveries")) {
          const std::string id = delivery.at("meta_id");
          if (delivery.value("forget_before", false)) {
            ASSERT_TRUE(seen->forget(id));
          }
          next_outcome = delivery.value("outcome", "");
          const int before = invocations;
          ASSERT_TRUE(raw.publish("orders", envelope_with_id(id), {}));
          ASSERT_EQ(a.drain("orders", 1).value(), 1u);
          const std::string effect = invocations > before ? "run" : "skip";
          EXPECT_EQ(effect, delivery.at("expect_effect").get<std::string>())
              << "meta_id '" << id << "'";
        }
        EXPECT_EQ(invocations, sequence.at("expected_effects").get<int>());
      }
    }};

}  // namespace
