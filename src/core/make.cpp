// make() and continue_trace(): writing a fresh envelope straight into canonical text.
#include "envelope_access.hpp"
#include "json_scanner.hpp"

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
  result<void> write(std::string& out) const {
    if (value.is_null()) {
      out += "{}";
      return {};
    }
    if (auto r = write_canonical_json(value, out); !r) {
      return fail(r.error().code, "data: " + r.error().message);
    }
    return {};
  }
};

// `data` as JSON text, kept losslessly (D4 for produced messages): validated by the strict
// scanner and written in canonical form with every number's text unchanged.
struct text_data {
  std::string_view text;
  std::size_t size_hint() const { return text.size(); }
  static result<void> check() { return {}; }
  result<void> write(std::string& out) const {
    const std::size_t at = out.size();
    if (error_info e = detail::canonicalize_into(text, out, max_data_text_depth); e.code != errc::ok) {
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
  }
};

template <class Data>
result<envelope> build_fresh(std::string_view urn_in, const Data& data, std::string_view queue_in,
                             std::string_view trace_in) {
  using A = envelope_access;
  if (!detail::valid_utf8(urn_in)) return fail(errc::invalid_utf8, "URN is not valid UTF-8");
  std::string_view urn = trim_ascii(urn_in);  // producer side only (D3a)
  if (urn.empty()) return fail(errc::empty_urn, "a message needs a non-blank URN");
  if (auto r = data.check(); !r) return fail(r.error());
  std::string_view queue = queue_in.empty() ? default_queue : queue_in;
  if (!detail::valid_utf8(queue)) return fail(errc::invalid_utf8, "queue is not valid UTF-8");
  if (!detail::valid_utf8(trace_in)) return fail(errc::invalid_utf8, "trace_id is not valid UTF-8");
  std::string_view trace = trim_ascii(trace_in);

  envelope env;
  std::string& t = A::text(env);
  // Sized from the previous envelope this thread built, so a steady producer writes
  // without reallocating.
  t.reserve(std::max<std::size_t>(last_size_hint, 224) + urn.size() + queue.size() + trace.size() +
            data.size_hint());
  auto mark = [&](std::size_t from) { return A::make_span(from, t.size() - from); };
  auto& top = A::top(env);
  top.reserve(5);

  // {"job":"…","trace_id":"…","data":{…},"meta":{"id":"…","queue":"…","lang":"cpp",
  //  "schema_version":1,"created_at":N},"attempts":0}
  // `framed` is the key with its punctuation, `,"name":` (or `{"name":`), appended in one
  // go; the span marks the name alone.
  auto key = [&](std::string_view framed) {
    const std::size_t at = t.size() + 2;
    t.append(framed);
    return A::make_span(at, framed.size() - 4);
  };
  auto quoted = [&](std::string_view v, envelope_access::text_field* field) {
    t.push_back('"');
    std::size_t at = t.size();
    detail::escape_into(v, t);
    auto s = mark(at);
    t.push_back('"');
    if (s.length == v.size()) A::set_field_span(*field, s);  // nothing was escaped
    else A::set_field_owned(env, *field, std::string(v));
  };
  // A UUID needs no escaping: quotes and its 36 characters in one append.
  auto quoted_uuid = [&](envelope_access::text_field* field) {
    char id[38];
    id[0] = id[37] = '"';
    uuid_v4_into(id + 1);
    const std::size_t at = t.size() + 1;
    t.append(id, sizeof id);
    A::set_field_span(*field, A::make_span(at, 36));
  };

  auto k = key("{\"job\":");
  std::size_t v0 = t.size();
  quoted(urn, &A::urn(env));
  top.push_back({k, mark(v0)});

  k = key(",\"trace_id\":");
  v0 = t.size();
  if (trace.empty()) quoted_uuid(&A::trace_id(env));
  else quoted(trace, &A::trace_id(env));
  top.push_back({k, mark(v0)});

  k = key(",\"data\":");
  v0 = t.size();
  if (auto r = data.write(t); !r) return fail(r.error());
  top.push_back({k, mark(v0)});

  k = key(",\"meta\":");
  std::size_t meta_at = t.size();
  t.append("{\"id\":");
  quoted_uuid(&A::id(env));
  t.append(",\"queue\":");
  quoted(queue, &A::queue(env));
  t.append(",\"lang\":");
  quoted(lang_tag, &A::lang(env));
  t.append(",\"schema_version\":1,\"created_at\":");
  std::int64_t now = unix_millis();
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, now);
  t.append(buf, res.ptr);
  t.push_back('}');
  A::created_at(env) = now;
  top.push_back({k, mark(meta_at)});

  k = key(",\"attempts\":");
  v0 = t.size();
  t += '0';
  top.push_back({k, mark(v0)});
  t.push_back('}');
  A::attempts(env) = 0;
  A::set_produced(env);
  A::reindex(env);
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
