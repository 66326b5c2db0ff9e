// AWS credentials from the environment and the shared credentials file (see credentials.hpp).
//
// The INI dialect is the one the AWS CLI / botocore read (Python's configparser): `[name]`
// section headers (the credentials file names profiles without the `profile ` prefix the
// config file uses), `key = value` or `key: value` lines split at the first delimiter, key
// names case-insensitive, whole-line `#` / `;` comments, blank lines; values are trimmed and
// otherwise kept as written (no inline comments, no quote stripping). A repeated section or
// key: the later value wins. No error message here quotes a value or a line of the file.
#include "sqs/credentials.hpp"

#include <babelqueue/runtime/error.hpp>
#include <babelqueue/text.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace babelqueue::inline v1::sqs::detail {
namespace {

constexpr std::string_view key_id_name = "aws_access_key_id";
constexpr std::string_view secret_name = "aws_secret_access_key";
constexpr std::string_view token_name = "aws_session_token";

// Lines are split on '\n' first, so the SDK's ASCII trim (which also drops '\n') is the
// configparser trim here.
constexpr auto config_trim = babelqueue::trim_ascii;

// One profile's section of a credentials file, as far as these keys go.
struct profile_scan {
  bool section_found = false;
  std::string key_id, secret, token;
  std::size_t malformed_line = 0;  ///< 1-based number of the first unparsable line, 0 if none
};

profile_scan scan(std::string_view text, std::string_view profile) {
  profile_scan out;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM
  bool in_profile = false;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const std::size_t nl = text.find('\n');
    std::string_view line = config_trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3) {
        if (out.malformed_line == 0) out.malformed_line = line_no;
        in_profile = false;
        continue;
      }
      in_profile = config_trim(line.substr(1, line.size() - 2)) == profile;
      out.section_found = out.section_found || in_profile;
      continue;
    }
    const std::size_t delim = line.find_first_of("=:");
    if (delim == std::string_view::npos || config_trim(line.substr(0, delim)).empty()) {
      if (out.malformed_line == 0) out.malformed_line = line_no;
      continue;
    }
    if (!in_profile) continue;
    const std::string key = babelqueue::ascii_lower(config_trim(line.substr(0, delim)));
    const std::string_view value = config_trim(line.substr(delim + 1));
    if (key == key_id_name) {
      out.key_id = value;
    } else if (key == secret_name) {
      out.secret = value;
    } else if (key == token_name) {
      out.token = value;
    }
  }
  return out;
}

std::string non_empty(const env_lookup& env, std::string_view name) {
  if (!env) return {};
  std::optional<std::string> v = env(name);
  return v ? std::move(*v) : std::string();
}

}  // namespace

std::optional<std::string> process_env(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::optional<credentials> credentials_from_ini(std::string_view text, std::string_view profile) {
  profile_scan s = scan(text, profile);
  if (!s.section_found || s.key_id.empty() || s.secret.empty()) return std::nullopt;
  return credentials{std::move(s.key_id), std::move(s.secret), std::move(s.token)};
}

result<credentials> resolve_credentials(std::string_view profile, const env_lookup& env) {
  // 1. The environment, when it holds the whole pair.
  std::string key_id = non_empty(env, "AWS_ACCESS_KEY_ID");
  std::string secret = non_empty(env, "AWS_SECRET_ACCESS_KEY");
  if (!key_id.empty() && !secret.empty()) {
    return credentials{std::move(key_id), std::move(secret), non_empty(env, "AWS_SESSION_TOKEN")};
  }
  std::string env_note;
  if (key_id.empty() && secret.empty()) {
    env_note = "environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set";
  } else {
    env_note = std::string("environment: ") +
               (key_id.empty() ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY") +
               " not set, so the other one is ignored";
  }

  // 2. The profile's section of the shared credentials file.
  std::string profile_name(profile);
  std::string profile_origin = "parameter";
  if (profile_name.empty()) {
    profile_name = non_empty(env, "AWS_PROFILE");
    profile_origin = "AWS_PROFILE";
  }
  if (profile_name.empty()) {
    profile_name = "default";
    profile_origin = "default";
  }
  const std::string profile_note = "profile \"" + profile_name + "\" (" + profile_origin + ")";

  const std::string home = non_empty(env, "HOME");
  std::string path = non_empty(env, "AWS_SHARED_CREDENTIALS_FILE");
  std::string path_origin = "AWS_SHARED_CREDENTIALS_FILE";
  if (path.empty()) {
    path = "~/.aws/credentials";
    path_origin = "default";
  }
  if (path == "~" || path.rfind("~/", 0) == 0) {
    if (home.empty()) {
      return fail(transport_errc::permission,
                  "no AWS credentials (" + env_note + "; shared credentials file " + path + " (" +
                      path_origin + "): HOME not set; " + profile_note + ")");
    }
    path = home + path.substr(1);
  }
  const std::string file_note = "shared credentials file " + path + " (" + path_origin + ")";

  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    return fail(transport_errc::permission, "no AWS credentials (" + env_note + "; " + file_note +
                                                ": no such file; " + profile_note + ")");
  }
  if (ec || std::filesystem::is_directory(status)) {
    return fail(transport_errc::invalid_argument,
                "AWS " + file_note + " cannot be read" +
                    (ec ? " (" + ec.message() + ")" : std::string(" (a directory)")) +
                    " looking for " + profile_note);
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    return fail(transport_errc::invalid_argument,
                "AWS " + file_note + " cannot be read looking for " + profile_note);
  }

  profile_scan s = scan(text.str(), profile_name);
  if (s.malformed_line != 0) {
    return fail(transport_errc::invalid_argument,
                "AWS " + file_note + " is malformed: line " + std::to_string(s.malformed_line) +
                    " is not a [section], key = value or comment line (looking for " +
                    profile_note + ")");
  }
  if (!s.section_found) {
    return fail(transport_errc::permission, "no AWS credentials (" + env_note + "; " + file_note +
                                                ": no " + profile_note + " section)");
  }
  if (s.key_id.empty() && s.secret.empty()) {
    return fail(transport_errc::permission,
                "no AWS credentials (" + env_note + "; " + file_note + ": " + profile_note +
                    " has no aws_access_key_id / aws_secret_access_key)");
  }
  if (s.key_id.empty() || s.secret.empty()) {
    const std::string_view missing = s.key_id.empty() ? key_id_name : secret_name;
    return fail(transport_errc::invalid_argument, "AWS " + file_note + ": " + profile_note +
                                                      " has partial credentials, missing " +
                                                      std::string(missing));
  }
  return credentials{std::move(s.key_id), std::move(s.secret), std::move(s.token)};
}

}  // namespace babelqueue::inline v1::sqs::detail
