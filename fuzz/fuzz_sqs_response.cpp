// Fuzz target: what the sqs:// transport reads from a server it does not trust (src/sqs/;
// target babelqueue::sqs): the input is an HTTP response body. It goes through the
// ReceiveMessage parser, the batch-outcome reader (SendMessageBatch, DeleteMessageBatch,
// ChangeMessageVisibilityBatch) and the error-code reader exactly as api.cpp does, then every
// received message through the binding (headers, receive count, schema gate) as
// sqs_transport.cpp does; and, as a request body, through the JSON string writer.
//
// Invariants:
//  - nothing crashes or throws: a broken answer is a typed error;
//  - a parsed message has a non-empty receipt handle; its headers never hold a contract
//    `bq-*` name; reconcile_attempts never lowers the body's count;
//  - a batch response yields one outcome per entry sent, each either sent or with a code
//    (an entry the server did not mention is never taken as sent);
//  - the error code never contains '#' (the namespace of `__type` or of the header is cut);
//  - a text SQS accepts (sqs_text_problem() is empty) written by append_json_string()
//    parses back with nlohmann to the same bytes.
#include "fuzz_check.hpp"
#include "sqs/api.hpp"
#include "sqs/json_text.hpp"

#include <babelqueue/bindings/sqs.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sd = babelqueue::sqs::detail;
namespace bs = babelqueue::bindings::sqs;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  babelqueue::json body = babelqueue::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!body.is_discarded()) {
    auto messages = sd::parse_receive_response(body);
    if (messages) {
      for (const auto& m : *messages) {
        FUZZ_CHECK(!m.receipt_handle.empty(), "a message without a receipt handle was accepted");
        const auto hdrs = bs::headers_from_attributes(m.attributes);
        for (const auto& [k, v] : hdrs) {
          FUZZ_CHECK(!bs::is_contract_attribute(k), "a contract attribute became a header");
          FUZZ_CHECK(!v.empty(), "an empty header value");
        }
        std::optional<std::int64_t> count;
        if (m.receive_count) count = bs::receive_count_of(*m.receive_count);
        FUZZ_CHECK(bs::reconcile_attempts(7, count) >= 7, "reconcile lowered the body's attempts");
        for (const auto& a : m.attributes) (void)bs::schema_version_accepted(a.string_value);
        (void)bs::project(m.body, hdrs);
      }
    }
    for (const std::size_t n : {std::size_t{1}, std::size_t{10}}) {
      auto outcomes = sd::batch_outcomes(body, n, "SendMessageBatch");
      FUZZ_CHECK(outcomes && outcomes->size() == n, "a batch response lost entries");
      for (const auto& o : *outcomes) {
        FUZZ_CHECK(!(o.ok && !o.code.empty()), "an entry both sent and failed");
      }
      std::size_t mentioned = 0;
      for (const char* list : {"Successful", "Failed"}) {
        if (body.is_object() && body.contains(list) && body[list].is_array()) {
          mentioned += body[list].size();
        }
      }
      std::size_t sent = 0;
      for (const auto& o : *outcomes) sent += o.ok ? 1 : 0;
      FUZZ_CHECK(sent <= mentioned, "an entry the server did not mention was taken as sent");
    }
    const std::string code = sd::sqs_error_code(body, input.substr(0, 64));
    (void)sd::errc_of_sqs_error(400, code);
    FUZZ_CHECK(code.find('#') == std::string::npos, "the `__type` namespace was not cut off");
  }
  if (!sd::sqs_text_problem(input)) {
    std::string out;
    sd::append_json_string(out, input);
    babelqueue::json back = babelqueue::json::parse(out, nullptr, false);
    FUZZ_CHECK(back.is_string(), "an escaped SQS text is not a JSON string");
    FUZZ_CHECK(back.get<std::string>() == input, "an escaped SQS text did not round-trip");
  }
  return 0;
}
