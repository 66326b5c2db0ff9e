// The scheme -> transport factory registry (url.hpp).
#include "core/propagate.hpp"

#include <babelqueue/runtime/url.hpp>
#include <babelqueue/text.hpp>

#include <mutex>

namespace babelqueue {
inline namespace v1 {
namespace {

struct registry {
  std::mutex mutex;
  std::map<std::string, transport_factory, std::less<>> factories;
};

registry& the_registry() {
  static registry r;  // function-local: safe to use from static initialisers
  return r;
}

}  // namespace

void register_transport(std::string scheme, transport_factory factory) {
  scheme = ascii_lower(scheme);
  auto& r = the_registry();
  std::lock_guard lock(r.mutex);
  r.factories[std::move(scheme)] = std::move(factory);
}

std::vector<std::string> registered_schemes() {
  auto& r = the_registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> out;
  for (const auto& [k, v] : r.factories) out.push_back(k);
  return out;
}

result<std::unique_ptr<transport>> open_transport(const broker_url& url) {
  transport_factory factory;
  {
    auto& r = the_registry();
    std::lock_guard lock(r.mutex);
    if (auto it = r.factories.find(url.scheme); it != r.factories.end()) factory = it->second;
  }
  if (!factory) {
    std::string known;
    for (const auto& s : registered_schemes()) known += (known.empty() ? "" : ", ") + s;
    return fail(runtime_errc::unknown_scheme,
                "no transport registered for '" + url.scheme +
                    "://' (registered: " + (known.empty() ? std::string("none") : known) + ")");
  }
  // Run the factory outside the lock: it may connect to a broker.
  return factory(url);
}

result<std::unique_ptr<transport>> open_transport(std::string_view url) {
  BABELQUEUE_TRY_LET(parsed, broker_url::parse(url));
  return open_transport(*parsed);
}

}  // namespace v1
}  // namespace babelqueue
