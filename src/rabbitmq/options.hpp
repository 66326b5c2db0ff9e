#pragma once
// The one validation of rabbitmq options: options_from_url() and rabbitmq_transport::open()
// both call it, so options built in code get the same rules and messages as a URL.
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>

namespace babelqueue::inline v1::rabbitmq::detail {

result<void> validate(const options& o);

}  // namespace babelqueue::inline v1::rabbitmq::detail
