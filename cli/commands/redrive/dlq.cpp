// babelqueue dlq list --broker URL --queue Q.dlq [--offset N] [--limit N] [--json]
//                     [--receive-and-release]
// babelqueue dlq show <meta.id> --broker URL --queue Q.dlq [--json]
// Lists a dead-letter queue without consuming or reordering it where the transport can peek
// (memory, sqlite, redis; redrive/dead_letters.hpp says what happens elsewhere).
// Exit 0; 1 when `show` finds no such id; 2 on usage or broker errors.
#include "command.hpp"
#include "commands/redrive/dlq_support.hpp"

#include <babelqueue/json.hpp>
#include <babelqueue/redrive/dead_letters.hpp>

#include <iostream>

namespace {

using babelqueue::dead_letter_entry;

babelqueue::json to_json(const dead_letter_entry& e) {
  babelqueue::json j;
  j["id"] = e.id;
  j["urn"] = e.urn;
  j["trace_id"] = e.trace_id;
  j["attempts"] = e.attempts;
  j["reason"] = e.reason;
  j["error"] = e.error;
  j["exception"] = e.exception;
  j["failed_at"] = e.failed_at;
  j["original_queue"] = e.original_queue;
  j["lang"] = e.lang;
  j["decodable"] = e.decodable;
  if (!e.decodable) j["decode_error"] = e.decode_error;
  return j;
}

std::string dump(const babelqueue::json& j) {
  return j.dump(-1, ' ', false, babelqueue::json::error_handler_t::replace);
}

struct list_args {
  std::string broker, queue, id;
  std::size_t offset = 0, limit = 100;
  bool json = false, receive_and_release = false;
};

void add_common(CLI::App* cmd, list_args& a) {
  cmd->add_option("--broker", a.broker,
                  "Broker URL (default: $BABELQUEUE_BROKER or the local sqlite queue)");
  cmd->add_option("--queue", a.queue, "The dead-letter queue, e.g. orders.dlq")->required();
  cmd->add_flag("--json", a.json, "Print JSON instead of a table");
  cmd->add_flag("--receive-and-release", a.receive_and_release,
                "On a transport that cannot peek, list by receiving and releasing each message "
                "(moves them to the back; may count a delivery)");
}

void run_list(const list_args& a) {
  auto& status = babelqueue::cli::exit_status();
  auto broker = babelqueue::cli::open_broker_or_report(a.broker);
  if (!broker) return;
  babelqueue::dead_letter_list_options o;
  o.offset = a.offset;
  o.limit = a.limit;
  o.receive_and_release = a.receive_and_release;
  auto entries = babelqueue::list_dead_letters(*broker, a.queue, o);
  (void)broker->close(std::chrono::steady_clock::now() + std::chrono::seconds(2));
  if (!entries) {
    std::cerr << "dlq list failed: " << entries.error().reason() << ": " << entries.error().message
              << "\n";
    status = 2;
    return;
  }
  if (a.json) {
    babelqueue::json all = babelqueue::json::array();
    for (const auto& e : *entries) all.push_back(to_json(e));
    std::cout << dump(all) << "\n";
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const auto& e : *entries) {
      if (!e.decodable) {
        rows.push_back({"(undecodable)", "", "", e.decode_error, "", ""});
        continue;
      }
      rows.push_back({e.id, e.urn, e.reason, e.error,
                      babelqueue::cli::format_unix_millis(e.failed_at),
                      std::to_string(e.attempts)});
    }
    babelqueue::cli::print_table(
        std::cout, {"META.ID", "URN", "REASON", "ERROR", "FAILED_AT", "ATTEMPTS"}, rows);
    std::cout << entries->size() << " message(s) in " << a.queue
              << (entries->size() == a.limit ? " (limit reached; --offset for more)" : "") << "\n";
  }
  status = 0;
}

void run_show(const list_args& a) {
  auto& status = babelqueue::cli::exit_status();
  auto broker = babelqueue::cli::open_broker_or_report(a.broker);
  if (!broker) return;
  babelqueue::dead_letter_list_options o;
  o.limit = 500;
  o.receive_and_release = a.receive_and_release;
  std::optional<dead_letter_entry> found;
  // Pages through a peekable queue; the receive fallback reads everything in one go.
  for (;;) {
    auto page = babelqueue::list_dead_letters(*broker, a.queue, o);
    if (!page) {
      std::cerr << "dlq show failed: " << page.error().reason() << ": " << page.error().message
                << "\n";
      status = 2;
      return;
    }
    for (auto& e : *page) {
      if (e.decodable && e.id == a.id) {
        found = std::move(e);
        break;
      }
    }
    if (found || page->size() < o.limit || a.receive_and_release) break;
    o.offset += page->size();
  }
  (void)broker->close(std::chrono::steady_clock::now() + std::chrono::seconds(2));
  if (!found) {
    std::cerr << "no message with meta.id " << a.id << " in " << a.queue << "\n";
    status = 1;
    return;
  }
  if (a.json) {
    auto j = to_json(*found);
    j["body"] = found->body;
    std::cout << dump(j) << "\n";
  } else {
    const auto& e = *found;
    std::cout << "meta.id:        " << e.id << "\nurn:            " << e.urn
              << "\ntrace_id:       " << e.trace_id << "\nattempts:       " << e.attempts
              << "\nreason:         " << e.reason << "\nerror:          " << e.error
              << "\nexception:      " << e.exception
              << "\nfailed_at:      " << babelqueue::cli::format_unix_millis(e.failed_at)
              << "\noriginal_queue: " << e.original_queue << "\nlang:           " << e.lang << "\n";
    for (const auto& [k, v] : e.hdrs) std::cout << "header " << k << ": " << v << "\n";
    std::cout << "\n" << e.body << "\n";
  }
  status = 0;
}

babelqueue::cli::command_registrar dlq_command{
    "dlq", [](CLI::App& root) {
      auto* group = root.add_subcommand(
          "dlq", "Inspect a dead-letter queue (without consuming it where possible)");
      group->require_subcommand(1);
      auto args = std::make_shared<list_args>();
      auto* list = group->add_subcommand("list", "List the messages of a dead-letter queue");
      add_common(list, *args);
      list->add_option("--offset", args->offset, "Skip this many messages first");
      list->add_option("--limit", args->limit, "List at most this many (default 100)")
          ->check(CLI::PositiveNumber);
      list->callback([args] { run_list(*args); });
      auto* show = group->add_subcommand("show", "Show one dead-lettered message by its meta.id");
      show->add_option("id", args->id, "The message's meta.id")->required();
      add_common(show, *args);
      show->callback([args] { run_show(*args); });
    }};

}  // namespace
