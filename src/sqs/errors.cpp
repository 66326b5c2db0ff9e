// SQS errors -> transport_errc (errors.hpp).
#include "sqs/errors.hpp"

#include <algorithm>
#include <initializer_list>

namespace babelqueue::inline v1::sqs::detail {

transport_errc errc_of_sqs_error(long status, std::string_view code) {
  auto is = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), code) != names.end();
  };
  if (is({"QueueDoesNotExist", "NonExistentQueue", "AWS.SimpleQueueService.NonExistentQueue"})) {
    return transport_errc::not_found;
  }
  if (is({"AccessDenied", "AccessDeniedException", "InvalidClientTokenId", "SignatureDoesNotMatch",
          "MissingAuthenticationToken", "IncompleteSignature", "UnrecognizedClientException",
          "ExpiredToken", "InvalidSecurity", "RequestExpired", "KmsAccessDenied",
          "KmsInvalidKeyUsage", "KmsDisabled", "KmsNotFound", "KmsInvalidState",
          "OptInRequired"})) {
    return transport_errc::permission;
  }
  if (is({"ThrottlingException", "Throttling", "RequestThrottled", "ServiceUnavailable",
          "InternalError", "InternalFailure", "KmsThrottled", "KmsOptInRequired",
          "ServiceUnavailableException"})) {
    return transport_errc::unavailable;
  }
  if (is({"MessageTooLong", "BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong"})) {
    return transport_errc::too_large;
  }
  if (is({"UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation"})) {
    return transport_errc::not_supported;
  }
  if (is({"InvalidParameterValue", "InvalidParameterValueException", "MissingParameter",
          "InvalidAttributeName", "InvalidAttributeValue", "InvalidMessageContents",
          "ReceiptHandleIsInvalid", "InvalidIdFormat", "TooManyEntriesInBatchRequest",
          "BatchEntryIdsNotDistinct", "EmptyBatchRequest", "InvalidBatchEntryId", "InvalidAddress",
          "MalformedQueryString", "ValidationError", "SerializationException",
          "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
          "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"})) {
    return transport_errc::invalid_argument;
  }
  if (status >= 500 || status == 429) return transport_errc::unavailable;
  if (status == 401 || status == 403) return transport_errc::permission;
  if (status == 404) return transport_errc::not_found;
  if (status == 413) return transport_errc::too_large;
  return transport_errc::refused;
}

}  // namespace babelqueue::inline v1::sqs::detail
