#pragma once
// The one validation of pulsar::options, shared by options_from_url() and open(), and the
// names of the enumerated option values.
#include <babelqueue/pulsar/pulsar_transport.hpp>

#include <optional>
#include <string_view>

namespace babelqueue::inline v1::pulsar::detail {

/// transport_errc::invalid_argument with a reason when `o` cannot be used.
result<void> validate(const options& o);

/// `shared`, `key_shared`, `failover`, `exclusive` (also Pulsar's spellings `Shared`,
/// `Key_Shared`, ... in any letter case), or nullopt.
std::optional<subscription_kind> subscription_kind_of(std::string_view text);

}  // namespace babelqueue::inline v1::pulsar::detail
