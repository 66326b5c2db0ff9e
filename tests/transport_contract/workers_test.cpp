// Contract case: N workers — each with its own transport instance, on its own thread, as the
// App runs them — share one queue and get each message exactly once between them.
#include "transport_contract/contract_fixture.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bqcontract {
namespace {

TEST_P(TransportContract, WorkersOnOneQueueGetEachMessageOnce) {
  constexpr int workers = 3;
  constexpr int count = 60;
  std::vector<babelqueue::transport*> instances;
  for (int w = 0; w < workers; ++w) {
    instances.push_back(open());
    ASSERT_TRUE(instances.back());
  }
  std::map<std::string, int> sent;
  {
    std::vector<babelqueue::outgoing_message> batch;
    for (int i = 0; i < count; ++i) {
      batch.push_back({bqtest::envelope_text(i, "urn:babel:test:item", queue_), {}});
      sent[batch.back().body] = 0;
    }
    auto r = transport().publish_batch(queue_, batch);
    ASSERT_TRUE(r) << r.error().message;
  }
  std::mutex mu;
  std::map<std::string, int> got;  // body → deliveries
  std::atomic<int> acked{0};
  std::atomic<bool> broken{false};
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  std::vector<std::thread> threads;
  for (auto* t : instances) {
    threads.emplace_back([&, t] {
      while (acked.load() < count && !broken.load() &&
             std::chrono::steady_clock::now() < deadline) {
        auto m = t->receive(queue_, 500ms);
        if (!m) {
          ADD_FAILURE() << "receive: " << m.error().message;
          broken = true;
          return;
        }
        if (!m->has_value()) continue;
        {
          std::lock_guard lock(mu);
          ++got[(*m)->body];
        }
        if (auto a = t->ack(**m); !a) {
          ADD_FAILURE() << "ack: " << a.error().message;
          broken = true;
          return;
        }
        ++acked;
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_FALSE(broken.load());
  EXPECT_EQ(acked.load(), count);
  for (const auto& [body, n] : got) {
    EXPECT_TRUE(sent.contains(body)) << "a message that was never sent";
    EXPECT_EQ(n, 1) << "a message was delivered " << n << " times";
  }
  EXPECT_EQ(got.size(), sent.size()) << "messages missing";
  EXPECT_TRUE(nothing_within(transport(), 500ms)) << "more messages than were published";
}

}  // namespace
}  // namespace bqcontract
