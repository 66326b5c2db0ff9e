// The AMQP 1.0 client's links (client_impl.hpp): sending and the tracker outcomes, receiving
// and settling deliveries, the CBS token exchange, and the Proton events that drive them.
#include "amqp10/cbs_reply.hpp"
#include "amqp10/client_impl.hpp"

namespace babelqueue::inline v1::amqp10 {

namespace {

// Proton C++ 0.37 has no public way from a proton::delivery to its pn_delivery_t, and its
// delivery::modify() does not set delivery-failed (wire-brokers §4.5): reach the protected
// accessor through a derived class (never instantiated). Applying a pointer to a base's
// member function to a derived object is well-defined; GCC 12 at -O2 and above still warns
// that it type-puns (-Wstrict-aliasing, a false positive: no object is read through another
// type), hence the local suppression.
struct delivery_access : proton::delivery {
  static pn_delivery_t* raw(const proton::delivery& d) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-aliasing"
    return (d.*(&delivery_access::pn_object))();
#pragma GCC diagnostic pop
  }
};

void settle_modified_failed(const proton::delivery& d) {
  pn_delivery_t* pd = delivery_access::raw(d);
  pn_disposition_set_failed(pn_delivery_local(pd), true);
  pn_delivery_update(pd, PN_MODIFIED);
  pn_delivery_settle(pd);
}

void settle_rejected(const proton::delivery& d, const settlement& how) {
  pn_delivery_t* pd = delivery_access::raw(d);
  if (!how.condition.empty()) {
    pn_condition_t* c = pn_disposition_condition(pn_delivery_local(pd));
    pn_condition_set_name(c, how.condition.c_str());
    if (!how.description.empty()) pn_condition_set_description(c, how.description.c_str());
    if (!how.info.empty()) {
      pn_data_t* info = pn_condition_info(c);
      pn_data_put_map(info);
      pn_data_enter(info);
      for (const auto& [k, v] : how.info) {
        pn_data_put_symbol(info, pn_bytes(k.size(), k.data()));
        pn_data_put_string(info, pn_bytes(v.size(), v.data()));
      }
      pn_data_exit(info);
    }
  }
  pn_delivery_update(pd, PN_REJECTED);
  pn_delivery_settle(pd);
}

proton::binary tag_of(std::uint64_t n) {
  proton::binary b(sizeof n, 0);
  std::memcpy(b.data(), &n, sizeof n);
  return b;
}

std::uint64_t tag_value(const proton::binary& b) {
  std::uint64_t n = 0;
  if (b.size() == sizeof n) std::memcpy(&n, b.data(), sizeof n);
  return n;
}

}  // namespace

void client::impl::complete(const std::shared_ptr<send_op>& op, error_info error) {
  if (op->done) return;
  op->done = true;
  op->error = std::move(error);
}

void client::impl::fail_queued_sends(const error_info& why) {
  for (auto& [address, link] : senders_) {
    for (auto& op : link.queue) complete(op, why);
    link.queue.clear();
  }
}

void client::impl::open_sender(const std::string& address, out_link& link) {
  proton::sender_options so;
  so.delivery_mode(proton::delivery_mode::AT_LEAST_ONCE);
  so.target(proton::target_options().address(address).capabilities(capabilities()));
  link.sender = conn_.open_sender(address, so);
  link.open = false;
}

void client::impl::open_receiver(inbox_slot& slot) {
  const std::string& address = slot.address;
  proton::receiver_options ro;
  ro.auto_accept(false);
  ro.credit_window(0);  // credit is given back per settled message (see do_settle)
  ro.delivery_mode(proton::delivery_mode::AT_LEAST_ONCE);
  ro.source(proton::source_options().address(address).capabilities(capabilities()));
  slot.link = conn_.open_receiver(address, ro);
  slot.link.add_credit(config.prefetch);
}

void client::impl::pump(const std::string& address, out_link& link) {
  if (!link.open || !link.sender) return;
  while (!link.queue.empty() && link.sender.credit() > 0) {
    auto op = link.queue.front();
    if (op->next == 0 && (op->abandoned || op->done)) {
      link.queue.pop_front();
      continue;
    }
    const std::uint64_t tag = ++next_tag_;
    link.sender.send(op->messages[op->next], tag_of(tag));
    op->messages[op->next] = proton::message();  // sent: free its body now
    ++op->next;
    in_flight_[tag] = flight{op, address};
    if (op->next == op->messages.size()) link.queue.pop_front();
  }
}

void client::impl::do_send(const std::string& address, const std::shared_ptr<send_op>& op) {
  auto& link = senders_[address];
  link.queue.push_back(op);
  if (state_ != state::up) return;  // run_until connects
  if (!link.sender) open_sender(address, link);
  pump(address, link);
}

client::impl::inbox_slot& client::impl::slot_for(std::string_view address) {
  if (last_slot_ != nullptr && last_slot_->address == address) return *last_slot_;
  auto it = slots_.find(address);
  if (it == slots_.end()) {
    it = slots_.emplace(std::string(address), std::make_unique<inbox_slot>(std::string(address)))
             .first;
  }
  return *(last_slot_ = it->second.get());
}

void client::impl::attach(inbox_slot& slot) {
  slot.wanted = true;
  receivers_[slot.address] = &slot;
  if (state_ == state::up && !slot.link) open_receiver(slot);
}

void client::impl::do_settle(const delivery_ref& ref, const settlement& how) {
  if (ref.connection != generation_ || state_ != state::up) return;
  auto it = deliveries_.find(ref.id);
  if (it == deliveries_.end()) return;
  proton::delivery d = it->second.delivery;  // (a counted handle with no move: a copy)
  inbox_slot* slot = it->second.slot;
  deliveries_.erase(it);
  switch (how.how) {
    case outcome::accept:
      d.accept();
      break;
    case outcome::modified_failed:
      settle_modified_failed(d);
      break;
    case outcome::release:
      d.release();
      break;
    case outcome::reject:
      settle_rejected(d, how);
      break;
  }
  if (slot->link) slot->link.add_credit(1);
  ++unflushed_settles_;
  if (slot->inbox.empty() || unflushed_settles_ >= settle_run_) flush();
}

void client::impl::on_connection_open(proton::connection& c) {
  if (!current(c)) return;
  if (config.cbs) {
    state_ = state::authorizing;  // entity links wait for the token (wire-brokers §2.6)
    open_cbs();
    return;
  }
  became_up(c);
}

void client::impl::became_up(proton::connection&) {
  state_ = state::up;
  ++generation_;
  live_generation_ = generation_;
  backoff_.succeeded();
  connect_error_.reset();
  {
    std::lock_guard lk(stats_m_);
    ++stats_.connects;
  }
  for (auto& [address, slot] : receivers_) open_receiver(*slot);
  for (auto& [address, link] : senders_) {
    if (!link.queue.empty()) open_sender(address, link);
  }
}

void client::impl::open_cbs() {
  proton::sender_options so;
  so.delivery_mode(proton::delivery_mode::AT_LEAST_ONCE);
  so.target(proton::target_options().address(cbs_address));
  cbs_sender_ = conn_.open_sender(cbs_address, so);
  proton::receiver_options ro;
  ro.auto_accept(false);
  ro.credit_window(0);
  ro.source(proton::source_options().address(cbs_address));
  // Replies come on the link whose target is the requests' reply-to.
  ro.target(proton::target_options().address(cbs_address));
  cbs_receiver_ = conn_.open_receiver(cbs_address, ro);
  cbs_receiver_.add_credit(16);
  put_token();
}

void client::impl::put_token() {
  cbs_want_send_ = true;
  if (cbs_sender_ && cbs_sender_.credit() > 0) send_put_token();
}

void client::impl::send_put_token() {
  cbs_want_send_ = false;
  auto token = config.cbs->make_token();
  if (!token) {
    cbs_failed(token.error());
    return;
  }
  // Unique across clients: on a broker where $cbs is multicast every client sees every
  // reply, and matches its own by this id.
  cbs_request_id_ = uuid_v4();
  proton::message m;
  m.id(proton::message_id(cbs_request_id_));
  m.reply_to(cbs_address);
  m.properties().put("operation", std::string("put-token"));
  m.properties().put("type", config.cbs->token_type);
  m.properties().put("name", config.cbs->audience);
  m.body(*token);  // an amqp-value string
  cbs_sender_.send(m);
}

void client::impl::on_cbs_reply(proton::delivery& d, const proton::message& m) {
  d.accept();
  cbs_receiver_.add_credit(1);
  const cbs_reply reply = read_cbs_reply(m, cbs_request_id_);
  if (!reply.answers_request)
    return;  // not a reply to us (e.g. our own, echoed by a multicast $cbs)
  cbs_request_id_.clear();
  const std::int64_t status = reply.status;
  const std::string& description = reply.description;
  if (reply.accepted) {
    {
      std::lock_guard lk(stats_m_);
      ++stats_.tokens_put;
    }
    cbs_renew_at_ = clock::now() + config.cbs->renew_every;
    if (state_ == state::authorizing) {
      proton::connection c = conn_;
      became_up(c);
    }
    return;
  }
  cbs_failed(error_info(
      status == 401 || status == 403 ? transport_errc::permission : transport_errc::refused,
      config.name + ": the broker refused the CBS token for '" + config.cbs->audience +
          "': status " + std::to_string(status) + (description.empty() ? "" : " " + description),
      {}, native_error{"cbs", status, description}));
}

void client::impl::cbs_failed(error_info why) {
  proton::connection stale = conn_;
  lost(std::move(why));
  try {
    if (stale) stale.close();
  } catch (const std::exception&) {
  }
}

void client::impl::on_sender_open(proton::sender& s) {
  if (cbs_sender_ && s == cbs_sender_) return;
  auto it = senders_.find(s.target().address());
  if (it == senders_.end() || !(it->second.sender == s)) return;
  it->second.open = true;
  pump(it->first, it->second);
}

void client::impl::on_sendable(proton::sender& s) {
  if (cbs_sender_ && s == cbs_sender_) {
    if (cbs_want_send_) send_put_token();
    return;
  }
  auto it = senders_.find(s.target().address());
  if (it == senders_.end() || !(it->second.sender == s)) return;
  it->second.open = true;
  pump(it->first, it->second);
}

std::optional<client::impl::flight> client::impl::take_flight(const proton::tracker& t) {
  auto it = in_flight_.find(tag_value(t.tag()));
  if (it == in_flight_.end()) return std::nullopt;
  flight f = std::move(it->second);
  in_flight_.erase(it);
  return f;
}

void client::impl::on_tracker_accept(proton::tracker& t) {
  auto f = take_flight(t);
  if (!f) return;
  {
    std::lock_guard lk(stats_m_);
    ++stats_.accepted;
  }
  if (++f->op->accepted == f->op->messages.size()) succeed(f->op);
}

void client::impl::on_tracker_reject(proton::tracker& t) {
  if (auto f = take_flight(t)) {
    complete(f->op,
             error_info(transport_errc::refused,
                        config.name + ": the broker rejected the message on '" + f->address + "'"));
  }
}

void client::impl::on_tracker_release(proton::tracker& t) {
  if (auto f = take_flight(t)) {
    complete(f->op, error_info(transport_errc::refused,
                               config.name + ": the broker released the message on '" + f->address +
                                   "' without storing it"));
  }
}

void client::impl::on_tracker_settle(proton::tracker& t) {
  if (auto f = take_flight(t)) {  // settled with no outcome we know
    complete(f->op, error_info(transport_errc::refused,
                               config.name + ": the broker settled the message on '" + f->address +
                                   "' without accepting it"));
  }
}

void client::impl::on_message(proton::delivery& d, proton::message& m) {
  proton::receiver r = d.receiver();
  if (cbs_receiver_ && r == cbs_receiver_) {
    on_cbs_reply(d, m);
    return;
  }
  inbox_slot* slot = slot_of(r);
  if (slot == nullptr) {  // not a receiver of ours (any more): the broker redelivers it
    d.release();
    return;
  }
  const std::uint64_t id = ++next_delivery_;
  deliveries_.emplace(id, held_delivery{d, slot});
  {
    std::lock_guard lk(stats_m_);
    ++stats_.delivered;
  }
  inbound& in = slot->inbox.emplace_back();
  if (!spare_.empty()) {
    swap(in.message, spare_.back());  // the spare's buffers go to Proton below
    spare_.pop_back();
  }
  swap(in.message, m);
  in.ref = delivery_ref{id, generation_};
}

client::impl::inbox_slot* client::impl::slot_of(const proton::receiver& r) {
  if (last_rx_ != nullptr && last_rx_->link == r) return last_rx_;
  for (auto& [address, slot] : receivers_) {
    if (slot->link == r) return last_rx_ = slot;
  }
  return nullptr;
}

void client::impl::link_failed(const std::string& address, bool sender,
                               const proton::error_condition& c) {
  error_info why = from_condition(c, config.name,
                                  (sender ? "sending to '" : "receiving from '") + address + "'");
  if (sender) {
    auto it = senders_.find(address);
    if (it == senders_.end()) return;
    for (auto& op : it->second.queue) complete(op, why);
    for (auto f = in_flight_.begin(); f != in_flight_.end();) {
      if (f->second.address == address) {
        complete(f->second.op, why);
        f = in_flight_.erase(f);
      } else {
        ++f;
      }
    }
    senders_.erase(it);
  } else {
    if (auto it = receivers_.find(address); it != receivers_.end()) {
      it->second->link = proton::receiver();
      it->second->wanted = false;  // the next receive() attaches it again
      receivers_.erase(it);
    }
    receiver_errors_[address] = why;
  }
}

void client::impl::on_sender_error(proton::sender& s) {
  if (cbs_sender_ && s == cbs_sender_) {
    cbs_failed(from_condition(s.error(), config.name, "the CBS link"));
    return;
  }
  const std::string address = s.target().address();
  auto it = senders_.find(address);
  if (it != senders_.end() && it->second.sender == s) link_failed(address, true, s.error());
}

void client::impl::on_sender_close(proton::sender& s) {
  const std::string address = s.target().address();
  auto it = senders_.find(address);
  if (it != senders_.end() && it->second.sender == s && !closing_) {
    link_failed(address, true,
                proton::error_condition("amqp:link:detach-forced", "the broker closed the link"));
  }
}

void client::impl::on_receiver_error(proton::receiver& r) {
  if (cbs_receiver_ && r == cbs_receiver_) {
    cbs_failed(from_condition(r.error(), config.name, "the CBS link"));
    return;
  }
  const std::string address = r.source().address();
  auto it = receivers_.find(address);
  if (it != receivers_.end() && it->second->link == r) link_failed(address, false, r.error());
}

void client::impl::on_receiver_close(proton::receiver& r) {
  const std::string address = r.source().address();
  auto it = receivers_.find(address);
  if (it != receivers_.end() && it->second->link == r && !closing_) {
    link_failed(address, false,
                proton::error_condition("amqp:link:detach-forced", "the broker closed the link"));
  }
}

void client::impl::on_transport_error(proton::transport& t) {
  if (!current(t.connection())) return;
  lost(from_condition(t.error(), config.name,
                      "connection to " + config.host + ":" + std::to_string(config.port)));
}

void client::impl::on_connection_error(proton::connection& c) {
  if (!current(c)) return;
  lost(from_condition(c.error(), config.name,
                      "connection to " + config.host + ":" + std::to_string(config.port)));
}

void client::impl::on_transport_close(proton::transport& t) {
  if (closing_ || !current(t.connection())) return;
  lost(error_info(transport_errc::unavailable, config.name + ": connection closed"));
}

}  // namespace babelqueue::inline v1::amqp10
