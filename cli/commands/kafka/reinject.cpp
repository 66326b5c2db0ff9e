// babelqueue kafka reinject --broker kafka://…?retry_topics=5s,1m --topic orders [--topic …]
// Runs the retry-tier re-injector (kafka/reinjector.hpp) until SIGINT/SIGTERM: records of
// <topic>.retry.<n> go back to <topic> when due. Progress lines go to stderr; exit 0 after
// a signal, 2 on usage or broker errors.
#include "command.hpp"
#include "commands/runtime/broker.hpp"

#include <babelqueue/kafka/reinjector.hpp>
#include <babelqueue/runtime/url.hpp>

#include <iostream>

namespace {

babelqueue::cli::command_registrar kafka_command{
    "kafka", [](CLI::App& root) {
      auto* group = root.add_subcommand("kafka", "Kafka operator commands");
      group->require_subcommand(1);
      auto* cmd = group->add_subcommand(
          "reinject",
          "Move records of <topic>.retry.<n> back to <topic> when their bq-delay has passed");
      struct args_t {
        std::string broker;
        std::vector<std::string> topics;
        std::string tiers;
        std::vector<std::string> allowed;
      };
      auto args = std::make_shared<args_t>();
      cmd->add_option("--broker", args->broker,
                      "kafka://host:port[,host:port]?retry_topics=5s,1m,10m[&options]")
          ->required();
      cmd->add_option("--topic", args->topics, "A work topic (repeatable)")->required();
      cmd->add_option("--retry-topics", args->tiers,
                      "The tiers, e.g. 5s,1m,10m (else the URL's retry_topics)");
      cmd->add_option("--allow-topic", args->allowed,
                      "A topic besides the --topic ones a record's bq-original-topic may name "
                      "(repeatable; else such a record goes to its tier's work topic)");
      cmd->callback([args] {
        auto& status = babelqueue::cli::exit_status();
        auto url = babelqueue::broker_url::parse(args->broker);
        if (!url) {
          std::cerr << "--broker: " << url.error().message << "\n";
          status = 2;
          return;
        }
        auto opts = babelqueue::kafka::options_from_url(*url);
        if (!opts) {
          std::cerr << "--broker: " << opts.error().message << "\n";
          status = 2;
          return;
        }
        if (!args->tiers.empty()) {
          auto tiers = babelqueue::kafka::parse_retry_topics(args->tiers);
          if (!tiers) {
            std::cerr << "--retry-topics: " << tiers.error().message << "\n";
            status = 2;
            return;
          }
          opts->retry_topics = std::move(*tiers);
        }
        auto r = babelqueue::kafka::reinjector::open(std::move(*opts), args->topics, args->allowed);
        if (!r) {
          std::cerr << "cannot start the re-injector on " << url->redacted() << ": "
                    << r.error().reason() << ": " << r.error().message << "\n";
          status = 2;
          return;
        }
        auto& reinjector = **r;
        babelqueue::cli::signal_watch watch([&reinjector] { reinjector.stop(); });
        std::cerr << "babelqueue kafka reinject: consuming";
        for (const auto& t : reinjector.tier_topics()) std::cerr << " " << t;
        std::cerr << "\n";
        auto ran = reinjector.run();
        const auto stats = reinjector.stats();
        (void)reinjector.close();
        std::cerr << "babelqueue kafka reinject: " << stats.reinjected << " record(s) re-injected";
        if (stats.refused_destinations > 0) {
          std::cerr << ", " << stats.refused_destinations
                    << " naming a topic not allowed (sent to their tier's work topic)";
        }
        std::cerr << "\n";
        if (!ran) {
          std::cerr << "re-injector stopped: " << ran.error().reason() << ": "
                    << ran.error().message << "\n";
          status = 2;
          return;
        }
        status = 0;
      });
    }};

}  // namespace
