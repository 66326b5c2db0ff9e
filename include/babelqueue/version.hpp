#pragma once
/// @file version.hpp
/// @brief SDK version (SemVer, independent of the envelope's schema_version).

namespace babelqueue {
inline namespace v1 {
inline constexpr int version_major = 0;
inline constexpr int version_minor = 1;
inline constexpr int version_patch = 0;
inline constexpr const char* version_string = "0.1.0";
}  // namespace v1
}  // namespace babelqueue
