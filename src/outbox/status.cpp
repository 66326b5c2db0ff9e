// Row status names (store.hpp): the text stored in the `status` column of every backend.
#include <babelqueue/outbox/store.hpp>

namespace babelqueue {
inline namespace v1 {
namespace outbox {

std::optional<row_status> parse_status(std::string_view text) noexcept {
  if (text == "pending") return row_status::pending;
  if (text == "published") return row_status::published;
  if (text == "parked") return row_status::parked;
  return std::nullopt;
}

std::string_view to_string(row_status status) noexcept {
  switch (status) {
    case row_status::pending:
      return "pending";
    case row_status::published:
      return "published";
    case row_status::parked:
      return "parked";
  }
  return "pending";
}

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
