// ParseSelector and Selector::Matches (cel.h): limits, error positions, and the `device`
// value built from a DeviceView as compile.go's DeviceMatches builds it.
#include "cel/cel.h"

#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "cel/cel_internal.h"

namespace phalanx::cel {

AttributeValue AttributeValue::Int(int64_t v) {
  AttributeValue a;
  a.kind = Kind::kInt;
  a.int_value = v;
  return a;
}
AttributeValue AttributeValue::Bool(bool v) {
  AttributeValue a;
  a.kind = Kind::kBool;
  a.bool_value = v;
  return a;
}
AttributeValue AttributeValue::String(std::string v) {
  AttributeValue a;
  a.kind = Kind::kString;
  a.string_value = std::move(v);
  return a;
}
AttributeValue AttributeValue::Version(std::string v) {
  AttributeValue a;
  a.kind = Kind::kVersion;
  a.string_value = std::move(v);
  return a;
}

namespace {

// "<where>: [line L, ]column C: <message>"; columns count characters (UTF-8 sequences)
// from 1, as cel-go's error locations do.
absl::Status PositionedError(std::string_view where, std::string_view expr, size_t pos,
                             std::string_view message) {
  pos = std::min(pos, expr.size());
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < pos; ++i) {
    if (expr[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(expr[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  const bool multiline = expr.find('\n') != std::string_view::npos;
  return absl::InvalidArgumentError(Cat(where, where.empty() ? "" : ": ",
                                        multiline ? Cat("line ", line, ", ") : std::string(),
                                        "column ", column, ": ", message));
}

// The byte offset of the first invalid UTF-8 sequence, or npos.
size_t InvalidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t min = 0;
    if (b < 0x80) {
      ++i;
      continue;
    }
    if ((b & 0xE0) == 0xC0) {
      n = 1, min = 0x80;
    } else if ((b & 0xF0) == 0xE0) {
      n = 2, min = 0x800;
    } else if ((b & 0xF8) == 0xF0) {
      n = 3, min = 0x10000;
    } else {
      return i;
    }
    if (i + n >= s.size()) return i;  // truncated sequence
    uint32_t cp = b & (0x3F >> n);
    for (size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += n + 1;
  }
  return std::string_view::npos;
}

// parseQualifiedName (compile.go): "domain/id", or the driver's domain for a bare id.
std::pair<std::string, std::string> SplitQualifiedName(const std::string& name,
                                                       const std::string& driver) {
  const size_t sep = name.find('/');
  if (sep == std::string::npos) return {driver, name};
  return {name.substr(0, sep), name.substr(sep + 1)};
}

MapData& Domain(MapData& outer, const std::string& domain) {
  Value& v = outer.entries[domain];
  if (!std::holds_alternative<MapPtr>(v.v)) v.v = MapPtr(std::make_shared<MapData>());
  // The inner maps are only shared once the device value is complete.
  return const_cast<MapData&>(*std::get<MapPtr>(v.v));
}

absl::StatusOr<Value> AttributeToValue(const AttributeValue& a) {
  switch (a.kind) {
    case AttributeValue::Kind::kInt:
      return Value{a.int_value};
    case AttributeValue::Kind::kBool:
      return Value{a.bool_value};
    case AttributeValue::Kind::kString:
      return Value{a.string_value};
    case AttributeValue::Kind::kVersion:
      break;
  }
  auto v = ParseSemver(a.string_value, /*normalize=*/false);
  if (!v.ok())
    return absl::InvalidArgumentError(Cat("parse semantic version: ", v.status().message()));
  return Value{std::shared_ptr<const Semver>(std::make_shared<Semver>(*std::move(v)))};
}

absl::StatusOr<Value> DeviceValue(const DeviceView& d) {
  auto attributes = std::make_shared<MapData>();
  attributes->default_empty = true;
  for (const auto& [name, attr] : d.attributes) {
    auto v = AttributeToValue(attr);
    if (!v.ok())
      return absl::InvalidArgumentError(Cat("attribute ", name, ": ", v.status().message()));
    auto [domain, id] = SplitQualifiedName(name, d.driver);
    Domain(*attributes, domain).entries[id] = *std::move(v);
  }
  auto capacity = std::make_shared<MapData>();
  capacity->default_empty = true;
  for (const auto& [name, q] : d.capacity) {
    auto [domain, id] = SplitQualifiedName(name, d.driver);
    Domain(*capacity, domain).entries[id] = Value{q};
  }
  auto device = std::make_shared<MapData>();
  device->entries["driver"] = Value{d.driver};
  device->entries["attributes"] = Value{MapPtr(std::move(attributes))};
  device->entries["capacity"] = Value{MapPtr(std::move(capacity))};
  device->entries["allowMultipleAllocations"] = Value{d.allow_multiple_allocations};
  return Value{MapPtr(std::move(device))};
}

}  // namespace

std::string Join(const std::vector<std::string>& pieces, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) out.append(sep);
    out.append(pieces[i]);
  }
  return out;
}

std::vector<std::string_view> SplitN(std::string_view s, std::string_view sep, size_t max_parts) {
  std::vector<std::string_view> out;
  while (max_parts == 0 || out.size() + 1 < max_parts) {
    const size_t k = s.find(sep);
    if (k == std::string_view::npos) break;
    out.push_back(s.substr(0, k));
    s.remove_prefix(k + sep.size());
  }
  out.push_back(s);
  return out;
}

absl::StatusOr<Selector> ParseSelector(std::string_view expression, std::string_view where) {
  if (expression.size() > kMaxExpressionLength) {
    return absl::InvalidArgumentError(Cat(where, where.empty() ? "" : ": ",
                                          "Too long: may not be more than ", kMaxExpressionLength,
                                          " bytes (the expression has ", expression.size(), ")"));
  }
  if (const size_t bad = InvalidUtf8(expression); bad != std::string_view::npos) {
    return PositionedError(where, expression.substr(0, bad), bad, "invalid UTF-8");
  }
  auto parsed = Parse(expression);
  if (auto* e = std::get_if<CompileError>(&parsed)) {
    return PositionedError(where, expression, e->pos, e->message);
  }
  std::unique_ptr<Node> root = std::move(std::get<std::unique_ptr<Node>>(parsed));
  int slots = 0;
  if (auto e = Check(*root, &slots)) return PositionedError(where, expression, e->pos, e->message);
  if (root->type.kind != Kind::kBool && root->type.kind != Kind::kDyn) {
    return PositionedError(
        where, expression, root->pos,
        Cat("must evaluate to bool or the unknown type, not ", root->type.Name()));
  }
  Selector s;
  s.expression_ = std::string(expression);
  s.root_ = std::move(root);
  s.slots_ = slots;
  return s;
}

absl::StatusOr<PreparedDevice> PreparedDevice::Prepare(const DeviceView& device) {
  auto v = DeviceValue(device);
  if (!v.ok()) return v.status();
  PreparedDevice p;
  p.value_ = std::make_shared<const Value>(*std::move(v));
  return p;
}

absl::StatusOr<bool> Selector::Matches(const DeviceView& device) const {
  auto prepared = PreparedDevice::Prepare(device);
  if (!prepared.ok()) return prepared.status();
  return Matches(*prepared);
}

absl::StatusOr<bool> Selector::Matches(const PreparedDevice& device) const {
  if (root_ == nullptr) return absl::FailedPreconditionError("empty CEL selector");
  if (device.value_ == nullptr) return absl::FailedPreconditionError("device not prepared");
  EvalContext ctx;
  ctx.device = *device.value_;
  ctx.slots.resize(static_cast<size_t>(slots_));
  const Value result = Evaluate(*root_, ctx);
  if (ctx.cancelled) return absl::ResourceExhaustedError(std::string(kCostExceeded));
  if (const auto* err = std::get_if<ErrorValue>(&result.v))
    return absl::InvalidArgumentError(err->message);
  if (const auto* b = std::get_if<bool>(&result.v)) return *b;
  return absl::InvalidArgumentError(
      Cat("CEL result of type ", ValueTypeName(result), " could not be converted to bool"));
}

}  // namespace phalanx::cel
