// Live interop with the real Python SDK on the Service Bus STAND-IN (scripts/services.sh:
// Artemis + a CBS responder; BABELQUEUE_ASB_CONNECTION_STRING) — not a Service Bus namespace:
//  - a C++ publish that the official `azure-servicebus` client receives (RECEIVE_AND_DELETE:
//    the stand-in has no PeekLock lock tokens), with the native properties it exposes;
//  - the Python SDK's AsbTransport publishing (over `azure-servicebus`) and the C++ App
//    consuming it, trace_id preserved.
// The Python runtime cannot CONSUME from the stand-in (its AsbTransport peek-locks and
// completes; broker-servers.md), so Python-side consumption is covered by the raw client.
#include "asb/asb_fixture.hpp"
#include "interop/python_peer.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

using bqtest::interop::cases;
using bqtest::interop::cases_json;

class AsbPythonInterop : public bqtest::AsbTest {
 protected:
  void SetUp() override {
    bqtest::AsbTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    BQ_REQUIRE_PYTHON_PEER(python_);
    babelqueue::asb::register_transport();
    conn_ = bqtest::asb_connection_string();
    url_ = babelqueue::asb::url_from_connection_string(conn_).value();
  }
  std::vector<json> run_peer(const std::vector<std::string>& args) {
    return bqtest::interop::run_peer(python_, "asb_peer.py", args);
  }
  std::string python_, conn_, url_;
};

}  // namespace

TEST_F(AsbPythonInterop, ACppPublishIsReceivedByTheAzureServiceBusSdk) {
  const auto expected = cases();
  std::vector<std::pair<babelqueue::envelope, std::string>> sent;
  {
    babelqueue::app_options o;
    o.queue = queue_;
    babelqueue::app app(url_, o);
    for (const auto& c : expected) {
      auto env = babelqueue::make(c.urn, c.data, {.queue = queue_, .trace_id = c.trace_id}).value();
      auto id = app.publish(env, {.queue = "", .hdrs = c.hdrs});
      ASSERT_TRUE(id) << id.error().message;
      sent.emplace_back(env, babelqueue::encode(env).value());
    }
  }
  auto got = run_peer({"receive", conn_, queue_, std::to_string(expected.size())});
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    const json& m = got[i];
    ASSERT_TRUE(m.contains("body")) << m.dump();
    EXPECT_EQ(m["body"], sent[i].second) << "the body byte for byte";
    EXPECT_EQ(m["body_type"], "DATA") << "one data section";
    EXPECT_EQ(m["subject"], expected[i].urn);
    EXPECT_EQ(m["correlation_id"], expected[i].trace_id);
    EXPECT_EQ(m["message_id"], std::string(sent[i].first.id()));
    EXPECT_EQ(m["content_type"], "application/json");
    const json& p = m["properties"];
    EXPECT_EQ(p["bq-schema-version"]["type"], "int") << p.dump();
    EXPECT_EQ(p["bq-schema-version"]["value"], 1);
    EXPECT_EQ(p["bq-created-at"]["type"], "int");
    EXPECT_EQ(p["bq-created-at"]["value"], *sent[i].first.created_at());
    EXPECT_EQ(p["bq-source-lang"]["value"], "cpp");
    for (const auto& [k, v] : expected[i].hdrs) EXPECT_EQ(p[k]["value"], v) << k;
  }
}

TEST_F(AsbPythonInterop, ThePythonSdkPublishesAndTheCppAppConsumes) {
  const auto expected = cases();
  auto ids = run_peer({"publish", conn_, queue_, cases_json()});
  ASSERT_EQ(ids.size(), expected.size());
  babelqueue::app_options o;
  o.queue = queue_;
  o.poll_timeout = 300ms;
  babelqueue::app app(url_, o);
  std::vector<json> seen;
  for (const auto& c : expected) {
    app.handle(c.urn, [&](babelqueue::message& m) {
      seen.push_back({{"urn", std::string(m.urn())},
                      {"trace_id", std::string(m.trace_id())},
                      {"data", m.data()},
                      {"attempts", m.attempts()},
                      {"lang", std::string(m.env().lang())}});
    });
  }
  auto n = app.drain();
  ASSERT_TRUE(n) << n.error().message;
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    EXPECT_EQ(seen[i]["urn"], expected[i].urn);
    EXPECT_EQ(seen[i]["trace_id"], expected[i].trace_id) << "trace_id preserved";
    EXPECT_EQ(seen[i]["data"], expected[i].data);
    EXPECT_EQ(seen[i]["attempts"], 0);
    EXPECT_EQ(seen[i]["lang"], "python");
  }
}
