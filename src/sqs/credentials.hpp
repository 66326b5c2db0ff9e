#pragma once
// AWS credentials as the AWS SDKs find them (the part of the default chain that needs no
// network): the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN),
// then the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, default
// ~/.aws/credentials) section of the profile AWS_PROFILE (default "default"). Secrets are
// never logged and never appear in an error message.
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/error.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::sqs::detail {

struct credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  ///< empty for long-term keys
};

/// Reads an environment variable; a seam so tests need not touch the real environment.
using env_lookup = std::function<std::optional<std::string>(std::string_view name)>;

/// The process environment (std::getenv).
std::optional<std::string> process_env(std::string_view name);

/// Resolves credentials: the environment pair when both are set and non-empty (with the
/// session token if set), else the profile's `aws_access_key_id` / `aws_secret_access_key`
/// (/ `aws_session_token`) from the shared credentials file. `profile` overrides AWS_PROFILE
/// when non-empty. transport_errc::permission "no AWS credentials (...)" saying where it
/// looked when none is found (no file, no such profile section, a section with neither key,
/// no HOME for the default path); transport_errc::invalid_argument for an unreadable or
/// malformed file, or a profile with only one of the two keys, naming the profile.
/// AWS_SHARED_CREDENTIALS_FILE may start with `~/` (HOME).
result<credentials> resolve_credentials(std::string_view profile = {},
                                        const env_lookup& env = process_env);

/// Parses the INI text of a shared credentials file and returns `profile`'s keys (nullopt
/// when the section is absent or lacks either key). `[name]` headers, `key = value` (or
/// `key: value`, as configparser reads it) lines with case-insensitive key names, `#`/`;`
/// comment lines, surrounding blanks trimmed; a repeated section or key: the later value wins.
std::optional<credentials> credentials_from_ini(std::string_view text, std::string_view profile);

}  // namespace babelqueue::inline v1::sqs::detail
