// protect()/unprotect(): walk the compiled plan over data, in two phases so that a failure
// leaves data untouched (phase 1 computes every replacement, phase 2 assigns them).
#include "core/propagate.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/gdpr/protect.hpp>

#include <utility>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {
namespace {

using replacement = std::pair<json*, json>;

// Computes the new value of one leaf, or reports an error; `keep` leaves the leaf as it is.
class leaf_op {
 public:
  virtual ~leaf_op() = default;
  virtual result<void> apply(const json& leaf, const std::string& where, json& out,
                             bool& keep) const = 0;
};

class encrypt_op final : public leaf_op {
 public:
  explicit encrypt_op(const cipher& c) : cipher_(c) {}
  result<void> apply(const json& leaf, const std::string& where, json& out,
                     bool& keep) const override {
    keep = false;
    auto text = babelqueue::to_canonical_json(leaf);
    if (!text)
      return fail(errc::encrypt_failed,
                  "the value cannot be written as JSON: " + text.error().message, where);
    auto sealed = cipher_.encrypt(*text);
    if (!sealed) {
      auto info = sealed.error();
      if (!info.code || is_decrypt_error(info.code)) info.code = errc::encrypt_failed;
      if (info.path.empty()) info.path = where;
      return failure{std::move(info)};
    }
    out = std::move(*sealed);
    return {};
  }

 private:
  const cipher& cipher_;
};

class decrypt_op final : public leaf_op {
 public:
  explicit decrypt_op(const cipher& c) : cipher_(c) {}
  result<void> apply(const json& leaf, const std::string& where, json& out,
                     bool& keep) const override {
    keep = !leaf.is_string();  // never protected, or already restored
    if (keep) return {};
    auto plain = cipher_.decrypt(leaf.get_ref<const std::string&>());
    if (!plain) {
      auto info = plain.error();
      // Whatever the cipher reported, the caller could not read the field: a decrypt code.
      if (!is_decrypt_error(info.code)) {
        info.message = std::string(babelqueue::reason(info.code)) + ": " + info.message;
        info.code = errc::decrypt_failed;
      }
      info.message = "cannot decrypt a protected field: " + info.message;
      if (info.path.empty()) info.path = where;
      return failure{std::move(info)};
    }
    auto value = babelqueue::parse_json(*plain);
    if (!value)
      return fail(errc::not_json, "decrypted plaintext is not JSON: " + value.error().message,
                  where);
    out = std::move(*value);
    return {};
  }

 private:
  const cipher& cipher_;
};

// Resolves steps[i..] below `node` (whose concrete path is `where`) and collects replacements.
result<void> visit(json& node, const std::vector<path_step>& steps, std::size_t i,
                   const std::string& where, const leaf_op& op, std::vector<replacement>& out) {
  if (i == steps.size()) {
    json value;
    bool keep = false;
    if (auto r = op.apply(node, where, value, keep); !r) return r;
    if (!keep) out.emplace_back(&node, std::move(value));
    return {};
  }
  const auto& step = steps[i];
  if (step.key) {
    if (!node.is_object()) return {};  // another shape than the schema says: skip
    const auto it = node.find(*step.key);
    if (it == node.end()) return {};  // absent field: skip
    return visit(*it, steps, i + 1, where.empty() ? *step.key : where + "." + *step.key, op, out);
  }
  if (!node.is_array()) return {};
  for (std::size_t k = 0; k < node.size(); ++k)
    if (auto r = visit(node[k], steps, i + 1, where + "[" + std::to_string(k) + "]", op, out); !r)
      return r;
  return {};
}

result<void> run(json& data, const field_plan& plan, const leaf_op& op) {
  if (data.is_null() || plan.empty()) return {};
  if (!data.is_object())
    return fail(errc::invalid_argument,
                std::string("data must be a JSON object (got ") + data.type_name() + ")");
  std::vector<replacement> changes;
  // Fields are disjoint (a marked container subsumes its descendants), so the pointers
  // collected here stay valid until every one of them is assigned.
  for (const auto& f : plan.fields())
    if (auto r = visit(data, f.steps, 0, "", op, changes); !r) return r;
  for (auto& [leaf, value] : changes) *leaf = std::move(value);
  return {};
}

}  // namespace

result<void> protect(json& data, const field_plan& plan, const cipher& c) {
  return run(data, plan, encrypt_op(c));
}

result<void> unprotect(json& data, const field_plan& plan, const cipher& c) {
  return run(data, plan, decrypt_op(c));
}

result<void> protect(json& data, const json& schema, const cipher& c) {
  BABELQUEUE_TRY_LET(plan, field_plan::build(schema));
  return protect(data, *plan, c);
}

result<void> unprotect(json& data, const json& schema, const cipher& c) {
  BABELQUEUE_TRY_LET(plan, field_plan::build(schema));
  return unprotect(data, *plan, c);
}

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
