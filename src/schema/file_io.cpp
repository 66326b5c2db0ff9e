#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace detail {
namespace {

// Go prints syscall errors with strerror's text starting lowercase.
std::string go_errno_text(int code) {
  std::string text = std::strerror(code);
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z')
    text[0] = static_cast<char>(text[0] - 'A' + 'a');
  return text;
}

// Go's filepath.Clean: lexical normalisation, no trailing slash, "." for empty.
std::string go_clean(const std::string& path) {
  if (path.empty()) return ".";
  std::string out = std::filesystem::path(path).lexically_normal().generic_string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out.empty() ? "." : out;
}

}  // namespace

result<std::string> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(schema::errc::io, "open " + path + ": " + go_errno_text(errno));
  std::string out;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int code = errno;
      ::close(fd);
      return fail(schema::errc::io, "read " + path + ": " + go_errno_text(code));
    }
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string go_join(const std::string& dir, const std::string& rel) {
  if (dir.empty()) return go_clean(rel);
  return go_clean(dir + "/" + rel);
}

std::string go_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return go_clean(path.substr(0, slash + 1));
}

}  // namespace detail
}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
