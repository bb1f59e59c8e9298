#include "plugins/helper/args.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace phalanx::plugins::helper {

namespace {

bool IsNullish(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

std::string Join(const std::string& path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return path + "." + std::string(key);
}

std::string Index(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }

bool CheckKeys(const YAML::Node& n, const std::string& path,
               std::span<const std::string_view> known, bool allow_type_meta, FieldErrors* errs) {
  bool ok = true;
  for (const auto& kv : n) {
    std::string key;
    try {
      key = kv.first.as<std::string>();
    } catch (const YAML::Exception&) {
      errs->Add(fmt::format("{}: invalid key", path.empty() ? "args" : path));
      ok = false;
      continue;
    }
    bool found = allow_type_meta && (key == "kind" || key == "apiVersion");
    for (std::string_view k : known) found = found || k == key;
    if (!found) {
      errs->Add(fmt::format("unknown field \"{}\"", Join(path, key)));
      ok = false;
    }
  }
  return ok;
}

bool CheckKeys(const YAML::Node& n, const std::string& path,
               std::initializer_list<std::string_view> known, bool allow_type_meta,
               FieldErrors* errs) {
  return CheckKeys(n, path, std::span<const std::string_view>(known.begin(), known.size()),
                   allow_type_meta, errs);
}

bool ReadRequirements(const YAML::Node& n, const std::string& path,
                      std::vector<api::NodeSelectorRequirement>* out, FieldErrors* errs) {
  if (IsNullish(n)) return true;
  if (!n.IsSequence()) {
    errs->TypeInvalid(path, "must be a list");
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < n.size(); ++i) {
    std::string p = Index(path, i);
    const YAML::Node e = n[i];
    if (!e.IsMap()) {
      errs->TypeInvalid(p, "must be an object");
      ok = false;
      continue;
    }
    ok &= CheckKeys(e, p, {"key", "operator", "values"}, false, errs);
    api::NodeSelectorRequirement r;
    ok &= ReadString(e["key"], Join(p, "key"), &r.key, errs);
    ok &= ReadString(e["operator"], Join(p, "operator"), &r.op, errs);
    ok &= ReadStringList(e["values"], Join(p, "values"), &r.values, errs);
    out->push_back(std::move(r));
  }
  return ok;
}

}  // namespace

bool CheckArgsMap(const YAML::Node* args, std::string_view kind,
                  std::initializer_list<std::string_view> known, FieldErrors* errs,
                  bool* has_content) {
  return CheckArgsMap(args, kind, std::span<const std::string_view>(known.begin(), known.size()),
                      errs, has_content);
}

bool CheckArgsMap(const YAML::Node* args, std::string_view kind,
                  std::span<const std::string_view> known, FieldErrors* errs, bool* has_content) {
  *has_content = false;
  if (args == nullptr || IsNullish(*args)) return true;
  if (!args->IsMap()) {
    errs->TypeInvalid("args", "must be an object");
    return false;
  }
  if (args->size() == 0) return true;
  const YAML::Node k = (*args)["kind"];
  if (k.IsDefined() && k.IsScalar() && k.Scalar() != kind) {
    errs->Add(fmt::format("want args of kind {}, got {}", kind, k.Scalar()));
    return false;
  }
  *has_content = true;
  return CheckKeys(*args, "", known, true, errs);
}

bool CheckMap(const YAML::Node& n, const std::string& path,
              std::initializer_list<std::string_view> known, FieldErrors* errs) {
  if (IsNullish(n)) return false;
  if (!n.IsMap()) {
    errs->TypeInvalid(path, "must be an object");
    return false;
  }
  return CheckKeys(n, path, known, false, errs);
}

bool ReadInt(const YAML::Node& n, const std::string& path, int64_t* out, FieldErrors* errs) {
  if (IsNullish(n)) return true;
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) {
      *out = v;
      return true;
    }
    errs->Invalid(path, s, "must be an integer");
    return false;
  }
  errs->TypeInvalid(path, "must be an integer");
  return false;
}

bool ReadString(const YAML::Node& n, const std::string& path, std::string* out, FieldErrors* errs) {
  if (IsNullish(n)) return true;
  if (n.IsScalar()) {
    *out = n.Scalar();
    return true;
  }
  errs->TypeInvalid(path, "must be a string");
  return false;
}

bool ReadNonNegativeNumber(const YAML::Node& n, const std::string& path, double* out,
                           FieldErrors* errs) {
  if (IsNullish(n)) return true;
  std::string text;
  if (!ReadString(n, path, &text, errs)) return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(v >= 0) || !std::isfinite(v)) {
    errs->Invalid(path, text, "must be a number >= 0");
    return false;
  }
  *out = v;
  return true;
}

bool ReadStringList(const YAML::Node& n, const std::string& path, std::vector<std::string>* out,
                    FieldErrors* errs) {
  if (IsNullish(n)) return true;
  if (!n.IsSequence()) {
    errs->TypeInvalid(path, "must be a list of strings");
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) {
      errs->TypeInvalid(Index(path, i), "must be a string");
      ok = false;
      continue;
    }
    out->push_back(n[i].Scalar());
  }
  return ok;
}

bool ReadNodeSelectorTerm(const YAML::Node& n, const std::string& path, api::NodeSelectorTerm* out,
                          FieldErrors* errs) {
  if (IsNullish(n)) return true;
  if (!n.IsMap()) {
    errs->TypeInvalid(path, "must be an object");
    return false;
  }
  bool ok = CheckKeys(n, path, {"matchExpressions", "matchFields"}, false, errs);
  ok &= ReadRequirements(n["matchExpressions"], Join(path, "matchExpressions"),
                         &out->match_expressions, errs);
  ok &= ReadRequirements(n["matchFields"], Join(path, "matchFields"), &out->match_fields, errs);
  return ok;
}

bool ReadNodeSelector(const YAML::Node& n, const std::string& path, api::NodeSelector* out,
                      FieldErrors* errs) {
  if (IsNullish(n)) return true;
  if (!n.IsMap()) {
    errs->TypeInvalid(path, "must be an object");
    return false;
  }
  bool ok = CheckKeys(n, path, {"nodeSelectorTerms"}, false, errs);
  const YAML::Node terms = n["nodeSelectorTerms"];
  if (IsNullish(terms)) return ok;
  std::string tp = Join(path, "nodeSelectorTerms");
  if (!terms.IsSequence()) {
    errs->TypeInvalid(tp, "must be a list");
    return false;
  }
  for (size_t i = 0; i < terms.size(); ++i) {
    api::NodeSelectorTerm t;
    ok &= ReadNodeSelectorTerm(terms[i], Index(tp, i), &t, errs);
    out->node_selector_terms.push_back(std::move(t));
  }
  return ok;
}

bool ReadPreferredSchedulingTerms(const YAML::Node& n, const std::string& path,
                                  std::vector<api::PreferredSchedulingTerm>* out,
                                  FieldErrors* errs) {
  if (IsNullish(n)) return true;
  if (!n.IsSequence()) {
    errs->TypeInvalid(path, "must be a list");
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < n.size(); ++i) {
    std::string p = Index(path, i);
    const YAML::Node e = n[i];
    if (!e.IsMap()) {
      errs->TypeInvalid(p, "must be an object");
      ok = false;
      continue;
    }
    ok &= CheckKeys(e, p, {"weight", "preference"}, false, errs);
    api::PreferredSchedulingTerm t;
    int64_t w = 0;
    ok &= ReadInt(e["weight"], Join(p, "weight"), &w, errs);
    t.weight = static_cast<int32_t>(w);
    ok &= ReadNodeSelectorTerm(e["preference"], Join(p, "preference"), &t.preference, errs);
    out->push_back(std::move(t));
  }
  return ok;
}

framework::Status ReadIntAtLeast(std::string_view kind, const YAML::Node& v,
                                 const std::string& field, int64_t min, int64_t* out) {
  *out = v.as<int64_t>();
  if (*out < min) {
    return framework::Status::Error(std::string(kind) + ": " + field +
                                    ": Invalid value: " + std::to_string(*out) +
                                    ": must be greater than or equal to " + std::to_string(min));
  }
  return framework::Status::Success();
}

framework::Status ReadIntArgs(const YAML::Node* args, std::string_view kind,
                              const std::vector<IntArg>& fields) {
  std::vector<std::string_view> names;
  for (const auto& f : fields) names.emplace_back(f.name);
  FieldErrors errs;
  bool has_content = false;
  if (!CheckArgsMap(args, kind, names, &errs, &has_content)) return ArgsError(errs, kind);
  if (!has_content) return framework::Status::Success();
  try {
    for (const auto& kv : *args) {
      const std::string key = kv.first.as<std::string>();
      for (const auto& f : fields) {
        if (key != f.name) continue;
        int64_t v = 0;
        if (auto st = ReadIntAtLeast(kind, kv.second, key, f.min, &v); !st.IsSuccess()) return st;
        f.set(v);
      }
    }
  } catch (const YAML::Exception& e) {
    return framework::Status::Error(std::string(kind) + ": " + e.what());
  }
  return framework::Status::Success();
}

}  // namespace phalanx::plugins::helper
