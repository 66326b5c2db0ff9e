// decode() / check() / encode(): the strict envelope gate (D3) and lossless re-emit (D4).
#include "core/propagate.hpp"
#include "envelope_access.hpp"
#include "json_scanner.hpp"
#include "shared_helpers.hpp"
#include "small_vector.hpp"
// Last on purpose: with the classifiers declared after the scanner's inline functions (as
// when they were defined here) GCC 12 -O3 emits the decoder instruction for instruction as
// before the split; included first, it inlined differently (scan_frame grew 109 bytes).
#include "envelope_keys.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/text.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <forward_list>
#include <new>
#include <type_traits>
#include <unordered_set>

namespace babelqueue {
inline namespace v1 {
namespace {

using detail::json_reader;
using detail::number_scan;
using detail::string_scan;

// One member of the root object or of `meta`, as scanned (views into the body).
// Trivial on purpose (no default member initialisers): scan_object_members() sets every
// field it later reads; `str`/`num` are read only when `kind` says they were filled.
struct scanned_member {
  string_scan key;
  std::string_view unescaped_key;  // set only when key.has_escapes
  // The key's value. Not a copied field: copying key.raw right after scan_string() stored it
  // (a 16-byte load over two 8-byte stores) stalled on store forwarding, ~15 cycles a member.
  std::string_view key_plain() const noexcept { return key.has_escapes ? unescaped_key : key.raw; }
  const char* value_begin;
  const char* value_end;
  char kind;  // '"' string, '0' number, '{' object, '[' array, 't' 'f' 'n'
  key_id id;
  bool empty_array;
  string_scan str;
  number_scan num;
};

using member_list = detail::small_vector<scanned_member, 12>;

struct frame_scan {
  member_list top;
  member_list meta;
  // Keys that carried escapes (rare). A forward_list: stable addresses and, unlike
  // std::deque, no allocation while empty.
  std::forward_list<std::string> escaped_keys;
  int last_top[k_count];
  int last_meta[k_count];
  std::uint32_t other_keys = 0;  // unclassified members, top and meta together
  bool duplicates = false;
  bool forbidden = false;
  bool urn_from_job = false;
  bool canonical = false;  // the body is compact and every string canonically escaped
  std::int64_t attempts = 0;
  frame_scan() {
    std::fill(std::begin(last_top), std::end(last_top), -1);
    std::fill(std::begin(last_meta), std::end(last_meta), -1);
  }
};

// Duplicate keys among the unclassified ("other") members.
bool has_duplicate_other_keys(const member_list& members) {
  std::size_t others = 0;
  for (const auto& m : members) others += m.id == k_other ? 1 : 0;
  if (others < 2) return false;
  if (others <= 32) {
    for (std::size_t i = 1; i < members.size(); ++i) {
      if (members[i].id != k_other) continue;
      for (std::size_t j = 0; j < i; ++j)
        if (members[j].id == k_other && members[i].key_plain() == members[j].key_plain())
          return true;
    }
    return false;
  }
  std::unordered_set<std::string_view> seen;
  seen.reserve(others);
  for (const auto& m : members)
    if (m.id == k_other && !seen.insert(m.key_plain()).second) return true;
  return false;
}

// Scans one value of a member, keeping what the frame needs to know about it.
bool scan_member_value(json_reader& r, scanned_member& m) {
  r.skip_ws();
  m.value_begin = r.pos();
  char c = r.peek();
  bool ok = true;
  if (c == '"') {
    m.kind = '"';
    ok = r.scan_string(m.str);
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    m.kind = '0';
    ok = r.scan_number(m.num);
  } else {
    m.kind = c == 0 ? '?' : c;
    ok = r.skip_value();
    if (ok && c == '[') {
      // `[]` (possibly with inner white space) is the PHP empty payload (D3).
      std::string_view v(m.value_begin, static_cast<std::size_t>(r.pos() - m.value_begin));
      m.empty_array = v.find_first_not_of("[] \t\r\n") == std::string_view::npos;
    }
  }
  m.value_end = r.pos();
  return ok;
}

// A key the decoder classifies, written plainly: `"<key>":` with no escape and no white
// space before the colon, as every peer writes them. Its id and the length of that text
// (quotes and colon included), or length 0 when the text at `p` (an opening quote) is
// anything else; the general string scan and the classifier then decide.
struct key_match {
  key_id id;
  std::uint8_t length;
};

template <std::size_t N>
bool literal_at(const char* p, const char* end, const char (&literal)[N]) noexcept {
  return static_cast<std::size_t>(end - p) >= N - 1 && std::memcmp(p, literal, N - 1) == 0;
}

key_match match_top_key(const char* p, const char* end) noexcept {
  if (end - p < 2) return {k_other, 0};
  switch (p[1]) {
    case 'j':
      if (literal_at(p, end, "\"job\":")) return {k_job, 6};
      break;
    case 't':
      if (literal_at(p, end, "\"trace_id\":")) return {k_trace_id, 11};
      break;
    case 'd':
      if (literal_at(p, end, "\"data\":")) return {k_data, 7};
      break;
    case 'm':
      if (literal_at(p, end, "\"meta\":")) return {k_meta, 7};
      break;
    case 'a':
      if (literal_at(p, end, "\"attempts\":")) return {k_attempts, 11};
      break;
    default:
      break;
  }
  return {k_other, 0};
}

key_match match_meta_key(const char* p, const char* end) noexcept {
  if (end - p < 2) return {k_other, 0};
  switch (p[1]) {
    case 'i':
      if (literal_at(p, end, "\"id\":")) return {k_id, 5};
      break;
    case 'q':
      if (literal_at(p, end, "\"queue\":")) return {k_queue, 8};
      break;
    case 'l':
      if (literal_at(p, end, "\"lang\":")) return {k_lang, 7};
      break;
    case 's':
      if (literal_at(p, end, "\"schema_version\":")) return {k_schema_version, 17};
      break;
    case 'c':
      if (literal_at(p, end, "\"created_at\":")) return {k_created_at, 13};
      break;
    default:
      break;
  }
  return {k_other, 0};
}

// Scans `{...}` members one level deep into `out`; `root` selects the key classifier and
// descends into `meta`.
// The position lives in a local (a register) and is handed to the reader only around its
// out-of-line steps: the reader's member, stored and reloaded around every token, put a
// store-forwarding round trip on each token's critical path. Plain known keys, strings
// without escapes and numbers are read here; everything else goes through the reader, so
// every rule and error message is the reader's.
bool scan_object_members(json_reader& r, member_list& out, bool root, frame_scan& f) {
  if (!r.consume('{')) return r.fail(root ? "top-level value is not an object" : "expected '{'");
  if (!r.enter()) return false;
  int* last = root ? f.last_top : f.last_meta;
  r.skip_ws();
  if (r.consume('}')) {
    r.leave();
    return true;
  }
  const char* p = r.pos();
  const char* const end = r.end();
  auto ws = [&] {
    if (p < end && static_cast<unsigned char>(*p) <= 0x20) {
      r.seek(p);
      r.skip_ws();
      p = r.pos();
    }
  };
  auto fail_at = [&](const char* at, const char* what) {
    r.seek(at);
    return r.fail(what);
  };
  // The reader scans the value at p (its rules and errors); p follows it.
  auto value_by_reader = [&](scanned_member& m) {
    r.seek(p);
    const bool ok = scan_member_value(r, m);
    p = r.pos();
    return ok;
  };
  for (;;) {
    ws();
    if (p == end || *p != '"') return fail_at(p, "expected a string key");
    scanned_member& m = out.emplace_back();
    m.empty_array = false;
    m.kind = 0;
    if (const key_match known = root ? match_top_key(p, end) : match_meta_key(p, end);
        known.length != 0) {
      m.key.raw = std::string_view(p + 1, known.length - 3u);
      m.key.has_escapes = false;
      m.key.canonical = true;
      m.id = known.id;
      p += known.length;
    } else {
      r.seek(p);
      if (!r.scan_string(m.key)) return false;
      p = r.pos();
      if (m.key.has_escapes) {
        std::string plain;
        detail::unescape_into(m.key.raw, plain);
        f.escaped_keys.push_front(std::move(plain));
        m.unescaped_key = f.escaped_keys.front();
      }
      m.id = root ? classify_top(m.key_plain()) : classify_meta(m.key_plain());
      ws();
      if (p == end || *p != ':') return fail_at(p, "expected ':' after a key");
      ++p;
    }
    ws();
    const char c = p < end ? *p : '\0';
    if (c == '"') {
      bool canonical = true;
      const auto run = json_reader::scan_string_run(p + 1, end, canonical);
      if (run.closed) {
        m.kind = '"';
        m.value_begin = p;
        m.str.raw = std::string_view(p + 1, static_cast<std::size_t>(run.at - (p + 1)));
        m.str.has_escapes = false;
        m.str.canonical = canonical;
        if (!canonical) r.mark_not_canonical();
        p = run.at + 1;
        m.value_end = p;
      } else if (!value_by_reader(m)) {  // an escape, a control byte, or near the end
        return false;
      }
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      bool integer;
      const char* why;
      const char* after = json_reader::scan_number_run(p, end, integer, why);
      if (why != nullptr) return fail_at(after, why);
      m.kind = '0';
      m.value_begin = p;
      m.num.text = std::string_view(p, static_cast<std::size_t>(after - p));
      m.num.is_integer = integer;
      p = after;
      m.value_end = p;
    } else if (root && m.id == k_meta && c == '{') {
      m.kind = '{';
      m.value_begin = p;
      f.meta.clear();  // duplicate `meta`: the last one wins
      std::fill(std::begin(f.last_meta), std::end(f.last_meta), -1);
      r.seek(p);
      if (!scan_object_members(r, f.meta, false, f)) return false;
      p = r.pos();
      m.value_end = p;
    } else if (!value_by_reader(m)) {
      return false;
    }
    if (m.id != k_other) {
      if (last[m.id] >= 0) f.duplicates = true;
      last[m.id] = static_cast<int>(out.size()) - 1;
    } else {
      ++f.other_keys;
    }
    ws();
    if (p < end && *p == ',') {
      ++p;
      continue;
    }
    if (p < end && *p == '}') {
      ++p;
      break;
    }
    return fail_at(p, "expected ',' or '}' in an object");
  }
  r.seek(p);
  r.leave();
  return true;
}

int last_index(const member_list& members, std::string_view key) {
  for (int i = static_cast<int>(members.size()) - 1; i >= 0; --i)
    if (members[static_cast<std::size_t>(i)].key_plain() == key) return i;
  return -1;
}

std::string string_value(const scanned_member& m) {
  if (!m.str.has_escapes) return std::string(m.str.raw);
  std::string v;
  detail::unescape_into(m.str.raw, v);
  return v;
}

// `text` is a JSON integer the reader validated (an optional '-', then digits).
bool parse_int64(std::string_view text, std::int64_t& out) {
  // Fast path: up to 18 digits cannot overflow.
  const char* p = text.data();
  const char* e = p + text.size();
  bool neg = p < e && *p == '-';
  if (neg) ++p;
  if (p < e && e - p <= 18) {
    std::int64_t v = 0;
    for (; p < e; ++p) v = v * 10 + (*p - '0');
    out = neg ? -v : v;
    return true;
  }
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

// A string that is not blank (D3a: blank = empty or ASCII white space only). Judged on the
// value, so `"\u0020"` is blank like `" "` and `"\u00a0"` is not, like its raw UTF-8 bytes.
bool non_blank_string(const scanned_member& m) {
  if (m.kind != '"') return false;
  if (!m.str.has_escapes) return !is_blank(m.str.raw);
  std::string v = string_value(m);
  return !is_blank(v);
}

// Scans the body and applies the accept rules (D3) in PHP's reason order.
error_info scan_frame(std::string_view body, const decode_options& options, frame_scan& f) {
  // Spans are 32-bit offsets, so no body above 4 GiB is ever indexed.
  const std::size_t limit = std::min<std::size_t>(options.max_bytes, 0xFFFFFFF0u);
  if (body.size() > limit) {
    return {errc::malformed_json, "body of " + std::to_string(body.size()) +
                                      " bytes exceeds the limit of " + std::to_string(limit)};
  }
  std::size_t depth =
      options.max_depth < 2 ? 2 : (options.max_depth > 4096 ? 4096 : options.max_depth);
  json_reader r(body, depth);
  r.skip_ws();
  if (!scan_object_members(r, f.top, true, f)) return {errc::malformed_json, r.error()};
  r.skip_ws();
  if (!r.at_end()) {
    r.fail("trailing data after the top-level object");
    return {errc::malformed_json, r.error()};
  }
  const int job = f.last_top[k_job], urn = f.last_top[k_urn], trace = f.last_top[k_trace_id],
            data = f.last_top[k_data], meta = f.last_top[k_meta], attempts = f.last_top[k_attempts];
  auto at = [&](int i) -> const scanned_member& { return f.top[static_cast<std::size_t>(i)]; };

  // 1. identity: `job` when a non-blank string, else the `urn` alias.
  if (job >= 0 && non_blank_string(at(job))) {
    f.urn_from_job = true;
  } else if (!(urn >= 0 && non_blank_string(at(urn)))) {
    return {errc::missing_urn, "neither 'job' nor 'urn' is a non-blank string"};
  }
  // 2. meta
  if (meta < 0 || at(meta).kind != '{') {
    return {errc::missing_meta, "'meta' is missing or not an object"};
  }
  // 3. schema_version must be the integer literal 1 (not 1.0, "1" or true).
  const int schema = f.last_meta[k_schema_version];
  if (schema < 0) {
    return {errc::unsupported_schema_version, "meta.schema_version is missing (this SDK reads 1)"};
  }
  const auto& sv = f.meta[static_cast<std::size_t>(schema)];
  if (!(sv.kind == '0' && sv.num.text == "1")) {
    std::string_view v(sv.value_begin, static_cast<std::size_t>(sv.value_end - sv.value_begin));
    return {errc::unsupported_schema_version,
            detail::concat("meta.schema_version is ", v.substr(0, 40), " (this SDK reads 1)")};
  }
  // 4. data must be an object; `[]` reads as `{}`.
  if (data < 0) return {errc::invalid_data, "'data' is missing"};
  if (!(at(data).kind == '{' || at(data).empty_array)) {
    return {errc::invalid_data, "'data' is not an object"};
  }
  // 5. trace_id: a non-blank string.
  if (trace < 0 || !non_blank_string(at(trace))) {
    return {errc::missing_trace_id, "'trace_id' is missing, not a string, or blank"};
  }
  // 6. attempts: an integer.
  if (attempts < 0 || at(attempts).kind != '0' || !at(attempts).num.is_integer ||
      !parse_int64(at(attempts).num.text, f.attempts)) {
    return {errc::invalid_attempts, "'attempts' is missing or not a 64-bit integer"};
  }

  if (!f.duplicates && f.other_keys >= 2) {
    f.duplicates = has_duplicate_other_keys(f.top) || has_duplicate_other_keys(f.meta);
  }
  f.forbidden = f.last_top[k_timestamp] >= 0 || (f.urn_from_job && urn >= 0) ||
                f.last_meta[k_max_retries] >= 0 || f.last_meta[k_meta_attempts] >= 0 ||
                f.last_meta[k_source] >= 0 || f.last_meta[k_ts] >= 0;
  f.canonical = r.canonical();
  return {};
}

bool needs_rebuild(const frame_scan& f) {
  return !f.canonical || f.duplicates || f.forbidden ||
         f.top[static_cast<std::size_t>(f.last_top[k_data])].empty_array;
}

// Writes members in first-occurrence order with last-occurrence values (duplicate keys:
// last wins), skipping the dropped ones, every value canonicalised.
template <class Drop, class Value>
void write_members(const member_list& members, std::string& out, Drop&& drop, Value&& value) {
  out.push_back('{');
  bool first = true;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto& m = members[i];
    bool seen_before = false;
    for (std::size_t j = 0; j < i && !seen_before; ++j)
      seen_before = members[j].key_plain() == m.key_plain();
    if (seen_before || drop(m)) continue;
    int last = last_index(members, m.key_plain());
    if (!first) out.push_back(',');
    first = false;
    out.push_back('"');
    detail::reescape_into(m.key, out);
    out += "\":";
    value(members[static_cast<std::size_t>(last)], out);
  }
  out.push_back('}');
}

std::string rebuild_canonical(const frame_scan& f, std::vector<std::string>& dropped,
                              const decode_options& options) {
  std::string out;
  auto warn = [&](std::string path, const char* why) {
    if (options.on_warning) options.on_warning("babelqueue: dropped " + path + ": " + why);
    dropped.push_back(std::move(path));
  };
  // Reported once per key even when it appears several times.
  auto drop_top = [&](const scanned_member& m) {
    if (m.id == k_timestamp) {
      warn(detail::concat("/", m.key_plain()), "forbidden by the envelope contract");
      return true;
    }
    if (f.urn_from_job && m.id == k_urn) {
      warn("/urn", "the 'urn' alias is ignored when 'job' is present");
      return true;
    }
    return false;
  };
  auto drop_meta = [&](const scanned_member& m) {
    if (m.id == k_max_retries || m.id == k_meta_attempts || m.id == k_source || m.id == k_ts) {
      warn(detail::concat("/meta/", m.key_plain()), "forbidden by the envelope contract");
      return true;
    }
    return false;
  };
  auto plain_value = [](const scanned_member& m, std::string& o) {
    detail::canonicalize_value_into(
        std::string_view(m.value_begin, static_cast<std::size_t>(m.value_end - m.value_begin)), o);
  };
  out.reserve(static_cast<std::size_t>(f.top.back().value_end - f.top.front().key.raw.data()) + 16);
  write_members(f.top, out, drop_top, [&](const scanned_member& m, std::string& o) {
    if (m.id == k_meta && m.kind == '{') {
      write_members(f.meta, o, drop_meta, plain_value);
    } else if (m.id == k_data && m.empty_array) {
      o += "{}";
    } else {
      plain_value(m, o);
    }
  });
  return out;
}

// Fills an envelope from a canonical body whose frame scan passed.
// `base` is where the scanned views point; `text` holds the same bytes (moved or copied).
void build(envelope& env, const char* base, std::string&& text, const frame_scan& f) {
  using A = envelope_access;
  A::text(env) = std::move(text);
  auto span_of = [&](std::string_view v) {
    return A::make_span(static_cast<std::size_t>(v.data() - base), v.size());
  };
  auto& top = A::top(env);
  top.reserve(f.top.size() + 1);
  for (const auto& m : f.top) {
    top.push_back({span_of(m.key.raw),
                   span_of(std::string_view(
                       m.value_begin, static_cast<std::size_t>(m.value_end - m.value_begin)))});
  }
  // Every string field exactly as received (D3a: the routed URN and trace_id are not trimmed).
  auto set_string = [&](envelope_access::text_field& field, const scanned_member& m) {
    if (!m.str.has_escapes) {
      A::set_field_span(field, span_of(m.str.raw));
    } else {
      A::set_field_owned(env, field, string_value(m));
    }
  };
  set_string(
      A::urn(env),
      f.top[static_cast<std::size_t>(f.urn_from_job ? f.last_top[k_job] : f.last_top[k_urn])]);
  set_string(A::trace_id(env), f.top[static_cast<std::size_t>(f.last_top[k_trace_id])]);
  auto meta_string = [&](envelope_access::text_field& field, int i) {
    if (i >= 0 && f.meta[static_cast<std::size_t>(i)].kind == '"')
      set_string(field, f.meta[static_cast<std::size_t>(i)]);
  };
  meta_string(A::id(env), f.last_meta[k_id]);
  meta_string(A::queue(env), f.last_meta[k_queue]);
  meta_string(A::lang(env), f.last_meta[k_lang]);
  if (f.last_meta[k_created_at] >= 0) {
    const auto& m = f.meta[static_cast<std::size_t>(f.last_meta[k_created_at])];
    std::int64_t v = 0;
    if (m.kind == '0' && m.num.is_integer && parse_int64(m.num.text, v)) A::created_at(env) = v;
  }
  A::attempts(env) = f.attempts;
  // build() only sees bodies without duplicate keys: each key's last index is its only one.
  A::set_indices(env, f.last_top[k_data], f.last_top[k_meta], f.last_top[k_attempts],
                 f.last_top[k_dead_letter]);
  A::set_pristine(env);
}

template <class Body>
result<envelope> decode_impl(Body&& body, const decode_options& options) {
  std::string_view view(body);
  frame_scan f;
  if (error_info e = scan_frame(view, options, f); e.code != errc::ok) return fail(std::move(e));
  envelope env;
  if (!needs_rebuild(f)) {
    if constexpr (std::is_same_v<std::remove_cvref_t<Body>, std::string>) {
      build(env, view.data(), std::forward<Body>(body),
            f);  // an rvalue string: offsets survive the move
    } else {
      build(env, view.data(), std::string(view), f);
    }
    return env;
  }
  std::vector<std::string> dropped;
  std::string canon = rebuild_canonical(f, dropped, options);
  frame_scan g;
  decode_options relaxed;
  relaxed.max_bytes = canon.size();
  relaxed.max_depth = options.max_depth;
  if (error_info e = scan_frame(canon, relaxed, g); e.code != errc::ok) return fail(std::move(e));
  const char* base = canon.data();
  build(env, base, std::move(canon), g);
  envelope_access::dropped(env) = std::move(dropped);
  return env;
}

}  // namespace

result<envelope> decode(std::string_view body, const decode_options& options) {
  return decode_impl(body, options);
}

result<envelope> decode(std::string&& body, const decode_options& options) {
  return decode_impl(std::move(body), options);
}

errc check(std::string_view body) noexcept {
  try {
    frame_scan f;
    // scan_frame only produces core codes.
    return static_cast<errc>(scan_frame(body, decode_options{}, f).code.value());
  } catch (...) {  // std::bad_alloc only: report as undecodable rather than terminate
    return errc::malformed_json;
  }
}

bool accepts(std::string_view body) noexcept { return check(body) == errc::ok; }

result<void> encode_to(const envelope& env, std::string& out) {
  using A = envelope_access;
  if (A::has_forbidden(env)) {
    return fail(errc::forbidden_key, "the envelope carries a key the contract forbids");
  }
  if (std::string_view whole = A::pristine_text(env); !whole.empty()) {
    out.append(whole);
    return {};
  }
  const auto& top = A::top(env);
  const std::int32_t attempts_at = A::attempts_index(env);
  out.reserve(out.size() + env.size_hint());
  out.push_back('{');
  for (std::size_t i = 0; i < top.size(); ++i) {
    if (i != 0) out.push_back(',');
    out.push_back('"');
    std::string_view key = A::view(env, top[i].key);
    if (A::produced(env) && key == "urn") {
      return fail(errc::forbidden_key, "'urn' is an inbound alias; producers write 'job'");
    }
    out.append(key);
    out += "\":";
    if (static_cast<std::int32_t>(i) == attempts_at) {
      char buf[24];
      auto r = std::to_chars(buf, buf + sizeof buf, env.attempts());
      out.append(buf, r.ptr);
    } else {
      out.append(A::view(env, top[i].value));
    }
  }
  out.push_back('}');
  return {};
}

result<std::string> encode(const envelope& env) {
  std::string out;
  BABELQUEUE_TRY(encode_to(env, out));
  return out;
}

}  // namespace v1
}  // namespace babelqueue
