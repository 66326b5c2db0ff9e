#pragma once
// Reading files with the error texts Go's os.ReadFile produces (`open <path>: no such file or
// directory`, `read <path>: is a directory`), so `babelqueue schema check` prints what
// `bqschema check` prints for an unreadable schema.

#include <babelqueue/result.hpp>
#include <babelqueue/schema/error.hpp>

#include <filesystem>
#include <string>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace detail {

// Whole file. errc::io with a Go-style message on failure.
result<std::string> read_file(const std::string& path);

// Go's filepath.Join(dir, rel) for a relative `rel`: joined and lexically cleaned.
std::string go_join(const std::string& dir, const std::string& rel);
// Go's filepath.Dir(path).
std::string go_dir(const std::string& path);

}  // namespace detail
}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
