// make() and continue_trace(): writing a fresh envelope straight into canonical text.
#include "core/propagate.hpp"
#include "envelope_access.hpp"
#include "json_scanner.hpp"
#include "output_cursor.hpp"
#include "string_writer.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/dead_letter.hpp>
#include <babelqueue/text.hpp>
#include <babelqueue/uuid.hpp>

#include <algorithm>
#include <charconv>

namespace babelqueue {
inline namespace v1 {
namespace {

thread_local std::size_t last_size_hint = 0;

// `data` as a json value: an object, or null for `{}`.
struct json_data {
  const json& value;
  static std::size_t size_hint() { return 0; }
  result<void> check() const {
    if (!value.is_object() && !value.is_null()) {
      return fail(errc::invalid_data, "data must be a JSON object");
    }
    return {};
  }
  result<void> write(detail::output_cursor& out) const {
    if (value.is_null()) {
      out.put("{}", 2);
      return {};
    }
    if (auto r = detail::write_canonical_json_to(value, out); !r) {
      return fail(r.error().code, "data: " + r.error().message);
    }
    return {};
  }
};

// Data given as JSON text: validated and canonicalized (numbers keep their text, D4).
struct text_data {
  std::string_view text;
  std::size_t size_hint() const { return text.size(); }
  static result<void> check() { return {}; }
  result<void> write(detail::output_cursor& cursor) const {
    return cursor.with_string([&](std::string& out) -> result<void> {
      const std::size_t at = out.size();
      if (error_info e = detail::canonicalize_into(text, out, max_data_text_depth);
          e.code != errc::ok) {
        return fail(e.code, "data: " + e.message);
      }
      const std::string_view written(out.data() + at, out.size() - at);
      if (written == "[]") {  // PHP's empty payload, read as {} (as decode() reads it, D3)
        out.resize(at);
        out += "{}";
        return {};
      }
      if (written.front() != '{') {
        return fail(errc::invalid_data, "data must be a JSON object (or [] for an empty one)");
      }
      return {};
    });
  }
};

// The 36 characters of a fresh UUIDv4 between quotes, 38 bytes in all.
void write_quoted_uuid(char* at) {
  at[0] = at[37] = '"';
  uuid_v4_into(at + 1);
}

template <std::size_t N>
void put_literal(detail::output_cursor& out, const char (&text)[N]) {
  out.put(text, N - 1);
}

template <class Data>
result<envelope> build_fresh(std::string_view urn_in, const Data& data, std::string_view queue_in,
                             std::string_view trace_in) {
  using A = envelope_access;
  // The URN and the trace id are checked for UTF-8 while they are escaped below (trimming
  // removes ASCII blanks only, so the trimmed text is valid exactly when the whole one is).
  // When several checks fail, the caller gets the first of: URN not UTF-8, blank URN, data
  // not an object, queue not UTF-8, trace id not UTF-8, then anything inside data.
  std::string_view urn = trim_ascii(urn_in);  // producer side only (D3a)
  std::string_view queue = queue_in.empty() ? default_queue : queue_in;
  std::string_view trace = trim_ascii(trace_in);
  envelope env;
  std::string& t = A::text(env);
  // One allocation, usually the last: sized like the previous envelope of this thread (a
  // producer's messages are alike) plus what this one's strings add.
  t.reserve(std::max<std::size_t>(last_size_hint, 224) + urn.size() + queue.size() + trace.size() +
            data.size_hint());
  auto& top = A::top(env);
  top.reserve(5);
  int data_index = -1, meta_index = -1, attempts_index = -1;
  {
    // The whole text goes through one cursor: raw stores after one room check per token.
    detail::output_cursor out(t);
    auto mark = [&](std::size_t from) { return A::make_span(from, out.offset() - from); };
    // Adds a top-level member (key span, value from `from` to here); returns its index.
    auto member = [&](A::span k, std::size_t from) {
      top.push_back({k, mark(from)});
      return static_cast<int>(top.size() - 1);
    };
    // `framed` is `,"key":` (or `{"key":`): the span is the key without its quotes.
    auto key = [&](std::string_view framed) {
      const std::size_t at = out.offset() + 2;
      out.put(framed.data(), framed.size());
      return A::make_span(at, framed.size() - 4);
    };
    // A string value: a span of the text when nothing needed escaping, else its own copy.
    // False when `v` is not valid UTF-8.
    auto quoted = [&](std::string_view v, envelope_access::text_field* field) {
      const std::size_t at = out.offset() + 1;
      if (!detail::write_json_string(out, v.data(), v.size(), false)) return false;
      const auto s = A::make_span(at, out.offset() - 1 - at);
      if (s.length == v.size())
        A::set_field_span(*field, s);
      else
        A::set_field_owned(env, *field, std::string(v));
      return true;
    };
    auto quoted_uuid = [&](envelope_access::text_field* field) {
      const std::size_t at = out.offset() + 1;
      char* d = out.room(38);
      write_quoted_uuid(d);
      out.commit(d + 38);
      A::set_field_span(*field, A::make_span(at, 36));
    };

    auto k = key("{\"job\":");
    std::size_t v0 = out.offset();
    if (!quoted(urn, &A::urn(env))) return fail(errc::invalid_utf8, "URN is not valid UTF-8");
    if (urn.empty()) return fail(errc::empty_urn, "a message needs a non-blank URN");
    member(k, v0);
    BABELQUEUE_TRY(data.check());
    if (!detail::valid_utf8(queue)) return fail(errc::invalid_utf8, "queue is not valid UTF-8");

    k = key(",\"trace_id\":");
    v0 = out.offset();
    if (trace.empty())
      quoted_uuid(&A::trace_id(env));
    else if (!quoted(trace, &A::trace_id(env)))
      return fail(errc::invalid_utf8, "trace_id is not valid UTF-8");
    member(k, v0);

    k = key(",\"data\":");
    v0 = out.offset();
    BABELQUEUE_TRY(data.write(out));
    data_index = member(k, v0);

    k = key(",\"meta\":");
    const std::size_t meta_at = out.offset();
    put_literal(out, "{\"id\":");
    quoted_uuid(&A::id(env));
    put_literal(out, ",\"queue\":");
    quoted(queue, &A::queue(env));  // checked above
    // lang_tag needs no escaping: written as it stands.
    static_assert(lang_tag == "cpp");
    put_literal(out, ",\"lang\":\"");
    const std::size_t lang_at = out.offset();
    put_literal(out, "cpp\",\"schema_version\":1,\"created_at\":");
    A::set_field_span(A::lang(env), A::make_span(lang_at, lang_tag.size()));
    const std::int64_t now = unix_millis();
    char* d = out.room(24);
    out.commit(std::to_chars(d, d + 24, now).ptr);
    out.put('}');
    A::created_at(env) = now;
    meta_index = member(k, meta_at);

    k = key(",\"attempts\":");
    v0 = out.offset();
    out.put('0');
    attempts_index = member(k, v0);
    out.put('}');
  }  // the cursor gives the text its true size
  A::attempts(env) = 0;
  A::set_produced(env);
  A::set_indices(env, data_index, meta_index, attempts_index, -1);
  A::set_pristine(env);
  last_size_hint = t.size();
  return env;
}

template <class Data>
result<envelope> guarded(std::string_view urn, const Data& data, std::string_view queue,
                         std::string_view trace) {
  try {
    return build_fresh(urn, data, queue, trace);
  } catch (const std::bad_alloc&) {
    return fail(errc::invalid_argument, "out of memory while building the envelope");
  }
}

}  // namespace

result<envelope> make(std::string_view urn, const json& data, const make_options& options) {
  return guarded(urn, json_data{data}, options.queue, options.trace_id);
}

result<envelope> make(std::string_view urn, json_text data, const make_options& options) {
  return guarded(urn, text_data{data.text()}, options.queue, options.trace_id);
}

result<envelope> continue_trace(const envelope& inbound, std::string_view urn, const json& data,
                                const continue_options& options) {
  return guarded(urn, json_data{data}, options.queue, inbound.trace_id());
}

result<envelope> continue_trace(const envelope& inbound, std::string_view urn, json_text data,
                                const continue_options& options) {
  return guarded(urn, text_data{data.text()}, options.queue, inbound.trace_id());
}

}  // namespace v1
}  // namespace babelqueue
