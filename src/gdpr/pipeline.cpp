// The producer/consumer steps: validate → protect and unprotect → validate, in spec order.
#include <babelqueue/gdpr/pipeline.hpp>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {
namespace {

// Maps any exception of seal() to a publish() result (publish never throws).
template <class Fn>
result<std::string> guarded(Fn&& fn) {
  try {
    return fn();
  } catch (const babelqueue::error& e) {
    return babelqueue::fail(e.info());  // gdpr failures keep their own codes and path
  }
}

}  // namespace

pipeline::pipeline(std::shared_ptr<const schema::provider> schemas, std::shared_ptr<const cipher> c)
    : state_(std::make_shared<state>()) {
  if (!schemas || !c)
    throw_error({errc::invalid_argument, "pipeline needs a schema provider and a cipher", {}, {}});
  state_->schemas = std::move(schemas);
  state_->crypto = std::move(c);
}

pipeline::cached_plan pipeline::lookup(std::string_view urn) const {
  auto found = state_->schemas->find(urn);
  if (!found) throw babelqueue::error(found.error());
  schema::schema_ptr doc = std::move(*found);
  if (!doc) return {};
  {
    std::lock_guard lock(state_->mutex);
    const auto it = state_->plans.find(urn);
    // The provider may hand out a reloaded schema; the cached plan is only valid for its own.
    if (it != state_->plans.end() && it->second.schema == doc) return it->second;
  }
  auto plan = field_plan::build(doc->raw());
  if (!plan) {
    auto info = plan.error();
    info.message = "schema of \"" + std::string(urn) + "\": " + info.message;
    throw_error(std::move(info));
  }
  cached_plan entry{doc, std::make_shared<const field_plan>(std::move(*plan))};
  std::lock_guard lock(state_->mutex);
  state_->plans.insert_or_assign(std::string(urn), entry);
  return entry;
}

json pipeline::seal(std::string_view urn, const json& data) const {
  const auto entry = lookup(urn);
  if (!entry.schema) return data;
  const auto report = entry.schema->validate(data);
  if (!report.ok()) throw schema::invalid_payload_error(std::string(urn), report);
  json out = data;
  protect(out, *entry.plan, *state_->crypto).value();
  return out;
}

json pipeline::open(std::string_view urn, const json& data) const {
  const auto entry = lookup(urn);
  if (!entry.schema) return data;
  json out = data;
  unprotect(out, *entry.plan, *state_->crypto).value();
  const auto report = entry.schema->validate(out);
  if (!report.ok()) throw schema::invalid_payload_error(std::string(urn), report);
  return out;
}

result<std::string> pipeline::publish(app& a, std::string_view urn, const json& data,
                                      const publish_options& options) const {
  return guarded([&]() -> result<std::string> { return a.publish(urn, seal(urn, data), options); });
}

result<std::string> pipeline::publish(message& inbound, std::string_view urn, const json& data,
                                      const continue_publish_options& options) const {
  return guarded(
      [&]() -> result<std::string> { return inbound.publish(urn, seal(urn, data), options); });
}

handler pipeline::wrap(cleartext_handler fn) const {
  return [self = *this, fn = std::move(fn)](message& msg) {
    const json clear = self.open(msg.urn(), msg.data());
    fn(msg, clear);
  };
}

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
