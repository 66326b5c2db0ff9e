// babelqueue redis recover --broker redis://… --queue Q --older-than SECONDS
// Moves messages reserved longer than SECONDS ago from <Q>:processing back to the end of Q
// (see redis_transport.hpp "recover()": the crash window it closes, the duplicate it opens).
// Exit 0 with a one-line summary; 2 on usage or broker errors.
#include "command.hpp"

#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <iostream>

namespace {

babelqueue::cli::command_registrar redis_command{
    "redis", [](CLI::App& root) {
      auto* group = root.add_subcommand("redis", "Redis operator commands");
      group->require_subcommand(1);
      auto* cmd = group->add_subcommand(
          "recover",
          "Move messages stuck in <queue>:processing longer than --older-than back to the queue");
      struct args_t {
        std::string broker, queue;
        double older_than = -1;
      };
      auto args = std::make_shared<args_t>();
      cmd->add_option("--broker", args->broker,
                      "redis://[[user]:password@]host[:port][/db][?options]")
          ->required();
      cmd->add_option("--queue", args->queue,
                      "The queue (ready list) name, e.g. orders or {orders}")
          ->required();
      cmd->add_option(
             "--older-than", args->older_than,
             "Minimum reservation age in seconds (0 = everything in :processing). Choose it "
             "above your slowest handler: a live consumer still holding an older message "
             "will see it delivered again")
          ->required()
          ->check(CLI::NonNegativeNumber);
      cmd->callback([args] {
        auto& status = babelqueue::cli::exit_status();
        auto url = babelqueue::broker_url::parse(args->broker);
        if (!url) {
          std::cerr << "--broker: " << url.error().message << "\n";
          status = 2;
          return;
        }
        auto opts = babelqueue::redis::options_from_url(*url);
        if (!opts) {
          std::cerr << "--broker: " << opts.error().message << "\n";
          status = 2;
          return;
        }
        auto t = babelqueue::redis::redis_transport::open(std::move(*opts));
        if (!t) {
          std::cerr << "cannot connect to " << url->redacted() << ": " << t.error().message << "\n";
          status = 2;
          return;
        }
        auto age = std::chrono::milliseconds(static_cast<std::int64_t>(args->older_than * 1000.0));
        auto r = (*t)->recover(args->queue, age);
        if (!r) {
          std::cerr << "recover failed: " << r.error().reason() << ": " << r.error().message
                    << "\n";
          status = 2;
          return;
        }
        std::cout << "moved " << r->moved << " message(s) back to " << args->queue << "; "
                  << r->stamped << " untracked reservation(s) now timed; " << r->remaining
                  << " left in " << args->queue << (*t)->config().processing_suffix << "\n";
        (void)(*t)->close(std::chrono::steady_clock::now() + std::chrono::seconds(1));
        status = 0;
      });
    }};

}  // namespace
