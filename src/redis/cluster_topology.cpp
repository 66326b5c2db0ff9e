#include "redis/cluster_topology.hpp"

#include "redis/cluster_slot.hpp"
#include "redis/errors.hpp"

#include <hiredis/hiredis.h>

#include <charconv>

namespace babelqueue::inline v1::redis::detail {

namespace {

template <class Int>
bool to_int(std::string_view text, Int& out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && p == text.data() + text.size() && !text.empty();
}

}  // namespace

std::optional<cluster_redirect> parse_redirect(std::string_view text) {
  cluster_redirect r;
  // A script whose command touched a key the node does not have while its slot migrates
  // (the declared keys passed the check; a key the script creates or empties did not): the
  // command failed and the script stopped there. Retried like TRYAGAIN (see
  // cluster_engine.hpp for what had already run).
  if (text.starts_with("TRYAGAIN") ||
      text.starts_with("ERR Script attempted to access a non local key")) {
    return r;
  }
  if (text.starts_with("CLUSTERDOWN")) {
    r.what = cluster_redirect::kind::cluster_down;
    return r;
  }
  if (text.starts_with("MOVED ")) {
    r.what = cluster_redirect::kind::moved;
    text.remove_prefix(6);
  } else if (text.starts_with("ASK ")) {
    r.what = cluster_redirect::kind::ask;
    text.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const auto space = text.find(' ');
  if (space == std::string_view::npos || !to_int(text.substr(0, space), r.slot) ||
      r.slot >= k_cluster_slots) {
    return std::nullopt;
  }
  const std::string_view address = text.substr(space + 1);
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos || !to_int(address.substr(colon + 1), r.target.port) ||
      r.target.port == 0) {
    return std::nullopt;
  }
  std::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  r.target.host.assign(host);
  return r;
}

void cluster_slots_op::compose(request& req, script_shas) {
  ok_ = false;
  ranges.clear();
  req.push({"CLUSTER", "SLOTS"}, {0});
}

// [[first, last, [host, port, id, ...], replica...], ...]. A range whose primary has no
// usable address is skipped: its slots stay unknown and are asked for again.
void cluster_slots_op::on_reply(const command_meta&, const redisReply& reply) {
  if (reply.type != REDIS_REPLY_ARRAY) return;
  ok_ = true;
  for (std::size_t i = 0; i < reply.elements; ++i) {
    const redisReply* e = reply.element[i];
    if (e == nullptr || e->type != REDIS_REPLY_ARRAY || e->elements < 3) continue;
    const redisReply* first = e->element[0];
    const redisReply* last = e->element[1];
    const redisReply* node = e->element[2];
    if (first->type != REDIS_REPLY_INTEGER || last->type != REDIS_REPLY_INTEGER ||
        node->type != REDIS_REPLY_ARRAY || node->elements < 2 ||
        node->element[0]->type != REDIS_REPLY_STRING ||
        node->element[1]->type != REDIS_REPLY_INTEGER) {
      continue;
    }
    if (first->integer < 0 || last->integer < first->integer || last->integer >= k_cluster_slots ||
        node->element[1]->integer <= 0 || node->element[1]->integer > 65535) {
      continue;
    }
    slot_range r;
    r.first = static_cast<std::uint16_t>(first->integer);
    r.last = static_cast<std::uint16_t>(last->integer);
    r.primary.host.assign(node->element[0]->str, node->element[0]->len);
    if (r.primary.host == "?") r.primary.host.clear();  // unknown endpoint: the node asked
    r.primary.port = static_cast<std::uint16_t>(node->element[1]->integer);
    ranges.push_back(std::move(r));
  }
}

next_step cluster_slots_op::finish(std::optional<error_info>& error) {
  if (!error && !ok_)
    error = redis_error(fault::unexpected_reply, "redis CLUSTER SLOTS failed", "unexpected reply");
  return next_step::done;
}

}  // namespace babelqueue::inline v1::redis::detail
