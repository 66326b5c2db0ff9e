// pulsar::Result → transport_errc. Transient conditions the client could not ride out
// (connection, lookup, a broker busy or restarting) are `unavailable`, so callers and the App
// retry them; the rest say what the caller must change.
#include "pulsar/errors.hpp"

namespace babelqueue::inline v1::pulsar::detail {

transport_errc errc_of(::pulsar::Result r) noexcept {
  using R = ::pulsar::Result;
  switch (r) {
    case R::ResultTimeout:
      return transport_errc::timeout;
    case R::ResultAuthenticationError:
    case R::ResultAuthorizationError:
    case R::ResultErrorGettingAuthenticationData:
      return transport_errc::permission;
    case R::ResultMessageTooBig:
      return transport_errc::too_large;
    case R::ResultTopicNotFound:
    case R::ResultSubscriptionNotFound:
    case R::ResultConsumerNotFound:
      return transport_errc::not_found;
    case R::ResultInvalidConfiguration:
    case R::ResultInvalidTopicName:
    case R::ResultInvalidUrl:
    case R::ResultInvalidMessage:
    case R::ResultCryptoError:
      return transport_errc::invalid_argument;
    case R::ResultConsumerBusy:
    case R::ResultTopicTerminated:
    case R::ResultIncompatibleSchema:
    case R::ResultNotAllowedError:
    case R::ResultProducerBlockedQuotaExceededError:
    case R::ResultProducerBlockedQuotaExceededException:
    case R::ResultProducerFenced:
    case R::ResultOperationNotSupported:
    case R::ResultUnsupportedVersionError:
    case R::ResultCumulativeAcknowledgementNotAllowedError:
      return transport_errc::refused;
    default:
      // Connect/read/lookup errors, a service unit moving, not connected, queue or memory
      // full, disconnected, interrupted, the broker's own unknown or persistence errors.
      return transport_errc::unavailable;
  }
}

error_info pulsar_error(::pulsar::Result r, const std::string& what) {
  const char* text = ::pulsar::strResult(r);
  return error_info(errc_of(r), "pulsar " + what + ": " + text, {},
                    native_error{"pulsar", static_cast<std::int64_t>(r), text});
}

}  // namespace babelqueue::inline v1::pulsar::detail
