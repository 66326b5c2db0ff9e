#pragma once
// The Pulsar client's logging, routed to set_client_log_sink() (pulsar_transport.hpp).
#include <pulsar/Logger.h>

namespace babelqueue::inline v1::pulsar::detail {

/// A factory for ClientConfiguration::setLogger (which takes ownership): its loggers forward
/// to the process-wide sink. The client keeps the first factory set in a process; every
/// factory made here behaves the same, so which one it keeps does not matter.
::pulsar::LoggerFactory* new_logger_factory();

}  // namespace babelqueue::inline v1::pulsar::detail
