#include "rabbitmq/message.hpp"

#include <charconv>
#include <limits>
#include <variant>

namespace babelqueue::inline v1::rabbitmq::detail {

wire_properties::wire_properties(const bindings::rabbitmq::properties& source) {
  auto& p = props;
  p._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_CONTENT_ENCODING_FLAG |
             AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_APP_ID_FLAG;
  p.content_type = bytes_of(source.content_type);
  p.content_encoding = bytes_of(source.content_encoding);
  p.delivery_mode = source.delivery_mode;
  p.app_id = bytes_of(source.app_id);
  if (source.type) {
    p._flags |= AMQP_BASIC_TYPE_FLAG;
    p.type = bytes_of(*source.type);
  }
  if (source.correlation_id) {
    p._flags |= AMQP_BASIC_CORRELATION_ID_FLAG;
    p.correlation_id = bytes_of(*source.correlation_id);
  }
  if (source.message_id) {
    p._flags |= AMQP_BASIC_MESSAGE_ID_FLAG;
    p.message_id = bytes_of(*source.message_id);
  }
  if (source.headers.empty()) return;
  entries.reserve(source.headers.size());
  for (const auto& [name, value] : source.headers) {
    amqp_table_entry_t e{};
    e.key = bytes_of(name);
    if (const auto* n = std::get_if<std::int64_t>(&value)) {
      // Signed 32-bit `I` when it fits (as Go and pika write it), else 64-bit `l`.
      if (*n >= std::numeric_limits<std::int32_t>::min() &&
          *n <= std::numeric_limits<std::int32_t>::max()) {
        e.value.kind = AMQP_FIELD_KIND_I32;
        e.value.value.i32 = static_cast<std::int32_t>(*n);
      } else {
        e.value.kind = AMQP_FIELD_KIND_I64;
        e.value.value.i64 = *n;
      }
    } else {
      e.value.kind = AMQP_FIELD_KIND_UTF8;
      e.value.value.bytes = bytes_of(std::get<std::string>(value));
    }
    entries.push_back(e);
  }
  p._flags |= AMQP_BASIC_HEADERS_FLAG;
  p.headers.num_entries = static_cast<int>(entries.size());
  p.headers.entries = entries.data();
}

namespace {

std::optional<std::int64_t> integer_of(const amqp_field_value_t& v) {
  switch (v.kind) {
    case AMQP_FIELD_KIND_I8:
      return v.value.i8;
    case AMQP_FIELD_KIND_U8:
      return v.value.u8;
    case AMQP_FIELD_KIND_I16:
      return v.value.i16;
    case AMQP_FIELD_KIND_U16:
      return v.value.u16;
    case AMQP_FIELD_KIND_I32:
      return v.value.i32;
    case AMQP_FIELD_KIND_U32:
      return v.value.u32;
    case AMQP_FIELD_KIND_I64:
      return v.value.i64;
    case AMQP_FIELD_KIND_U64:
    case AMQP_FIELD_KIND_TIMESTAMP:
      if (v.value.u64 > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return std::numeric_limits<std::int64_t>::max();
      }
      return static_cast<std::int64_t>(v.value.u64);
    default:
      return std::nullopt;
  }
}

std::optional<std::string> text_of(const amqp_field_value_t& v) {
  if (auto n = integer_of(v)) {
    if (v.kind == AMQP_FIELD_KIND_U64 && v.value.u64 > static_cast<std::uint64_t>(*n)) {
      return std::to_string(v.value.u64);
    }
    return std::to_string(*n);
  }
  switch (v.kind) {
    case AMQP_FIELD_KIND_UTF8:
    case AMQP_FIELD_KIND_BYTES:
      return std::string(view_of(v.value.bytes));
    case AMQP_FIELD_KIND_BOOLEAN:
      return std::string(v.value.boolean != 0 ? "true" : "false");
    case AMQP_FIELD_KIND_F32:
      return std::to_string(v.value.f32);
    case AMQP_FIELD_KIND_F64:
      return std::to_string(v.value.f64);
    case AMQP_FIELD_KIND_DECIMAL: {
      // value × 10^-decimals, written exactly.
      const std::string digits = std::to_string(v.value.decimal.value);
      const std::size_t places = v.value.decimal.decimals;
      if (places == 0) return digits;
      // Built by appends (insert() into the digits makes GCC 12 at -O3 warn: -Wrestrict, a
      // false positive).
      const std::size_t zeros = digits.size() <= places ? places - digits.size() + 1 : 0;
      const std::size_t whole = digits.size() + zeros - places;  // digits before the point
      std::string padded(zeros, '0');
      padded.append(digits);
      std::string out;
      out.reserve(padded.size() + 1);
      out.append(padded, 0, whole);
      out += '.';
      out.append(padded, whole);
      return out;
    }
    default:
      return std::nullopt;  // table, array, void
  }
}

// What RabbitMQ adds when it dead-letters a message (a delayed publish's wait queue does,
// on expiry): `x-death` (an array of tables, which text_of() leaves out anyway) and the
// `x-first-death-*` / `x-last-death-*` (RabbitMQ >= 3.13) strings. Broker annotations, not
// headers a publisher sent: surfacing them would break the byte-exact header round trip of a
// delayed publish, and release() would republish them as headers of its own.
bool is_dead_letter_annotation(std::string_view key) {
  return key == "x-death" || key.starts_with("x-first-death-") || key.starts_with("x-last-death-");
}

std::optional<std::int64_t> parse_integer(std::string_view s) {
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return n;
}

}  // namespace

received_headers read_headers(const amqp_basic_properties_t& props) {
  received_headers out;
  if ((props._flags & AMQP_BASIC_HEADERS_FLAG) == 0) return out;
  for (int i = 0; i < props.headers.num_entries; ++i) {
    const amqp_table_entry_t& e = props.headers.entries[i];
    const std::string_view key = view_of(e.key);
    if (key == bindings::rabbitmq::header_attempts) {
      out.attempts = integer_of(e.value);
      if (!out.attempts &&
          (e.value.kind == AMQP_FIELD_KIND_UTF8 || e.value.kind == AMQP_FIELD_KIND_BYTES)) {
        out.attempts = parse_integer(view_of(e.value.value.bytes));
      }
    }
    if (bindings::rabbitmq::is_contract_header(key) || is_dead_letter_annotation(key)) continue;
    if (auto text = text_of(e.value)) out.out_of_band.insert_or_assign(std::string(key), *text);
  }
  return out;
}

}  // namespace babelqueue::inline v1::rabbitmq::detail
