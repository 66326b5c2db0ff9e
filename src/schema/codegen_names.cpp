#include "codegen_names.hpp"

#include <cctype>
#include <cstdio>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace detail {
namespace {

// C++20 keywords and alternative tokens, plus names GCC predefines as macros in its default
// GNU mode (`linux`, `unix`) and the C library macros a field name could plausibly be.
constexpr std::string_view reserved[] = {"alignas",       "alignof",     "and",
                                         "and_eq",        "asm",         "auto",
                                         "bitand",        "bitor",       "bool",
                                         "break",         "case",        "catch",
                                         "char",          "char8_t",     "char16_t",
                                         "char32_t",      "class",       "compl",
                                         "concept",       "const",       "consteval",
                                         "constexpr",     "constinit",   "const_cast",
                                         "continue",      "co_await",    "co_return",
                                         "co_yield",      "decltype",    "default",
                                         "delete",        "do",          "double",
                                         "dynamic_cast",  "else",        "enum",
                                         "explicit",      "export",      "extern",
                                         "false",         "float",       "for",
                                         "friend",        "goto",        "if",
                                         "inline",        "int",         "long",
                                         "mutable",       "namespace",   "new",
                                         "noexcept",      "not",         "not_eq",
                                         "nullptr",       "operator",    "or",
                                         "or_eq",         "private",     "protected",
                                         "public",        "register",    "reinterpret_cast",
                                         "requires",      "return",      "short",
                                         "signed",        "sizeof",      "static",
                                         "static_assert", "static_cast", "struct",
                                         "switch",        "template",    "this",
                                         "thread_local",  "throw",       "true",
                                         "try",           "typedef",     "typeid",
                                         "typename",      "union",       "unsigned",
                                         "using",         "virtual",     "void",
                                         "volatile",      "wchar_t",     "while",
                                         "xor",           "xor_eq",      "linux",
                                         "unix",          "i386",        "NULL",
                                         "EOF",           "errno",       "assert",
                                         "stdin",         "stdout",      "stderr",
                                         "offsetof",      "setjmp",      "va_arg",
                                         "va_start",      "va_end",      "SIZE_MAX",
                                         "INT_MAX",       "INT_MIN",     "BUFSIZ",
                                         "FILENAME_MAX",  "std"};

bool is_reserved(std::string_view name) {
  for (auto r : reserved)
    if (r == name) return true;
  return false;
}

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Non-alphanumeric runs become one `_`; leading/trailing `_` go (a leading `_` + capital and
// any `__` are reserved identifiers).
std::string underscored(std::string_view in) {
  std::string out;
  for (char c : in) {
    if (alnum(c)) {
      out += c;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

std::string not_reserved(std::string name, std::string_view if_empty,
                         std::string_view digit_prefix) {
  if (name.empty()) name = if_empty;
  if (std::isdigit(static_cast<unsigned char>(name[0])) != 0) name.insert(0, digit_prefix);
  if (is_reserved(name)) name += '_';
  return name;
}

}  // namespace

std::string member_name(std::string_view json_name) {
  return not_reserved(underscored(json_name), "field", "f_");
}

std::string enumerator_name(std::string_view value) {
  return not_reserved(underscored(value), "empty", "v_");
}

std::string type_name(std::string_view json_name) {
  std::string out;
  bool start = true;
  for (char c : json_name) {
    if (!alnum(c)) {
      start = true;
      continue;
    }
    out += start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    start = false;
  }
  return not_reserved(out, "Value", "T");
}

std::string unique_name(const std::string& name, std::set<std::string>& taken) {
  std::string candidate = name;
  for (int n = 2; taken.count(candidate) != 0; ++n) candidate = name + "_" + std::to_string(n);
  taken.insert(candidate);
  return candidate;
}

std::string string_literal(std::string_view bytes) {
  std::string out = "\"";
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7F || c == '?') {  // `?` avoids trigraph-like warnings
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned>(u));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + '"';
}

std::string file_stem(std::string_view type) {
  std::string out;
  for (char c : type) {
    if (std::isupper(static_cast<unsigned char>(c)) != 0) {
      if (!out.empty() && out.back() != '_') out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace detail
}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
