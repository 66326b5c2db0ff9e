// "The documented code is the returned code": every error code the runtime, outbox,
// idempotency and redrive public headers promise, triggered for real (memory:// broker,
// memory stores) and compared — the code itself, and the portable condition a caller tests.
// One table, so a header edit without the code (or the reverse) fails here by name.
// (Transports' documented codes are the transport contract suite's.)
#include "outbox/fault_injecting_transport.hpp"
#include "runtime/test_util.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/store.hpp>
#include <babelqueue/idempotency/wrap.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/memory_store.hpp>
#include <babelqueue/outbox/relay.hpp>
#include <babelqueue/outbox/writer.hpp>
#include <babelqueue/redrive/dead_letters.hpp>
#include <babelqueue/redrive/redrive.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/error.hpp>
#include <babelqueue/runtime/url.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;

/// What a call did: the code of its failed result, of the babelqueue::error it threw, or
/// errc::ok. Any other exception type is a failure of the one-error-model rule itself.
struct outcome {
  std::error_code code = make_error_code(errc::ok);
  bool thrown = false;
};

template <class T>
outcome of(const result<T>& r) {
  return {r.code(), false};
}

outcome thrown_by(const std::function<void()>& call) {
  try {
    call();
  } catch (const babelqueue::error& e) {
    return {e.code(), true};
  }
  return {};
}

/// Runs `call` on a message built from `body` as the runtime builds one (no publisher).
outcome on_message(std::string body, const std::function<void(message&)>& call) {
  received_message delivery;
  delivery.body = std::move(body);
  const envelope env = decode(delivery.body).value();
  message msg(delivery, env, nullptr);
  return thrown_by([&] { call(msg); });
}

struct documented {
  const char* where;  ///< header and function whose comment promises the code
  std::error_code code;
  std::optional<condition> portable;  ///< the condition the header (or error.hpp) names
  bool thrown;                        ///< documented as @throws rather than a result
  std::function<outcome()> trigger;
};

std::string memory_url() { return "memory://" + bqtest::unique_broker("doc"); }

app_options options_where(const std::function<void(app_options&)>& change) {
  app_options o;
  change(o);
  return o;
}

constexpr std::string_view one_order =
    R"({"job":"urn:a:b:c","trace_id":"t-1","data":{},"meta":{"schema_version":1,"id":"m-1"},"attempts":0})";

std::vector<documented> table() {
  memory::register_transport();
  std::vector<documented> t;

  // ---- runtime/app.hpp ---------------------------------------------------------------
  t.push_back({"app.hpp app(url): invalid options", runtime_errc::invalid_argument,
               condition::invalid_argument, true, [] {
                 return thrown_by([] {
                   app a(memory_url(), options_where([](app_options& o) { o.queue.clear(); }));
                 });
               }});
  t.push_back({"app.hpp app(url): the URL cannot be opened (no transport for the scheme)",
               runtime_errc::unknown_scheme, condition::invalid_argument, true,
               [] { return thrown_by([] { app a("nosuch://x"); }); }});
  t.push_back({"app.hpp app::open: invalid options (workers 0)", runtime_errc::invalid_argument,
               condition::invalid_argument, false, [] {
                 return of(
                     app::open(memory_url(), options_where([](app_options& o) { o.workers = 0; })));
               }});
  t.push_back(
      {"app.hpp handle(): blank URN", errc::empty_urn, condition::invalid_argument, true, [] {
         app a(memory_url());
         return thrown_by([&] { a.handle(" \t", [](message&) {}); });
       }});
  t.push_back({"app.hpp publish(urn, json_text): text that is not JSON", errc::malformed_json,
               condition::rejected, false, [] {
                 app a(memory_url());
                 return of(a.publish("urn:a:b:c", json_text{"{nope"}));
               }});
  t.push_back({"app.hpp publish(urn, json_text): JSON that is not an object", errc::invalid_data,
               condition::rejected, false, [] {
                 app a(memory_url());
                 return of(a.publish("urn:a:b:c", json_text{"[1]"}));
               }});
  t.push_back({"app.hpp consume(): an empty queue name", runtime_errc::invalid_argument,
               condition::invalid_argument, false, [] {
                 app a(memory_url());
                 return of(a.consume({""}));
               }});
  t.push_back({"app.hpp consume(): already running", runtime_errc::already_running,
               condition::invalid_argument, false, [] {
                 // Asked from a handler, so consume() is running for certain.
                 app a(memory_url(), options_where([](app_options& o) { o.poll_timeout = 20ms; }));
                 outcome second;
                 a.handle("urn:a:b:c", [&](message&) {
                   second = of(a.consume());
                   a.stop();
                 });
                 (void)a.publish("urn:a:b:c", json::object());
                 auto first = a.consume();
                 if (!first) return of(first);
                 return second;
               }});

  // ---- runtime/message.hpp ---------------------------------------------------------
  t.push_back(
      {"message.hpp data(): a number no C++ type holds", errc::number_out_of_range, std::nullopt,
       true, [] {
         return on_message(
             R"({"job":"urn:a:b:c","trace_id":"t-1","data":{"n":1e999},"meta":{"schema_version":1},"attempts":0})",
             [](message& m) { (void)m.data(); });
       }});

  // ---- runtime/url.hpp ---------------------------------------------------------------
  t.push_back({"url.hpp broker_url::parse: no scheme://", runtime_errc::invalid_argument,
               condition::invalid_argument, false,
               [] { return of(broker_url::parse("localhost:6379")); }});
  t.push_back({"url.hpp broker_url::parse: port out of range", runtime_errc::invalid_argument,
               condition::invalid_argument, false,
               [] { return of(broker_url::parse("redis://h:70000")); }});
  t.push_back({"url.hpp query_options::finish: an unknown option", runtime_errc::invalid_argument,
               condition::invalid_argument, false, [] {
                 query_options q(broker_url::parse("memory://x?nosuch=1").value());
                 return of(q.finish("memory"));
               }});
  t.push_back({"url.hpp query_options::get: a malformed value", runtime_errc::invalid_argument,
               condition::invalid_argument, false, [] {
                 query_options q(broker_url::parse("memory://x?n=abc").value());
                 std::int64_t n = 0;
                 return of(q.get("n", n));
               }});
  t.push_back({"url.hpp open_transport: no factory for the scheme", runtime_errc::unknown_scheme,
               condition::invalid_argument, false,
               [] { return of(open_transport("nosuch://x")); }});
  t.push_back({"url.hpp open_transport: a malformed URL", runtime_errc::invalid_argument,
               condition::invalid_argument, false,
               [] { return of(open_transport("memory://x#frag")); }});

  // ---- idempotency/wrap.hpp ----------------------------------------------------------
  const auto seen = std::make_shared<idempotency::memory_store>();
  t.push_back({"wrap.hpp wrap(): a null store", idempotency::errc::invalid_argument,
               condition::invalid_argument, true, [] {
                 return thrown_by([] { (void)idempotency::wrap(nullptr, [](message&) {}); });
               }});
  t.push_back({"wrap.hpp wrap(): an empty handler", idempotency::errc::invalid_argument,
               condition::invalid_argument, true,
               [seen] { return thrown_by([&] { (void)idempotency::wrap(seen, {}); }); }});
  t.push_back({"wrap.hpp wrap_claiming(): a null store", idempotency::errc::invalid_argument,
               condition::invalid_argument, true, [] {
                 return thrown_by(
                     [] { (void)idempotency::wrap_claiming(nullptr, [](message&) {}); });
               }});
  t.push_back({"wrap.hpp wrap_claiming(): an empty handler", idempotency::errc::invalid_argument,
               condition::invalid_argument, true,
               [seen] { return thrown_by([&] { (void)idempotency::wrap_claiming(seen, {}); }); }});
  t.push_back({"wrap.hpp wrap_claiming(): ttl not > 0", idempotency::errc::invalid_argument,
               condition::invalid_argument, true, [seen] {
                 return thrown_by([&] {
                   (void)idempotency::wrap_claiming(seen, [](message&) {}, {.ttl = 0ms});
                 });
               }});
  t.push_back({"wrap.hpp wrap_claiming(): park_delay not > 0", idempotency::errc::invalid_argument,
               condition::invalid_argument, true, [seen] {
                 return thrown_by([&] {
                   (void)idempotency::wrap_claiming(seen, [](message&) {},
                                                    {.ttl = 1h, .park_delay = 0ms});
                 });
               }});
  t.push_back({"store.hpp claiming_store::claim(): ttl not > 0 (memory_store)",
               idempotency::errc::invalid_argument, condition::invalid_argument, false,
               [] { return of(idempotency::memory_store{}.claim("a", 0ms)); }});

  // ---- outbox/writer.hpp, outbox/relay.hpp ---------------------------------------------
  t.push_back({"writer.hpp writer(): a null store", outbox::errc::invalid_argument,
               condition::invalid_argument, true,
               [] { return thrown_by([] { outbox::writer w(nullptr); }); }});
  t.push_back({"writer.hpp write_encoded(): an empty queue", outbox::errc::invalid_argument,
               condition::invalid_argument, false, [] {
                 outbox::writer w(std::make_shared<outbox::memory_store>());
                 return of(w.write_encoded(one_order, ""));
               }});
  t.push_back({"relay.hpp relay(): a null store", outbox::errc::invalid_argument,
               condition::invalid_argument, true, [] {
                 memory::memory_transport broker(bqtest::unique_broker("doc"));
                 return thrown_by([&] { outbox::relay r(nullptr, broker); });
               }});

  // ---- redrive/dead_letters.hpp, redrive/redrive.hpp -----------------------------------
  t.push_back({"dead_letters.hpp list_dead_letters(): an empty queue name",
               transport_errc::invalid_argument, condition::invalid_argument, false, [] {
                 memory::memory_transport broker(bqtest::unique_broker("doc"));
                 return of(list_dead_letters(broker, ""));
               }});
  t.push_back({"dead_letters.hpp list_dead_letters(): no peek, no receive_and_release",
               transport_errc::not_supported, condition::not_supported, false, [] {
                 memory::memory_transport broker(bqtest::unique_broker("doc"));
                 bqtest::fault_injecting_transport blind(broker);
                 blind.hide_peek = true;
                 return of(list_dead_letters(blind, "orders.dlq"));
               }});
  t.push_back({"redrive.hpp reset_for_redrive(): an undecodable body", errc::malformed_json,
               condition::rejected, false, [] { return of(reset_for_redrive("{")); }});
  return t;
}

TEST(DocumentedErrors, EachDocumentedCodeIsTheCodeReturned) {
  for (const auto& row : table()) {
    SCOPED_TRACE(row.where);
    const outcome got = row.trigger();
    EXPECT_EQ(got.code, row.code) << "got " << got.code.category().name() << "/"
                                  << reason(got.code);
    EXPECT_EQ(got.thrown, row.thrown) << (row.thrown ? "documented as thrown, was returned"
                                                     : "documented as returned, was thrown");
    if (row.portable) {
      EXPECT_EQ(got.code, *row.portable) << "condition";
    }
  }
}

// The "same caller mistake, same condition" rule across components: each of these is a
// caller mistake in a different category, and all answer condition::invalid_argument, none
// is transient.
TEST(DocumentedErrors, CallerMistakesShareOneConditionAndAreNotTransient) {
  for (const auto& row : table()) {
    if (row.portable != condition::invalid_argument) continue;
    SCOPED_TRACE(row.where);
    EXPECT_FALSE(is_transient(row.code));
  }
  // A component's `unavailable` is transient like the transports': one predicate.
  EXPECT_TRUE(is_transient(idempotency::errc::unavailable));
  EXPECT_TRUE(is_transient(outbox::errc::unavailable));
  EXPECT_FALSE(is_transient(idempotency::errc::backend));
  EXPECT_FALSE(is_transient(outbox::errc::not_found));
}

}  // namespace
