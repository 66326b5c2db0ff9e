#pragma once
// A broker restart while delayed messages wait (issue #37), the one check every binding whose
// broker holds the delay runs (rabbitmq, artemis, pulsar, kafka restart tests): half the
// messages come due while the broker is down, half after it is back. Every message arrives
// exactly once, none before its delay.
#include "support/services.hpp"

#include <babelqueue/babelqueue.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>

namespace bqtest {

struct delay_restart_plan {
  std::chrono::milliseconds due_in_outage{2000};  ///< delay of the first half
  std::chrono::milliseconds due_after{12000};     ///< delay of the second half
  long per_delay = 50;
  /// How long the receive loop may take after the restart returned.
  std::chrono::seconds collect_within{60};
  /// Arrival this much before the delay counts as early: the broker's clock is not ours.
  std::chrono::milliseconds clock_slack{100};
};

/// Publishes the plan's messages with publish_delayed() on `publisher`, runs `restart` (stops
/// and starts the broker; returns whether it did), then receives and acks on `consumer` (the
/// same transport or another) until every message came or the time is up.
inline void expect_delays_survive_a_restart(babelqueue::transport& publisher,
                                            babelqueue::transport& consumer,
                                            const std::string& queue,
                                            const std::function<bool()>& restart,
                                            const delay_restart_plan& plan = {}) {
  using clock = std::chrono::steady_clock;
  const auto n_of = [](const std::string& body) {
    return babelqueue::decode(body)->data().value().at("n").get<long>();
  };
  std::map<long, clock::time_point> earliest;  // n -> earliest allowed arrival
  const auto first_publish = clock::now();
  for (long n = 0; n < 2 * plan.per_delay; ++n) {
    const auto delay = n < plan.per_delay ? plan.due_in_outage : plan.due_after;
    const auto before = clock::now();  // the delay starts after this
    ASSERT_TRUE(publisher.publish_delayed(queue, envelope_text(n), {}, delay)) << "message " << n;
    earliest[n] = before + delay - plan.clock_slack;
  }
  const auto published = clock::now() - first_publish;
  ASSERT_TRUE(restart()) << "the broker did not restart";
  const auto back = clock::now() - first_publish;

  std::map<long, int> seen;
  long early = 0;
  const auto give_up = clock::now() + plan.collect_within;
  while (seen.size() < earliest.size() && clock::now() < give_up) {
    auto got = consumer.receive(queue, std::chrono::seconds(1));
    if (!got || !got->has_value()) {  // reconnecting, or nothing due yet
      if (!got) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    const long n = n_of((*got)->body);
    if (clock::now() < earliest[n]) ++early;
    ++seen[n];
    EXPECT_TRUE(consumer.ack(**got));
  }
  auto late = consumer.receive(queue, std::chrono::seconds(2));  // a duplicate would show here
  if (late && late->has_value()) ++seen[n_of((*late)->body)];
  EXPECT_EQ(seen.size(), earliest.size()) << "every delayed message arrived";
  for (const auto& [n, times] : seen) EXPECT_EQ(times, 1) << "message " << n << " twice";
  EXPECT_EQ(early, 0) << "arrived before its delay";
  const auto ms = [](auto d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  std::cout << "published " << earliest.size() << " in " << ms(published)
            << " ms; the broker was back " << ms(back) << " ms after the first publish; "
            << seen.size() << " arrived, " << early << " early\n";
}

}  // namespace bqtest
