// The handler's message view (message.hpp).
#include <babelqueue/runtime/message.hpp>

namespace babelqueue {
inline namespace v1 {

const json& message::data() const {
  if (!data_) data_ = env_.data().value();  // throws babelqueue::error on out-of-range numbers
  return *data_;
}

const json& message::meta() const {
  if (!meta_) meta_ = env_.meta().value();
  return *meta_;
}

std::optional<std::string_view> message::header(std::string_view name) const {
  auto it = delivery_.hdrs.find(name);
  if (it == delivery_.hdrs.end()) return std::nullopt;
  return std::string_view(it->second);
}

bool message::is_replay() const noexcept {
  auto it = delivery_.hdrs.find(replay_bypass_header);
  return it != delivery_.hdrs.end() && !it->second.empty();
}

result<std::string> message::publish(std::string_view urn, const json& data,
                                     const continue_publish_options& options) const {
  if (publisher_ == nullptr) {
    return fail(transport_errc::closed,
                "this message has no publisher (it outlived its handler call)");
  }
  return publisher_->publish_continuing(*this, urn, data, options);
}

}  // namespace v1
}  // namespace babelqueue
