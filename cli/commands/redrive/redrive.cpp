// babelqueue redrive --broker URL --dlq Q.dlq [--dry-run] [--to Q] [--max N] [--reason R]
//                    [--urn U] [--older-than D] [--bypass] [--json]
// Moves dead-lettered messages back to work (redrive/redrive.hpp): prints the plan (with
// --dry-run) or the result, one row per message, and a progress line on stderr on long runs.
// Exit 0 when the run completed; 2 on usage errors or when it stopped on a broker error
// (every message it had taken and not redriven is back in the DLQ, and listed).
#include "command.hpp"
#include "commands/redrive/dlq_support.hpp"

#include <babelqueue/dead_letter.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/redrive/redrive.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace {

struct redrive_args {
  std::string broker, dlq, to, reason, urn, older_than;
  std::vector<std::string> allowed;
  std::size_t max = 0;
  bool dry_run = false, bypass = false, json = false, any_queue = false;
};

void run(const redrive_args& a) {
  auto& status = babelqueue::cli::exit_status();
  std::optional<std::chrono::milliseconds> older;
  if (!a.older_than.empty()) {
    older = babelqueue::cli::parse_duration(a.older_than);
    if (!older) {
      std::cerr << "--older-than: expected a duration such as 90s, 15m, 2h or 7d\n";
      status = 2;
      return;
    }
  }
  auto broker = babelqueue::cli::open_broker_or_report(a.broker);
  if (!broker) return;
  babelqueue::redrive_options o;
  o.dry_run = a.dry_run;
  o.to_queue = a.to;
  o.allowed_queues = a.allowed;
  o.allow_any_target = a.any_queue;
  o.max = a.max;
  o.bypass = a.bypass;
  const std::int64_t now = babelqueue::unix_millis();
  if (!a.reason.empty() || !a.urn.empty() || older) {
    o.select = [&a, older, now](const babelqueue::envelope& env) {
      const auto dl = env.dead_letter();
      if (!a.reason.empty() && (!dl || dl->reason != a.reason)) return false;
      if (!a.urn.empty() && env.urn() != a.urn) return false;
      if (older && (!dl || dl->failed_at > now - older->count())) return false;
      return true;
    };
  }
  o.on_progress = [](const babelqueue::redrive_progress& p) {
    if (p.processed % 500 == 0 || (p.taken >= 500 && p.processed == p.taken)) {
      std::cerr << "redrive: " << p.processed << "/" << p.taken << " processed, " << p.redriven
                << " redriven, " << p.skipped << " skipped\n";
    }
  };
  auto report = babelqueue::redrive(*broker, a.dlq, o);
  (void)broker->close(std::chrono::steady_clock::now() + std::chrono::seconds(5));
  if (a.json) {
    babelqueue::json j;
    j["redriven"] = report.redriven;
    j["skipped"] = report.skipped;
    j["dry_run"] = a.dry_run;
    auto& items = j["items"] = babelqueue::json::array();
    for (const auto& i : report.items) {
      items.push_back({{"id", i.id},
                       {"trace_id", i.trace_id},
                       {"urn", i.urn},
                       {"reason", i.reason},
                       {"from", i.from},
                       {"to", i.to},
                       {"redriven", i.redriven},
                       {"bypassed", i.bypassed},
                       {"outcome", babelqueue::to_string(i.outcome)},
                       {"detail", i.detail}});
    }
    if (report.error) j["error"] = report.error->message;
    std::cout << j.dump(-1, ' ', false, babelqueue::json::error_handler_t::replace) << "\n";
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const auto& i : report.items) {
      rows.push_back({i.id.empty() ? "(undecodable)" : i.id, i.urn, i.reason, i.to,
                      std::string(babelqueue::to_string(i.outcome)), i.bypassed ? "yes" : "",
                      i.detail});
    }
    babelqueue::cli::print_table(
        std::cout, {"META.ID", "URN", "REASON", "TO", "OUTCOME", "BYPASS", "DETAIL"}, rows);
    std::cout << (a.dry_run ? "dry run: " : "") << report.redriven << " redriven, "
              << report.skipped << " skipped, " << report.items.size() << " taken from " << a.dlq
              << "\n";
  }
  if (report.error) {
    std::cerr << "redrive stopped: " << report.error->reason() << ": " << report.error->message
              << " (messages not redriven were put back)\n";
    status = 2;
    return;
  }
  status = 0;
}

babelqueue::cli::command_registrar redrive_command{
    "redrive", [](CLI::App& root) {
      auto* cmd = root.add_subcommand(
          "redrive",
          "Move dead-lettered messages back to their queue (reset, optionally marked as replays)");
      auto args = std::make_shared<redrive_args>();
      cmd->add_option("--broker", args->broker,
                      "Broker URL (default: $BABELQUEUE_BROKER or the local sqlite queue)");
      cmd->add_option("--dlq", args->dlq, "The dead-letter queue, e.g. orders.dlq")->required();
      cmd->add_flag("--dry-run", args->dry_run,
                    "Print the plan; publish nothing, put everything back");
      cmd->add_option("--to", args->to,
                      "Publish to this queue instead of each message's own (a sandbox)");
      cmd->add_option("--allow-queue", args->allowed,
                      "A queue besides the DLQ's own (orders for orders.dlq) a message's "
                      "dead_letter.original_queue may send it to (repeatable)");
      cmd->add_flag("--allow-any-queue", args->any_queue,
                    "Send each message to whatever queue it names (the peers' behaviour)");
      cmd->add_option("--max", args->max, "Take at most N messages (0 = all)");
      cmd->add_option("--reason", args->reason,
                      "Only messages whose dead_letter.reason is R (failed, unknown_urn, poison)");
      cmd->add_option("--urn", args->urn, "Only messages of this job URN");
      cmd->add_option("--older-than", args->older_than,
                      "Only messages dead-lettered longer ago than D (90s, 15m, 2h, 7d)");
      cmd->add_flag("--bypass", args->bypass,
                    "Stamp bq-replay-bypass: 1 so handlers skip external effects");
      cmd->add_flag("--json", args->json, "Print the result as JSON");
      cmd->callback([args] { run(*args); });
    }};

}  // namespace
