#pragma once
/// @file bindings/sqs.hpp
/// @brief The Amazon SQS binding as pure functions: the projection of a publish onto native
/// `MessageAttributes`, attempts reconciliation with `ApproximateReceiveCount`, the
/// `bq-schema-version` gate, SQS queue-name rules and the dead-letter-queue name mapping.
/// No I/O, no HTTP: the transport (babelqueue::sqs) copies these onto JSON requests.
///
/// What a publish carries (spec "Broker bindings → Amazon SQS", CONF
/// `sqs.attribute_projection`, wire-brokers §1.1):
///  - `MessageBody`: the envelope JSON, byte-identical;
///  - `MessageAttributes`, each `{DataType, StringValue}` and left out when its source is
///    empty: `bq-job` (String, the URN), `bq-trace-id` (String), `bq-message-id` (String,
///    `meta.id`), `bq-schema-version` (Number "1"), `bq-source-lang` (String, `meta.lang`),
///    `bq-created-at` (Number, epoch ms);
///  - out-of-band headers (`traceparent`, `tracestate`, `bq-replay-bypass`, ...) as extra
///    String attributes named like the header, merged as every peer does: blank names or
///    values skipped, a contract `bq-*` name never overwritten, header names in byte order,
///    and none once the message holds SQS's limit of 10 attributes. An attribute name SQS
///    refuses (characters outside `[A-Za-z0-9_.-]`, a leading `AWS.`/`Amazon.` or `.`,
///    `..`, a trailing `.`, more than 256 characters) is skipped too: sending it would make
///    SQS refuse the whole message.
///  - FIFO queues (`.fifo`): `MessageGroupId` (configured, else the queue name) and
///    `MessageDeduplicationId` = `meta.id` (fifo_ids()).
///
/// Consume: `attempts = max(body, ApproximateReceiveCount − 1)`; a count that is absent, not
/// a number, or ≤ 1 keeps the body's (CONF `sqs.attempts_reconciliation`). The
/// `bq-schema-version` attribute is checked before the body is decoded (wire-brokers §1.6,
/// java-sqs 1.2.1): present, not blank and not exactly "1" refuses the message.
///
/// Dead-letter names (wire-brokers §1.7): SQS names allow only `[A-Za-z0-9_-]` (plus the
/// `.fifo` suffix of FIFO queues), so the contract's `<queue>.dlq` cannot exist on real
/// SQS. native_queue_name() maps a logical name ending in `.dlq` to `<queue>-dlq`
/// (`<queue>-dlq.fifo` for a FIFO queue, whose DLQ must be FIFO too) — what the Python SDK
/// 1.24 uses — or to a configured suffix or fixed name. Every other name is used as given.
///
/// @note Thread-safety: every function is pure, reentrant and thread-safe. Header-only so
/// the conformance runner can use it with babelqueue::core alone.

#include <babelqueue/codec.hpp>
#include <babelqueue/export/core.hpp>
#include <babelqueue/headers.hpp>
#include <babelqueue/text.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace bindings::sqs {

inline constexpr std::string_view attribute_job = "bq-job";
inline constexpr std::string_view attribute_trace_id = "bq-trace-id";
inline constexpr std::string_view attribute_message_id = "bq-message-id";
inline constexpr std::string_view attribute_schema_version = "bq-schema-version";
inline constexpr std::string_view attribute_source_lang = "bq-source-lang";
inline constexpr std::string_view attribute_created_at = "bq-created-at";
inline constexpr std::string_view type_string = "String";
inline constexpr std::string_view type_number = "Number";
/// The system attribute requested (under both field names) on every receive.
inline constexpr std::string_view receive_count_attribute = "ApproximateReceiveCount";

/// SQS's hard limit of message attributes per message.
inline constexpr std::size_t max_attributes = 10;
/// SQS's longest queue name, `.fifo` included.
inline constexpr std::size_t max_queue_name = 80;
/// The longest message attribute name.
inline constexpr std::size_t max_attribute_name = 256;
/// The suffix the contract gives dead-letter queues, and this binding's default mapping.
inline constexpr std::string_view contract_dead_letter_suffix = ".dlq";
inline constexpr std::string_view default_dead_letter_suffix = "-dlq";
inline constexpr std::string_view fifo_suffix = ".fifo";
/// The longest FIFO MessageGroupId / MessageDeduplicationId.
inline constexpr std::size_t max_fifo_id = 128;

/// One `MessageAttributes` entry: `"<name>": {"DataType": ..., "StringValue": ...}`.
struct BABELQUEUE_CORE_EXPORT attribute {
  std::string name;
  std::string data_type;
  std::string string_value;
  friend bool operator==(const attribute&, const attribute&) = default;
};

/// True for the attribute names the binding owns: never taken from out-of-band headers.
inline bool is_contract_attribute(std::string_view name) {
  return name == attribute_job || name == attribute_trace_id || name == attribute_message_id ||
         name == attribute_schema_version || name == attribute_source_lang ||
         name == attribute_created_at;
}

/// A message attribute name SQS accepts (SQS MessageAttributeValue rules).
inline bool is_valid_attribute_name(std::string_view name) {
  if (name.empty() || name.size() > max_attribute_name) return false;
  if (name.front() == '.' || name.back() == '.') return false;
  if (name.find("..") != std::string_view::npos) return false;
  auto starts_ci = [&](std::string_view prefix) {
    return name.size() >= prefix.size() && equals_ascii_ci(name.substr(0, prefix.size()), prefix);
  };
  if (starts_ci("aws.") || starts_ci("amazon.")) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

/// The `MessageAttributes` of a publish of `body` with out-of-band headers `oob` (sanitised
/// here, see the file comment). Never fails: a body that does not decode (a poison body
/// dead-lettered unchanged) gets the out-of-band headers only.
inline std::vector<attribute> project(std::string_view body, const headers& oob = {}) {
  std::vector<attribute> out;
  if (auto env = decode(body)) {
    auto add = [&](std::string_view name, std::string_view type, std::string value) {
      if (!value.empty()) out.push_back({std::string(name), std::string(type), std::move(value)});
    };
    add(attribute_job, type_string, std::string(env->urn()));
    add(attribute_trace_id, type_string, std::string(env->trace_id()));
    add(attribute_message_id, type_string, std::string(env->id()));
    add(attribute_schema_version, type_number, std::to_string(env->schema_version()));
    add(attribute_source_lang, type_string, std::string(env->lang()));
    if (const auto created = env->created_at()) {
      add(attribute_created_at, type_number, std::to_string(*created));
    }
  }
  // headers is an ordered map: its iteration order is the byte order the peers merge in.
  for (const auto& [k, v] : oob) {
    if (out.size() >= max_attributes) break;
    if (is_blank(k) || is_blank(v) || is_contract_attribute(k) || !is_valid_attribute_name(k)) {
      continue;
    }
    out.push_back({k, std::string(type_string), v});
  }
  return out;
}

/// The out-of-band headers of a received message: every attribute's StringValue by name,
/// except the contract ones (which the body carries).
inline headers headers_from_attributes(const std::vector<attribute>& attributes) {
  headers h;
  for (const auto& a : attributes) {
    if (is_contract_attribute(a.name) || is_blank(a.name) || a.string_value.empty()) continue;
    h.emplace(a.name, a.string_value);
  }
  return h;
}

/// `ApproximateReceiveCount` as a number: decimal digits only (as Go and Python parse it;
/// no sign, no blanks), nullopt for anything else or a value outside int64.
inline std::optional<std::int64_t> receive_count_of(std::string_view text) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || text.front() == '-' || ec != std::errc() ||
      end != text.data() + text.size()) {
    return std::nullopt;
  }
  return n;
}

/// `attempts = max(body, ApproximateReceiveCount − 1)`: an absent count or one ≤ 1 keeps
/// the body's count, which is never lowered.
inline std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                       std::optional<std::int64_t> receive_count) {
  if (!receive_count || *receive_count <= 1) return body_attempts;
  return std::max(body_attempts, *receive_count - 1);
}

/// The same, from the raw attribute text (absent = nullopt).
inline std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                       std::optional<std::string_view> receive_count) {
  return reconcile_attempts(body_attempts,
                            receive_count ? receive_count_of(*receive_count) : std::nullopt);
}

/// The `bq-schema-version` gate (wire-brokers §1.6): a message may be decoded when the
/// attribute is absent or blank (ASCII space, TAB, LF, VT, FF, CR only), or exactly "1" —
/// no trimming, so "01", " 1" and "2" are refused.
inline bool schema_version_accepted(std::optional<std::string_view> value) {
  if (!value) return true;
  const bool blank = std::all_of(value->begin(), value->end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
  });
  return blank || *value == "1";
}

/// True for a FIFO queue name (`.fifo` suffix).
inline bool is_fifo(std::string_view queue) {
  return queue.size() > fifo_suffix.size() && queue.ends_with(fifo_suffix);
}

/// A queue name real SQS accepts: 1..80 characters of `[A-Za-z0-9_-]`, plus the `.fifo`
/// suffix (counted in the 80) for FIFO queues.
inline bool is_valid_queue_name(std::string_view name) {
  if (name.empty() || name.size() > max_queue_name) return false;
  std::string_view stem = is_fifo(name) ? name.substr(0, name.size() - fifo_suffix.size()) : name;
  if (stem.empty()) return false;
  return std::all_of(stem.begin(), stem.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

/// How the contract's dead-letter names (`<queue>.dlq`) become SQS names.
struct BABELQUEUE_CORE_EXPORT dead_letter_mapping {
  /// Appended to the source queue's name (before `.fifo`): `orders` → `orders-dlq`,
  /// `jobs.fifo` → `jobs-dlq.fifo`. Empty = no mapping (names are used as given).
  std::string suffix{default_dead_letter_suffix};
  /// When set, every `<queue>.dlq` is this one queue instead (`.fifo` is not added).
  std::string queue;
};

/// The SQS queue name of a logical queue name: a name ending in `.dlq` (the contract's
/// dead-letter queue of `<queue>`) is mapped by `mapping`; every other name is unchanged.
inline std::string native_queue_name(std::string_view logical,
                                     const dead_letter_mapping& mapping = {}) {
  if (!logical.ends_with(contract_dead_letter_suffix) ||
      logical.size() == contract_dead_letter_suffix.size()) {
    return std::string(logical);
  }
  if (!mapping.queue.empty()) return mapping.queue;
  if (mapping.suffix.empty()) return std::string(logical);
  std::string_view source = logical.substr(0, logical.size() - contract_dead_letter_suffix.size());
  if (is_fifo(source)) {
    source.remove_suffix(fifo_suffix.size());
    return std::string(source) + mapping.suffix + std::string(fifo_suffix);
  }
  return std::string(source) + mapping.suffix;
}

/// FIFO identity of a publish: `MessageGroupId` and `MessageDeduplicationId`.
struct BABELQUEUE_CORE_EXPORT fifo_ids {
  std::string group_id;
  /// Empty when the body has no usable `meta.id` (the queue must then use content-based
  /// deduplication, or SQS refuses the send).
  std::string deduplication_id;
};

/// The FIFO ids of a publish of `body` to `queue`: the configured group (else the queue
/// name, as Go and Python do) and `meta.id` (≤ 128 characters, else none).
inline fifo_ids fifo_ids_for(std::string_view queue, std::string_view body,
                             std::string_view configured_group = {}) {
  fifo_ids ids;
  ids.group_id = std::string(configured_group.empty() ? queue : configured_group);
  if (auto env = decode(body); env && !env->id().empty() && env->id().size() <= max_fifo_id) {
    ids.deduplication_id = std::string(env->id());
  }
  return ids;
}

}  // namespace bindings::sqs
}  // namespace v1
}  // namespace babelqueue
