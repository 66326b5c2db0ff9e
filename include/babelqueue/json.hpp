#pragma once
/// @file json.hpp
/// @brief The user-facing JSON type: nlohmann's insertion-ordered JSON.
///
/// Handlers read `data` as `babelqueue::json` and producers pass it to make(). The wire
/// text itself is written by babelqueue's canonical writer (codec.hpp, decision D2), never
/// by `json::dump()`, whose number layout differs from the peers' (`1.0`, `1e-07`).

#include <nlohmann/json.hpp>

namespace babelqueue {
inline namespace v1 {

/// Insertion-ordered JSON value; `data` keys keep the order the producer wrote them in.
using json = nlohmann::ordered_json;

}  // namespace v1
}  // namespace babelqueue
