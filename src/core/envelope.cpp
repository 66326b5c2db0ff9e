// babelqueue::envelope accessors and the few mutations the runtime needs (D4: every change
// appends new text and re-points one span; nothing else is rewritten).
#include "envelope_access.hpp"
#include "json_scanner.hpp"
#include "shared_helpers.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/dead_letter.hpp>

#include <array>

namespace babelqueue {
inline namespace v1 {
namespace {

constexpr std::array<std::string_view, 6> frame_keys = {"job",  "trace_id", "data",
                                                        "meta", "attempts", "dead_letter"};
constexpr std::array<std::string_view, 5> meta_frame_keys = {"id", "queue", "lang",
                                                             "schema_version", "created_at"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& keys, std::string_view k) {
  for (auto key : keys)
    if (key == k) return true;
  return false;
}

// Plain (unescaped) form of a canonical key text.
std::string plain_key(std::string_view raw) {
  if (raw.find('\\') == std::string_view::npos) return std::string(raw);
  std::string out;
  detail::unescape_into(raw, out);
  return out;
}

void append_quoted(std::string_view utf8, std::string& out) {
  out.push_back('"');
  detail::escape_into(detail::to_valid_utf8(utf8), out);
  out.push_back('"');
}

}  // namespace

bool is_forbidden_top_key(std::string_view key) noexcept { return key == "timestamp"; }

bool is_forbidden_meta_key(std::string_view key) noexcept {
  return key == "max_retries" || key == "attempts" || key == "source" || key == "ts";
}

void envelope_access::reindex(envelope& e) {
  e.data_index_ = e.meta_index_ = e.attempts_index_ = e.dead_letter_index_ = -1;
  for (std::size_t i = 0; i < e.top_.size(); ++i) {
    std::string_view k = e.view(e.top_[i].key);
    auto idx = static_cast<std::int32_t>(i);
    if (k == "data")
      e.data_index_ = idx;
    else if (k == "meta")
      e.meta_index_ = idx;
    else if (k == "attempts")
      e.attempts_index_ = idx;
    else if (k == "dead_letter")
      e.dead_letter_index_ = idx;
  }
}

std::string_view envelope::view(const text_field& f) const noexcept {
  if (!f.present) return {};
  if (f.owned >= 0) return owned_[static_cast<std::size_t>(f.owned)];
  return view(f.where);
}

std::int32_t envelope::find_top(std::string_view key) const noexcept {
  for (std::size_t i = 0; i < top_.size(); ++i) {
    std::string_view raw = view(top_[i].key);
    if (raw == key) return static_cast<std::int32_t>(i);
    if (raw.find('\\') != std::string_view::npos && plain_key(raw) == key) {
      return static_cast<std::int32_t>(i);
    }
  }
  return -1;
}

std::string_view envelope::urn() const noexcept { return view(urn_); }
std::string_view envelope::trace_id() const noexcept { return view(trace_id_); }
std::string_view envelope::id() const noexcept { return view(id_); }
std::string_view envelope::queue() const noexcept { return view(queue_); }
std::string_view envelope::lang() const noexcept { return view(lang_); }
std::optional<std::int64_t> envelope::created_at() const noexcept { return created_at_; }

std::string_view envelope::data_text() const noexcept {
  return data_index_ < 0 ? std::string_view("{}")
                         : view(top_[static_cast<std::size_t>(data_index_)].value);
}

result<json> envelope::data() const { return parse_json(data_text()); }

std::string_view envelope::meta_text() const noexcept {
  return meta_index_ < 0 ? std::string_view("{}")
                         : view(top_[static_cast<std::size_t>(meta_index_)].value);
}

result<json> envelope::meta() const { return parse_json(meta_text()); }

bool envelope::has_dead_letter() const noexcept { return dead_letter_index_ >= 0; }

std::optional<dead_letter_info> envelope::dead_letter() const {
  if (dead_letter_index_ < 0) return std::nullopt;
  auto parsed = parse_json(view(top_[static_cast<std::size_t>(dead_letter_index_)].value));
  dead_letter_info info;
  if (!parsed || !parsed->is_object()) return info;
  const json& b = *parsed;
  auto str = [&](const char* k) -> std::optional<std::string> {
    auto it = b.find(k);
    if (it != b.end() && it->is_string()) return it->get<std::string>();
    return std::nullopt;
  };
  auto num = [&](const char* k) -> std::int64_t {
    auto it = b.find(k);
    if (it != b.end() && it->is_number_integer()) return it->get<std::int64_t>();
    return 0;
  };
  info.reason = str("reason").value_or("");
  info.error = str("error");
  info.exception = str("exception");
  info.failed_at = num("failed_at");
  info.original_queue = str("original_queue").value_or("");
  info.attempts = num("attempts");
  info.lang = str("lang").value_or("");
  return info;
}

void envelope::set_dead_letter(const dead_letter_info& info) {
  std::string block;
  block.reserve(160);
  block += "{\"reason\":";
  append_quoted(info.reason, block);
  block += ",\"error\":";
  if (info.error)
    append_quoted(*info.error, block);
  else
    block += "null";
  block += ",\"exception\":";
  if (info.exception)
    append_quoted(*info.exception, block);
  else
    block += "null";
  block += ",\"failed_at\":" + std::to_string(info.failed_at);
  block += ",\"original_queue\":";
  append_quoted(info.original_queue, block);
  block += ",\"attempts\":" + std::to_string(info.attempts);
  block += ",\"lang\":";
  append_quoted(info.lang, block);
  block.push_back('}');

  pristine_ = false;
  span value{static_cast<std::uint32_t>(text_.size()), static_cast<std::uint32_t>(block.size())};
  text_ += block;
  if (dead_letter_index_ >= 0) {
    top_[static_cast<std::size_t>(dead_letter_index_)].value = value;
    return;
  }
  span key{static_cast<std::uint32_t>(text_.size()), 11};
  text_ += "dead_letter";
  top_.push_back({key, value});
  envelope_access::reindex(*this);
}

void envelope::clear_dead_letter() noexcept {
  if (dead_letter_index_ < 0) return;
  pristine_ = false;
  top_.erase(top_.begin() + dead_letter_index_);
  envelope_access::reindex(*this);
}

std::optional<std::string_view> envelope::member(std::string_view key) const noexcept {
  std::int32_t i = find_top(key);
  if (i < 0) return std::nullopt;
  if (i == attempts_index_) return std::nullopt;  // use attempts(): the live value
  return view(top_[static_cast<std::size_t>(i)].value);
}

std::vector<std::string_view> envelope::member_names() const {
  std::vector<std::string_view> names;
  names.reserve(top_.size());
  for (const auto& m : top_) names.push_back(view(m.key));
  return names;
}

result<void> envelope::set_extension(std::string_view key, const json& value, bool in_meta) {
  if (!detail::valid_utf8(key)) return fail(errc::invalid_utf8, "extension key is not valid UTF-8");
  if (in_meta ? contains(meta_frame_keys, key) : contains(frame_keys, key)) {
    return fail(errc::invalid_argument,
                detail::concat("'", key, "' is an envelope field, not an extension"));
  }
  std::string value_text;
  if (auto r = write_canonical_json(value, value_text); !r) return r;
  std::string key_text;
  detail::escape_into(key, key_text);
  pristine_ = false;
  if (in_meta ? is_forbidden_meta_key(key) : (is_forbidden_top_key(key) || key == "urn")) {
    has_forbidden_extension_ = true;  // refused by encode() (D3)
  }
  auto append = [&](std::string_view s) {
    span where{static_cast<std::uint32_t>(text_.size()), static_cast<std::uint32_t>(s.size())};
    text_ += s;
    return where;
  };
  if (!in_meta) {
    std::int32_t i = find_top(key);
    span v = append(value_text);
    if (i >= 0) {
      top_[static_cast<std::size_t>(i)].value = v;
    } else {
      span k = append(key_text);
      // Extensions go before a dead_letter block so that block stays last.
      auto pos = dead_letter_index_ >= 0 ? top_.begin() + dead_letter_index_ : top_.end();
      top_.insert(pos, {k, v});
      envelope_access::reindex(*this);
    }
    return {};
  }
  // meta: write a new meta object holding the old members and the new/replaced one. The
  // old meta text stays in text_, so the cached id/queue/lang spans remain valid.
  std::string meta_text_new = "{";
  bool replaced = false;
  {
    std::string_view old_meta = meta_text();
    detail::json_reader r(old_meta, 4096);
    r.consume('{');
    while (r.peek() == '"') {
      detail::string_scan k;
      r.scan_string(k);
      r.consume(':');
      const char* vb = r.pos();
      r.skip_value();
      if (meta_text_new.size() > 1) meta_text_new.push_back(',');
      meta_text_new.push_back('"');
      meta_text_new += k.raw;
      meta_text_new += "\":";
      if (plain_key(k.raw) == key) {
        meta_text_new += value_text;
        replaced = true;
      } else {
        meta_text_new.append(vb, r.pos());
      }
      if (!r.consume(',')) break;
    }
  }
  if (!replaced) {
    if (meta_text_new.size() > 1) meta_text_new.push_back(',');
    meta_text_new += "\"" + key_text + "\":" + value_text;
  }
  meta_text_new.push_back('}');
  span where = append(meta_text_new);
  top_[static_cast<std::size_t>(meta_index_)].value = where;
  return {};
}

}  // namespace v1
}  // namespace babelqueue
