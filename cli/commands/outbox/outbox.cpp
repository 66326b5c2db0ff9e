// babelqueue outbox relay --db URL --broker URL [--once] [--batch N] [--poll S] [--table T]
//                         [--park-after N]
// babelqueue outbox list  --db URL [--parked | --status S] [--limit N] [--json] [--table T]
// babelqueue outbox retry --db URL ID... [--table T]
// relay runs the outbox relay (outbox/relay.hpp) as a process: drain, then poll every --poll
// seconds; SIGINT/SIGTERM finish the pass in progress (rows it published are marked) and exit
// 0. --once drains once and exits. list shows rows for operators; retry puts parked rows back.
// Exit 0; 1 when retry changed nothing; 2 on usage, database or broker errors.
#include "command.hpp"
#include "commands/outbox/store_url.hpp"
#include "commands/runtime/broker.hpp"

#include <babelqueue/json.hpp>
#include <babelqueue/outbox/error.hpp>
#include <babelqueue/outbox/relay.hpp>
#include <babelqueue/runtime/url.hpp>

#include <atomic>
#include <condition_variable>
#include <iostream>
#include <mutex>

namespace {

namespace bq = babelqueue;

struct outbox_args {
  std::string db, broker, table = "babelqueue_outbox", status;
  std::int64_t park_after = 5;
  std::size_t batch = 100, limit = 100;
  double poll = 1.0;
  bool once = false, parked = false, json = false;
  std::vector<std::string> ids;
};

std::shared_ptr<bq::outbox::store> open_store(const outbox_args& a) {
  auto s = bq::cli::open_outbox_store(a.db, {a.table, a.park_after});
  if (!s) {
    std::cerr << "cannot open outbox " << bq::redact_url(a.db) << ": " << s.error().reason() << ": "
              << s.error().message << "\n";
    bq::cli::exit_status() = 2;
    return nullptr;
  }
  return *s;
}

// Sleeps that a signal cuts short.
class stop_flag {
 public:
  void raise() {
    {
      std::lock_guard lock(m_);
      stopped_ = true;
    }
    cv_.notify_all();
  }
  bool stopped() {
    std::lock_guard lock(m_);
    return stopped_;
  }
  void sleep(std::chrono::milliseconds d) {
    std::unique_lock lock(m_);
    cv_.wait_for(lock, d, [&] { return stopped_; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

void run_relay(const outbox_args& a) {
  auto& status = bq::cli::exit_status();
  auto rows = open_store(a);
  if (!rows) return;
  bq::cli::register_builtin_transports();
  const std::string url = bq::cli::resolve_broker(a.broker);
  auto broker = bq::open_transport(url);
  if (!broker) {
    std::cerr << "cannot open broker " << bq::redact_url(url) << ": " << broker.error().reason()
              << ": " << broker.error().message << "\n";
    status = 2;
    return;
  }
  bq::cli::print_security_warnings(**broker);
  stop_flag stop;
  bq::cli::signal_watch signals([&stop] { stop.raise(); });
  bq::outbox::relay_options o;
  o.batch = a.batch;
  o.sleeper = [&stop](std::chrono::milliseconds d) { stop.sleep(d); };
  bq::outbox::relay relay(rows, **broker, o);
  const auto poll = std::chrono::milliseconds(static_cast<std::int64_t>(a.poll * 1000.0));
  std::size_t total = 0, failed = 0;
  status = 0;
  for (;;) {
    auto r = a.once ? relay.drain() : relay.flush();
    if (!r) {
      std::cerr << "outbox relay: " << r.error().reason() << ": " << r.error().message << "\n";
      if (a.once) {
        status = 2;
        break;
      }
      stop.sleep(poll);  // the database or broker is down: try again after a poll interval
    } else {
      total += r->published;
      failed += r->failed;
      if (r->attempted() > 0) {
        std::cerr << "outbox relay: published " << r->published << ", failed " << r->failed << "\n";
      }
      if (r->outage) {
        // Not counted against the rows (they are not parked for it): said, and retried.
        std::cerr << "outbox relay: the broker is unavailable (" << r->outage->reason() << ": "
                  << r->outage->message << "); " << r->deferred << " row(s) left pending\n";
      }
      if (a.once) {
        if (r->outage) status = 2;  // rows are left that the broker would not take now
        break;
      }
      if (r->published == 0) stop.sleep(poll);
    }
    if (stop.stopped()) break;
  }
  (void)(*broker)->close(std::chrono::steady_clock::now() + std::chrono::seconds(5));
  std::cout << "relayed " << total << " row(s), " << failed << " failed publish(es)\n";
}

void run_list(const outbox_args& a) {
  auto& status = bq::cli::exit_status();
  bq::outbox::list_options o;
  o.limit = a.limit;
  if (a.parked) o.status = bq::outbox::row_status::parked;
  if (!a.status.empty()) {
    o.status = bq::outbox::parse_status(a.status);
    if (!o.status) {
      std::cerr << "--status: expected pending, published or parked\n";
      status = 2;
      return;
    }
  }
  auto rows = open_store(a);
  if (!rows) return;
  auto listed = rows->list(o);
  if (!listed) {
    std::cerr << "outbox list: " << listed.error().reason() << ": " << listed.error().message
              << "\n";
    status = 2;
    return;
  }
  if (a.json) {
    bq::json all = bq::json::array();
    for (const auto& r : *listed) {
      all.push_back({{"id", r.id},
                     {"queue", r.queue},
                     {"status", bq::outbox::to_string(r.status)},
                     {"attempts", r.attempts},
                     {"last_error", r.last_error},
                     {"created_at", r.created_at},
                     {"bytes", r.body.size()}});
    }
    std::cout << all.dump(-1, ' ', false, bq::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "ID\tQUEUE\tSTATUS\tATTEMPTS\tCREATED_AT\tLAST_ERROR\n";
    for (const auto& r : *listed) {
      std::cout << r.id << "\t" << r.queue << "\t" << bq::outbox::to_string(r.status) << "\t"
                << r.attempts << "\t" << r.created_at << "\t" << r.last_error << "\n";
    }
  }
  status = 0;
}

void run_retry(const outbox_args& a) {
  auto& status = bq::cli::exit_status();
  auto rows = open_store(a);
  if (!rows) return;
  auto n = rows->retry(a.ids);
  if (!n) {
    std::cerr << "outbox retry: " << n.error().reason() << ": " << n.error().message << "\n";
    status = 2;
    return;
  }
  std::cout << *n << " parked row(s) back to pending\n";
  status = *n > 0 ? 0 : 1;
}

void add_db(CLI::App* cmd, outbox_args& a) {
  cmd->add_option("--db", a.db,
                  "The outbox database: sqlite://PATH or postgresql://USER@HOST:PORT/DB")
      ->required();
  cmd->add_option("--table", a.table, "Outbox table (default babelqueue_outbox)");
}

bq::cli::command_registrar outbox_command{
    "outbox", [](CLI::App& root) {
      auto* group =
          root.add_subcommand("outbox", "Transactional outbox: run the relay, list and retry rows");
      group->require_subcommand(1);
      auto args = std::make_shared<outbox_args>();
      auto* relay =
          group->add_subcommand("relay", "Publish pending outbox rows to the broker until stopped");
      add_db(relay, *args);
      bq::cli::add_broker_option(relay, args->broker);
      relay->add_flag("--once", args->once, "Drain once and exit");
      relay->add_option("--batch", args->batch, "Rows per pass (default 100)")
          ->check(CLI::PositiveNumber);
      relay->add_option("--poll", args->poll, "Seconds between passes when idle (default 1)")
          ->check(CLI::PositiveNumber);
      relay
          ->add_option("--park-after", args->park_after,
                       "Park a row after this many failed publishes (0 = never; default 5)")
          ->check(CLI::NonNegativeNumber);
      relay->callback([args] { run_relay(*args); });
      auto* list = group->add_subcommand("list", "List outbox rows, oldest first");
      add_db(list, *args);
      list->add_flag("--parked", args->parked, "Only parked rows");
      list->add_option("--status", args->status,
                       "Only rows of this status: pending, published, parked");
      list->add_option("--limit", args->limit, "At most N rows (default 100)")
          ->check(CLI::PositiveNumber);
      list->add_flag("--json", args->json, "Print JSON");
      list->callback([args] { run_list(*args); });
      auto* retry = group->add_subcommand("retry", "Put parked rows back to pending (attempts 0)");
      add_db(retry, *args);
      retry->add_option("ids", args->ids, "Row ids")->required();
      retry->callback([args] { run_retry(*args); });
    }};

}  // namespace
