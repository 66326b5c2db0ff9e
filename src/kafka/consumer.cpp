// A consumer-group member with process-then-commit (consumer.hpp).
#include "kafka/consumer.hpp"

#include "core/propagate.hpp"
#include "kafka/message.hpp"

#include <babelqueue/bindings/kafka.hpp>
#include <babelqueue/runtime/error.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

namespace babelqueue::inline v1::kafka::detail {

namespace bk = bindings::kafka;
using clock = std::chrono::steady_clock;

namespace {

partition_list_ptr list_of(const std::string& topic,
                           const std::vector<std::pair<std::int32_t, std::int64_t>>& offsets) {
  partition_list_ptr l(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
  for (const auto& [p, o] : offsets) {
    rd_kafka_topic_partition_list_add(l.get(), topic.c_str(), p)->offset = o;
  }
  return l;
}

// An error event of the consumer that the next poll may overcome (broker restarts, leader
// moves, a topic still being created): the loop keeps polling.
bool keeps_polling(rd_kafka_resp_err_t err) {
  return babelqueue::is_transient(kafka_error(err, {}).code) ||
         err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
         err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC || err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
         err == RD_KAFKA_RESP_ERR__PARTITION_EOF;
}

}  // namespace

result<std::unique_ptr<consumer>> consumer::open(const options& o, std::string group,
                                                 std::vector<std::string> topics,
                                                 consumer_counters* counters,
                                                 const settlement_owner& handles,
                                                 bool keep_raw_headers, std::size_t prefetch) {
  std::unique_ptr<consumer> c(new consumer());
  c->keep_raw_headers_ = keep_raw_headers;
  c->prefetch_ = std::max<std::size_t>(prefetch, 1);
  c->ctx_.log = o.log ? &o.log : nullptr;
  c->ctx_.self = c.get();
  for (const auto& t : topics) c->ctx_.name += (c->ctx_.name.empty() ? "consumer " : ",") + t;
  c->topics_ = std::move(topics);
  c->counters_ = counters;
  c->handles_ = &handles;
  c->commit_interval_ = o.commit_interval;
  c->commit_batch_ = o.commit_batch;
  options with_group = o;
  with_group.group = std::move(group);
  BABELQUEUE_TRY_LET(conf, consumer_conf(with_group, &c->ctx_));
  rd_kafka_conf_set_rebalance_cb(conf->get(), &consumer::on_rebalance);
  rd_kafka_conf_set_offset_commit_cb(conf->get(), &consumer::on_commit);
  BABELQUEUE_TRY_LET(rk, create_client(RD_KAFKA_CONSUMER, std::move(*conf)));
  c->rk_ = std::move(*rk);
  rd_kafka_poll_set_consumer(c->rk_.get());
  if (c->prefetch_ > 1) c->queue_ = rd_kafka_queue_get_consumer(c->rk_.get());
  partition_list_ptr subs(rd_kafka_topic_partition_list_new(static_cast<int>(c->topics_.size())));
  for (const auto& t : c->topics_) {
    rd_kafka_topic_partition_list_add(subs.get(), t.c_str(), RD_KAFKA_PARTITION_UA);
  }
  if (auto err = rd_kafka_subscribe(c->rk_.get(), subs.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return fail(kafka_error(err, "subscribe to '" + c->ctx_.name + "'"));
  }
  return c;
}

consumer::~consumer() {
  if (!rk_) return;
  if (!closed_) (void)close();
  fetched_.clear();
  if (queue_ != nullptr) rd_kafka_queue_destroy(queue_);
  // Destroyed here, while every member its callbacks touch is alive (members declared after
  // rk_ die before it). And without a second consumer close: ours ran above; when it timed
  // out (e.g. a LeaveGroup under load), librdkafka's own would call the rebalance callback
  // again from inside rd_kafka_destroy.
  rd_kafka_destroy_flags(rk_.release(), RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
}

void consumer::on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                            rd_kafka_topic_partition_list_t* parts, void* /*opaque*/) {
  static_cast<context*>(rd_kafka_opaque(rk))->self->rebalance(err, parts);
}

void consumer::on_commit(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t* /*offsets*/, void* /*opaque*/) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET) return;
  // An asynchronous commit failed (typically a rebalance raced it): the records are
  // delivered again to whoever owns the partition next (at-least-once). Say so.
  const std::string text = std::string("offset commit failed (") + rd_kafka_err2str(err) +
                           "); settled records may be delivered again";
  log_line(rk, 4, "COMMIT", text.c_str());
}

void consumer::rebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts) {
  if (counters_ != nullptr) ++counters_->rebalances;
  // rd_kafka_rebalance_protocol() returns NULL on error — and it does for the revoke that
  // rd_kafka_consumer_close() delivers once the group handler is already terminating (a
  // timing matter: seen under load). strcmp(NULL) was the segfault of the rebalance test.
  // The protocol is fixed by the configured assignors, so the last answer stands in.
  if (const char* protocol = rd_kafka_rebalance_protocol(rk_.get())) {
    cooperative_ = std::strcmp(protocol, "COOPERATIVE") == 0;
  }
  const bool cooperative = cooperative_;
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    for (int i = 0; i < parts->cnt; ++i) {
      tracker(parts->elems[i].topic).second->assign(parts->elems[i].partition);
      // Revoked and assigned again within one run: librdkafka's own barrier purges the run's
      // records of the old assignment; what follows belongs to the new one (keep it).
      std::erase(revoked_in_refill_, std::pair<std::string, std::int32_t>(
                                         parts->elems[i].topic, parts->elems[i].partition));
    }
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_assign(rk_.get(), parts))
        rd_kafka_error_destroy(e);
    } else {
      rd_kafka_assign(rk_.get(), parts);
    }
    return;
  }
  // Revoked (or lost): commit what is settled on these partitions, then abandon their
  // in-flight records — their new owner receives them again.
  std::map<std::string, std::set<std::int32_t>> by_topic;
  for (int i = 0; i < parts->cnt; ++i) {
    by_topic[parts->elems[i].topic].insert(parts->elems[i].partition);
    if (refilling_)
      revoked_in_refill_.emplace_back(parts->elems[i].topic, parts->elems[i].partition);
  }
  // Inside a run (next_message(), keepalive_poll()): the run's records of these partitions
  // are dropped once the call returns (drop_revoked()). Not rd_kafka_yield(): how 2.0's
  // batch consume handles a yield before its next record is not documented, and it is not
  // needed — records of the old assignment after the revocation are discarded by librdkafka
  // itself (version check), those before it are ours to drop.
  const bool lost =
      err != RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS || rd_kafka_assignment_lost(rk_.get()) != 0;
  for (auto& [topic, ps] : by_topic) {
    auto& t = *tracker(topic).second;
    if (!lost) (void)commit_partitions(topic, t.take_commits(ps), /*sync=*/true);
    for (auto p : ps) {
      const auto n = t.revoke(p);
      if (counters_ != nullptr) counters_->abandoned += static_cast<std::int64_t>(n);
    }
  }
  if (cooperative) {
    if (rd_kafka_error_t* e = rd_kafka_incremental_unassign(rk_.get(), parts))
      rd_kafka_error_destroy(e);
  } else {
    rd_kafka_assign(rk_.get(), nullptr);
  }
}

result<void> consumer::commit_partitions(
    const std::string& topic, const std::vector<std::pair<std::int32_t, std::int64_t>>& offs,
    bool sync) {
  if (offs.empty()) return {};
  auto l = list_of(topic, offs);
  if (counters_ != nullptr) ++counters_->commits;
  const rd_kafka_resp_err_t err = rd_kafka_commit(rk_.get(), l.get(), sync ? 0 : 1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NO_OFFSET) {
    return fail(kafka_error(err, "commit offsets of topic '" + topic + "'"));
  }
  return {};
}

result<void> consumer::commit(bool sync) {
  first_uncommitted_.reset();
  settled_since_commit_ = 0;
  std::optional<error_info> first;
  for (auto& [topic, t] : trackers_) {
    if (auto r = commit_partitions(topic, t.take_commits(), sync); !r && !first) first = r.error();
  }
  if (first) return fail(std::move(*first));
  return {};
}

bool consumer::commit_due(clock::time_point now) const {
  return first_uncommitted_ &&
         (settled_since_commit_ >= commit_batch_ || now - *first_uncommitted_ >= commit_interval_);
}

rd_kafka_message_t* consumer::next_message(int wait_ms) {
  if (!fetched_.empty()) return fetched_.take();
  const auto now = clock::now();
  // Runs only while a plain poll happened within the last second: rd_kafka_consumer_poll()
  // resets librdkafka's max.poll.interval.ms timer; that 2.0's batch consume does too is not
  // documented, and a slow handler over a full queue would otherwise never poll again.
  if (prefetch_ > 1 && now - last_poll_ < std::chrono::seconds(1)) {
    refilling_ = true;
    fetched_.refill(queue_, prefetch_);
    refilling_ = false;
    drop_revoked();
    if (!fetched_.empty()) return fetched_.take();
  }
  last_poll_ = now;
  return rd_kafka_consumer_poll(rk_.get(), wait_ms);
}

void consumer::drop_revoked() {
  // A rebalance served inside the call revoked these: their records in the run belong to the
  // old assignment (the new owner receives them from the committed offset).
  for (const auto& [topic, partition] : revoked_in_refill_) {
    fetched_.drop_partition(topic.c_str(), partition);
  }
  revoked_in_refill_.clear();
}

void consumer::keepalive_poll(clock::time_point now) {
  refilling_ = true;
  rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_.get(), 0);
  refilling_ = false;
  last_poll_ = now;
  drop_revoked();  // the polled record itself is current: librdkafka drops outdated ones
  if (m != nullptr) fetched_.append(m);
}

result<std::optional<received_message>> consumer::receive(std::chrono::milliseconds timeout) {
  if (closed_) return fail(transport_errc::closed, "kafka consumer is closed");
  // A record of the current run is handed out at once: no wait, so no deadline arithmetic
  // (one clock read, for the commit interval and the keep-alive poll).
  if (!fetched_.empty() && fetched_.peek()->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const auto now = clock::now();
    if (commit_due(now)) (void)commit(false);
    if (now - last_poll_ >= std::chrono::milliseconds(500)) keepalive_poll(now);
    if (!fetched_.empty() && fetched_.peek()->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      return std::optional<received_message>(hand_out(message_ptr(fetched_.take())));
    }
  }
  auto now = clock::now();
  const auto deadline = now + timeout;
  for (;;) {
    if (commit_due(now)) (void)commit(/*sync=*/false);  // a failure is logged by on_commit
    auto wait = deadline - now;
    if (first_uncommitted_) wait = std::min(wait, *first_uncommitted_ + commit_interval_ - now);
    const auto wait_ms = std::max<std::int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(wait).count(), 0);
    message_ptr m(next_message(static_cast<int>(wait_ms)));
    if (!m) {
      now = clock::now();
      if (now >= deadline) {
        if (commit_due(now)) (void)commit(false);
        return std::optional<received_message>();
      }
      continue;
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      now = clock::now();
      if (keeps_polling(m->err)) {
        if (now >= deadline) return std::optional<received_message>();
        continue;
      }
      return fail(kafka_error(m->err, "consume from '" + ctx_.name + "'"));
    }
    return std::optional<received_message>(hand_out(std::move(m)));
  }
}

received_message consumer::hand_out(message_ptr m) {
  if (m->rkt != last_rkt_) {
    last_rkt_ = m->rkt;
    last_tracker_ = tracker(rd_kafka_topic_name(m->rkt));
  }
  received_message out;
  out.queue = *last_tracker_.first;
  out.body.assign(static_cast<const char*>(m->payload), m->payload == nullptr ? 0 : m->len);
  record_handle h;
  h.source = this;
  h.topic = last_tracker_.first;
  h.tracker = last_tracker_.second;
  rd_kafka_timestamp_type_t tstype = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
  h.timestamp_ms = rd_kafka_message_timestamp(m.get(), &tstype);
  rd_kafka_headers_t* hdrs = nullptr;
  if (rd_kafka_message_headers(m.get(), &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const auto each = [hdrs](auto&& fn) {
      const char* name = nullptr;
      const void* value = nullptr;
      size_t size = 0;
      for (size_t i = 0;
           rd_kafka_header_get_all(hdrs, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
           ++i) {
        fn(std::string_view(name),
           std::string_view(static_cast<const char*>(value), value == nullptr ? 0 : size));
      }
    };
    auto read = read_headers_from(each);
    if (keep_raw_headers_) {
      each([&h](std::string_view n, std::string_view v) { h.raw_headers.emplace_back(n, v); });
    }
    out.hdrs = std::move(read.out_of_band);
    out.delivery_count = read.attempts;
    out.refused_schema_version = std::move(read.refused_schema_version);
    h.attempts_header = std::move(read.attempts_text);
  }
  h.ticket = h.tracker->track(m->partition, m->offset);
  out.handle = handles_->issue(std::move(h));
  if (counters_ != nullptr) ++counters_->received;
  return out;
}

result<void> consumer::settle(const record_handle& h) {
  if (!h.tracker->settle(h.ticket)) {
    return fail(transport_errc::unavailable,
                "kafka: partition " + std::to_string(h.ticket.partition) + " of '" + *h.topic +
                    "' was revoked (a rebalance) or the record already settled; its new owner "
                    "receives it again");
  }
  if (commit_interval_.count() == 0) return commit(/*sync=*/true);
  ++settled_since_commit_;
  if (!first_uncommitted_) first_uncommitted_ = clock::now();
  if (settled_since_commit_ >= commit_batch_) (void)commit(false);
  return {};
}

result<void> consumer::hold(const record_handle& h) {
  if (!h.tracker->rewind(h.ticket)) {
    return fail(transport_errc::unavailable, "kafka: partition revoked before the record was held");
  }
  // The partition is rewound to this record: its later records already taken come again.
  fetched_.drop_partition(h.topic->c_str(), h.ticket.partition);
  auto l = list_of(*h.topic, {{h.ticket.partition, h.ticket.offset}});
  if (auto err = rd_kafka_pause_partitions(rk_.get(), l.get()); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return fail(kafka_error(err, "pause a partition of '" + *h.topic + "'"));
  }
  if (rd_kafka_error_t* e = rd_kafka_seek_partitions(rk_.get(), l.get(), 5000)) {
    auto info = kafka_error(rd_kafka_error_code(e), "rewind a partition of '" + *h.topic + "'");
    rd_kafka_error_destroy(e);
    return fail(std::move(info));
  }
  return {};
}

void consumer::resume(const std::string& topic, std::int32_t partition) {
  auto l = list_of(topic, {{partition, RD_KAFKA_OFFSET_INVALID}});
  rd_kafka_resume_partitions(rk_.get(), l.get());
}

bool consumer::has_assignment() {
  rd_kafka_topic_partition_list_t* parts = nullptr;
  if (rd_kafka_assignment(rk_.get(), &parts) != RD_KAFKA_RESP_ERR_NO_ERROR || parts == nullptr)
    return false;
  const bool any = parts->cnt > 0;
  rd_kafka_topic_partition_list_destroy(parts);
  return any;
}

namespace {

// Milliseconds left until `deadline`, for librdkafka's int timeouts (0 when it passed).
int ms_until(std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds cap) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp(left, std::chrono::milliseconds(0), cap).count());
}

}  // namespace

void consumer::destroy_in_background(std::unique_ptr<consumer> c) noexcept {
  if (!c) return;
  c->ctx_.log.store(nullptr);
  c->counters_ = nullptr;
  try {
    std::thread([owned = std::move(c)]() mutable { owned.reset(); }).detach();
  } catch (...) {
    // No thread: the lambda, and the consumer it owned, were destroyed inline already.
  }
}

result<void> consumer::commit_by(std::chrono::steady_clock::time_point deadline) {
  first_uncommitted_.reset();
  settled_since_commit_ = 0;
  std::optional<error_info> first;
  for (auto& [topic, t] : trackers_) {
    const auto offs = t.take_commits();
    if (offs.empty()) continue;
    auto l = list_of(topic, offs);
    if (counters_ != nullptr) ++counters_->commits;
    // To a queue of our own: the commit's outcome arrives there as an event, waited for
    // until the deadline only (rd_kafka_commit's synchronous form waits for the broker).
    rd_kafka_queue_t* q = rd_kafka_queue_new(rk_.get());
    rd_kafka_resp_err_t err = rd_kafka_commit_queue(rk_.get(), l.get(), q, nullptr, nullptr);
    bool answered = err != RD_KAFKA_RESP_ERR_NO_ERROR;
    while (!answered) {
      const int wait = ms_until(deadline, std::chrono::milliseconds(100));
      if (rd_kafka_event_t* ev = rd_kafka_queue_poll(q, wait)) {
        if (rd_kafka_event_type(ev) == RD_KAFKA_EVENT_OFFSET_COMMIT) {
          err = rd_kafka_event_error(ev);
          answered = true;
        }
        rd_kafka_event_destroy(ev);
      }
      if (!answered && wait == 0) break;
    }
    rd_kafka_queue_destroy(q);
    if (!answered) {
      if (!first) {
        first = error_info(transport_errc::timeout,
                           "commit offsets of topic '" + topic +
                               "': no answer by the close deadline; settled records may be "
                               "delivered again");
      }
    } else if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NO_OFFSET && !first) {
      first = kafka_error(err, "commit offsets of topic '" + topic + "'");
    }
  }
  if (first) return fail(std::move(*first));
  return {};
}

result<void> consumer::close(std::chrono::steady_clock::time_point deadline) {
  if (closed_) return {};
  closed_ = true;
  fetched_.clear();  // never handed out, so never committed: the next owner receives them
  auto r = commit_by(deadline);
  // Leave the group on this thread first: unsubscribe, then serve the revoke from our own
  // polls until nothing is assigned (at most 5 s, and not past the deadline). Closing
  // straight away makes librdkafka's close run the revoke callback from inside its own
  // termination, where rd_kafka_assign(rk, NULL) was seen hanging under load (issue #10);
  // with the assignment already gone it has nothing left to revoke. A record fetched
  // meanwhile is dropped: it was never handed out, so never committed — the partition's
  // next owner receives it.
  if (rd_kafka_unsubscribe(rk_.get()) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const auto until =
        std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(5));
    while (has_assignment() && std::chrono::steady_clock::now() < until) {
      message_ptr dropped(
          rd_kafka_consumer_poll(rk_.get(), ms_until(until, std::chrono::milliseconds(50))));
    }
  }
  // Leaves the group (partitions move on) in the background, served here until it is done
  // or the deadline passes: a broker that stopped answering cannot hold close() longer. The
  // destructor then destroys the handle without a second close.
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk_.get());
  if (rd_kafka_error_t* e = rd_kafka_consumer_close_queue(rk_.get(), q)) {
    if (r) {
      r = fail(kafka_error(rd_kafka_error_code(e), "close the consumer of '" + ctx_.name + "'"));
    }
    rd_kafka_error_destroy(e);
  } else {
    while (rd_kafka_consumer_closed(rk_.get()) == 0) {
      const int wait = ms_until(deadline, std::chrono::milliseconds(100));
      if (rd_kafka_event_t* ev = rd_kafka_queue_poll(q, wait)) {
        // A revoke the close still delivers comes here as an event, not through the
        // rebalance callback: served the same way.
        if (rd_kafka_event_type(ev) == RD_KAFKA_EVENT_REBALANCE) {
          rebalance(rd_kafka_event_error(ev), rd_kafka_event_topic_partition_list(ev));
        }
        rd_kafka_event_destroy(ev);
      }
      if (wait == 0) break;
    }
    left_group_ = rd_kafka_consumer_closed(rk_.get()) != 0;
    if (!left_group_ && r) {
      r = fail(transport_errc::timeout, "close the consumer of '" + ctx_.name +
                                            "': the group did not answer by the deadline; it "
                                            "drops this member after its session timeout");
    }
  }
  rd_kafka_queue_destroy(q);
  for (auto& [topic, t] : trackers_) t.clear();
  return r;
}

}  // namespace babelqueue::inline v1::kafka::detail
