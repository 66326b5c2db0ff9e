// The libcurl side of the SQS transport (see http.hpp).
#include "sqs/http.hpp"

#include <babelqueue/runtime/error.hpp>
#include <babelqueue/text.hpp>

#include <curl/curl.h>

#include <mutex>

namespace babelqueue::inline v1::sqs::detail {

namespace {

// curl_global_init is not thread-safe before 7.84 and must run once per process.
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool header_is(std::string_view line, std::string_view name) {
  return line.size() > name.size() && line[name.size()] == ':' &&
         equals_ascii_ci(line.substr(0, name.size()), name);
}

std::string header_value(std::string_view line, std::size_t name_size) {
  std::string_view v = line.substr(name_size + 1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' '))
    v.remove_suffix(1);
  return std::string(v);
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<http_response*>(user);
  const std::string_view line(data, size * n);
  constexpr std::string_view query_error = "x-amzn-query-error";
  constexpr std::string_view request_id = "x-amzn-requestid";
  if (line.starts_with("HTTP/")) {
    // A new response (after a redirect or a 100 Continue): forget the previous headers.
    r->query_error.clear();
    r->request_id.clear();
  } else if (header_is(line, query_error)) {
    r->query_error = header_value(line, query_error.size());
  } else if (header_is(line, request_id)) {
    r->request_id = header_value(line, request_id.size());
  }
  return size * n;
}

struct slist_deleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

struct http_client::impl {
  http_options opts;
  CURL* easy = nullptr;
  char error[CURL_ERROR_SIZE] = {};
};

http_client::http_client(http_options opts) : impl_(std::make_unique<impl>()) {
  global_init();
  impl_->opts = std::move(opts);
  impl_->easy = curl_easy_init();
}

http_client::~http_client() {
  if (impl_->easy != nullptr) curl_easy_cleanup(impl_->easy);
}

result<http_response> http_client::post(
    const std::string& url, const std::vector<std::pair<std::string, std::string>>& headers,
    std::string_view body, std::chrono::milliseconds timeout) {
  CURL* e = impl_->easy;
  if (e == nullptr) return fail(transport_errc::unavailable, "libcurl: curl_easy_init failed");
  curl_easy_reset(e);  // keeps the connection cache: keep-alive survives
  std::unique_ptr<curl_slist, slist_deleter> list;
  auto append = [&](const std::string& line) {
    curl_slist* next = curl_slist_append(list.get(), line.c_str());
    if (next != nullptr) {
      (void)list.release();
      list.reset(next);
    }
  };
  for (const auto& [k, v] : headers) append(k + ": " + v);
  // No `Expect: 100-continue` round trip for large bodies, no default Accept/Content-Type.
  append("Expect:");
  append("Accept:");

  http_response r;
  impl_->error[0] = '\0';
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_POST, 1L);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, list.get());
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &r);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, impl_->error);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(impl_->opts.connect_timeout.count()));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::max<std::int64_t>(1, timeout.count())));
  if (!impl_->opts.tls_ca_file.empty())
    curl_easy_setopt(e, CURLOPT_CAINFO, impl_->opts.tls_ca_file.c_str());
  if (!impl_->opts.tls_verify) {
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  }

  const CURLcode rc = curl_easy_perform(e);
  if (rc != CURLE_OK) {
    const std::string text = impl_->error[0] != '\0' ? impl_->error : curl_easy_strerror(rc);
    native_error native{"libcurl", static_cast<std::int64_t>(rc), text};
    switch (rc) {
      case CURLE_OPERATION_TIMEDOUT:
        return fail(
            transport_errc::timeout,
            "no HTTP answer from " + url + " within " + std::to_string(timeout.count()) + " ms",
            std::move(native));
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
        return fail(transport_errc::invalid_argument, "unusable endpoint URL " + url + ": " + text,
                    std::move(native));
      default:
        return fail(transport_errc::unavailable, "HTTP request to " + url + " failed: " + text,
                    std::move(native));
    }
  }
  long new_connects = 0;
  curl_easy_getinfo(e, CURLINFO_NUM_CONNECTS, &new_connects);
  connects_ += new_connects;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

}  // namespace babelqueue::inline v1::sqs::detail
