// The evaluator of the CEL subset: a tree walk over the checked syntax tree. Errors are
// values (cel-go's types.Err) so that && and || can absorb them as the CEL language
// definition says ("Logical operators": false && error == false, true || error == true);
// every other operator and function is strict in its arguments. Each node costs 1 and
// string work costs its length / 10 (cel-go's cost model, roughly); the evaluation stops
// with "operation cancelled: actual cost limit exceeded" past EvalContext::cost_limit.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "cel/cel_internal.h"

namespace phalanx::cel {

Kind KindOf(const Value& v) {
  switch (v.v.index()) {
    case 0:
      return Kind::kNull;
    case 1:
      return Kind::kBool;
    case 2:
      return Kind::kInt;
    case 3:
      return Kind::kUint;
    case 4:
      return Kind::kDouble;
    case 5:
      return Kind::kString;
    case 6:
      return Kind::kList;
    case 7:
      return Kind::kMap;
    case 8:
      return Kind::kQuantity;
    case 9:
      return Kind::kSemver;
    default:
      return Kind::kError;
  }
}

std::string ValueTypeName(const Value& v) { return std::string(KindName(KindOf(v))); }

std::string_view GoTypeName(const Value& v) {
  switch (KindOf(v)) {
    case Kind::kNull:
      return "types.Null";
    case Kind::kBool:
      return "types.Bool";
    case Kind::kInt:
      return "types.Int";
    case Kind::kUint:
      return "types.Uint";
    case Kind::kDouble:
      return "types.Double";
    case Kind::kString:
      return "types.String";
    case Kind::kQuantity:
      return "cel.Quantity";
    case Kind::kSemver:
      return "cel.Semver";
    default:
      return "types.Err";
  }
}

namespace {

bool IsNumeric(Kind k) { return k == Kind::kInt || k == Kind::kUint || k == Kind::kDouble; }

long double AsLongDouble(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v.v)) return static_cast<long double>(*i);
  if (const auto* u = std::get_if<uint64_t>(&v.v)) return static_cast<long double>(*u);
  return static_cast<long double>(std::get<double>(v.v));
}

// -1, 0, 1, or 2 when unordered (NaN). long double holds every int64 and uint64 exactly.
int CompareNumbers(const Value& a, const Value& b) {
  const long double x = AsLongDouble(a);
  const long double y = AsLongDouble(b);
  if (std::isnan(x) || std::isnan(y)) return 2;
  return x < y ? -1 : (x > y ? 1 : 0);
}

Value NoSuchOverload(std::string_view fn, const Value& a, const Value& b) {
  return Value::Error(Cat("no such overload: ", fn, " applied to (", ValueTypeName(a), ", ",
                          ValueTypeName(b), ")"));
}

const MapPtr& EmptyMap() {
  static const MapPtr* const kEmpty = new MapPtr(std::make_shared<MapData>());
  return *kEmpty;
}

// cel-go's errIntOverflow / errUintOverflow (common/types/err.go).
Value Overflow() { return Value::Error(std::string(kIntOverflow)); }
Value UintOverflow() { return Value::Error(std::string(kUintOverflow)); }

Value IntArith(BinOp op, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (op) {
    case BinOp::kAdd:
      if (__builtin_add_overflow(a, b, &r)) return Overflow();
      break;
    case BinOp::kSub:
      if (__builtin_sub_overflow(a, b, &r)) return Overflow();
      break;
    case BinOp::kMul:
      if (__builtin_mul_overflow(a, b, &r)) return Overflow();
      break;
    case BinOp::kDiv:
      if (b == 0) return Value::Error("division by zero");
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return Overflow();
      r = a / b;
      break;
    default:  // kMod
      if (b == 0) return Value::Error("modulus by zero");
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return Overflow();
      r = a % b;
      break;
  }
  return Value{r};
}

Value UintArith(BinOp op, uint64_t a, uint64_t b) {
  uint64_t r = 0;
  switch (op) {
    case BinOp::kAdd:
      if (__builtin_add_overflow(a, b, &r)) return UintOverflow();
      break;
    case BinOp::kSub:
      if (__builtin_sub_overflow(a, b, &r)) return UintOverflow();
      break;
    case BinOp::kMul:
      if (__builtin_mul_overflow(a, b, &r)) return UintOverflow();
      break;
    case BinOp::kDiv:
      if (b == 0) return Value::Error("division by zero");
      r = a / b;
      break;
    default:
      if (b == 0) return Value::Error("modulus by zero");
      r = a % b;
      break;
  }
  return Value{r};
}

Value Arith(BinOp op, const Value& a, const Value& b, EvalContext& ctx) {
  const Kind ka = KindOf(a);
  if (ka != KindOf(b)) return NoSuchOverload(BinOpName(op), a, b);
  switch (ka) {
    case Kind::kInt:
      return IntArith(op, std::get<int64_t>(a.v), std::get<int64_t>(b.v));
    case Kind::kUint:
      return UintArith(op, std::get<uint64_t>(a.v), std::get<uint64_t>(b.v));
    case Kind::kDouble: {
      const double x = std::get<double>(a.v), y = std::get<double>(b.v);
      switch (op) {
        case BinOp::kAdd:
          return Value{x + y};
        case BinOp::kSub:
          return Value{x - y};
        case BinOp::kMul:
          return Value{x * y};
        case BinOp::kDiv:
          return Value{x / y};
        default:
          break;
      }
      break;
    }
    case Kind::kString:
      if (op == BinOp::kAdd) {
        const auto& x = std::get<std::string>(a.v);
        const auto& y = std::get<std::string>(b.v);
        if (!ctx.Charge((x.size() + y.size()) / 10 + 1))
          return Value::Error(std::string(kCostExceeded));
        return Value{x + y};
      }
      break;
    case Kind::kList:
      if (op == BinOp::kAdd) {
        const auto& x = *std::get<ListPtr>(a.v);
        const auto& y = *std::get<ListPtr>(b.v);
        if (!ctx.Charge(x.size() + y.size() + 1)) return Value::Error(std::string(kCostExceeded));
        auto out = std::make_shared<List>(x);
        out->insert(out->end(), y.begin(), y.end());
        return Value{ListPtr(std::move(out))};
      }
      break;
    default:
      break;
  }
  return NoSuchOverload(BinOpName(op), a, b);
}

Value Compare(BinOp op, const Value& a, const Value& b) {
  const Kind ka = KindOf(a), kb = KindOf(b);
  int c = 0;
  if (IsNumeric(ka) && IsNumeric(kb)) {
    c = CompareNumbers(a, b);
    if (c == 2) return Value{false};
  } else if (ka == Kind::kString && kb == Kind::kString) {
    const int r = std::get<std::string>(a.v).compare(std::get<std::string>(b.v));
    c = r < 0 ? -1 : (r > 0 ? 1 : 0);
  } else if (ka == Kind::kBool && kb == Kind::kBool) {
    c = static_cast<int>(std::get<bool>(a.v)) - static_cast<int>(std::get<bool>(b.v));
  } else {
    return NoSuchOverload(BinOpName(op), a, b);
  }
  switch (op) {
    case BinOp::kLt:
      return Value{c < 0};
    case BinOp::kLe:
      return Value{c <= 0};
    case BinOp::kGt:
      return Value{c > 0};
    default:
      return Value{c >= 0};
  }
}

class Evaluator {
 public:
  explicit Evaluator(EvalContext& ctx) : ctx_(ctx) {}

  Value Eval(const Node& n) {
    if (!ctx_.Charge(1)) return Cancelled();
    switch (n.op) {
      case Op::kLiteral:
        return n.literal;
      case Op::kIdent:
        return n.slot >= 0 ? ctx_.slots[static_cast<size_t>(n.slot)] : ctx_.device;
      case Op::kSelect:
        return Select(n);
      case Op::kHas:
        return Has(n);
      case Op::kIndex:
        return Index(n);
      case Op::kList:
        return ListLiteral(n);
      case Op::kAnd:
      case Op::kOr:
        return Logical(n);
      case Op::kNot:
        return Not(n);
      case Op::kNeg:
        return Neg(n);
      case Op::kTernary:
        return Ternary(n);
      case Op::kBinary:
        return Binary(n);
      case Op::kIn:
        return In(n);
      case Op::kAll:
      case Op::kExists:
      case Op::kExistsOne:
        return Comprehension(n);
      case Op::kBind: {
        ctx_.slots[static_cast<size_t>(n.slot)] = Eval(*n.args[0]);
        return Eval(*n.args[1]);
      }
      case Op::kCall:
        return Call(n);
    }
    return Value::Error("internal error: unknown node");
  }

 private:
  EvalContext& ctx_;

  static Value Cancelled() { return Value::Error(std::string(kCostExceeded)); }

  // m.key / m["key"]: compile.go's outer maps read a missing domain as an empty map.
  static Value Lookup(const MapData& m, std::string_view key) {
    auto it = m.entries.find(key);
    if (it != m.entries.end()) return it->second;
    if (m.default_empty) return Value{EmptyMap()};
    return Value::Error(Cat("no such key: ", key));
  }

  Value Select(const Node& n) {
    Value t = Eval(*n.args[0]);
    if (t.IsError()) return t;
    if (const auto* m = std::get_if<MapPtr>(&t.v)) return Lookup(**m, n.name);
    return Value::Error(Cat("type '", ValueTypeName(t), "' does not support field selection"));
  }

  Value Has(const Node& n) {
    Value t = Eval(*n.args[0]);
    if (t.IsError()) return t;
    if (const auto* m = std::get_if<MapPtr>(&t.v)) return Value{(*m)->entries.count(n.name) > 0};
    return Value::Error(Cat("invalid type for field selection in has(): ", ValueTypeName(t)));
  }

  Value Index(const Node& n) {
    Value c = Eval(*n.args[0]);
    if (c.IsError()) return c;
    Value i = Eval(*n.args[1]);
    if (i.IsError()) return i;
    if (const auto* m = std::get_if<MapPtr>(&c.v)) {
      if (const auto* key = std::get_if<std::string>(&i.v)) return Lookup(**m, *key);
      return Value::Error(Cat("no such key: ", ValueTypeName(i), " key in a map of strings"));
    }
    if (const auto* l = std::get_if<ListPtr>(&c.v)) {
      int64_t k = -1;
      if (const auto* x = std::get_if<int64_t>(&i.v)) {
        k = *x;
      } else if (const auto* u = std::get_if<uint64_t>(&i.v)) {
        k = *u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                ? -1
                : static_cast<int64_t>(*u);
      } else {
        return NoSuchOverload("_[_]", c, i);
      }
      if (k < 0 || static_cast<uint64_t>(k) >= (*l)->size()) {
        return Value::Error(Cat("index out of range: ", k));
      }
      return (**l)[static_cast<size_t>(k)];
    }
    return NoSuchOverload("_[_]", c, i);
  }

  Value ListLiteral(const Node& n) {
    auto out = std::make_shared<List>();
    out->reserve(n.args.size());
    for (const auto& a : n.args) {
      Value v = Eval(*a);
      if (v.IsError()) return v;
      out->push_back(std::move(v));
    }
    return Value{ListPtr(std::move(out))};
  }

  // CEL's commutative && and ||: false (true) wins over an error in any position.
  Value Logical(const Node& n) {
    const bool is_and = n.op == Op::kAnd;
    std::optional<Value> error;
    for (const auto& a : n.args) {
      Value v = Eval(*a);
      if (ctx_.cancelled) return Cancelled();
      if (const auto* b = std::get_if<bool>(&v.v)) {
        if (*b != is_and) return v;
        continue;
      }
      if (!error) {
        error = v.IsError() ? v
                            : Value::Error(Cat("no such overload: ", is_and ? "_&&_" : "_||_",
                                               " applied to ", ValueTypeName(v)));
      }
    }
    return error ? *error : Value{is_and};
  }

  Value Not(const Node& n) {
    Value v = Eval(*n.args[0]);
    if (v.IsError()) return v;
    if (const auto* b = std::get_if<bool>(&v.v)) return Value{!*b};
    return Value::Error(Cat("no such overload: !_ applied to ", ValueTypeName(v)));
  }

  Value Neg(const Node& n) {
    Value v = Eval(*n.args[0]);
    if (v.IsError()) return v;
    if (const auto* i = std::get_if<int64_t>(&v.v)) {
      if (*i == std::numeric_limits<int64_t>::min()) return Overflow();
      return Value{-*i};
    }
    if (const auto* d = std::get_if<double>(&v.v)) return Value{-*d};
    return Value::Error(Cat("no such overload: -_ applied to ", ValueTypeName(v)));
  }

  Value Ternary(const Node& n) {
    Value c = Eval(*n.args[0]);
    if (c.IsError()) return c;
    if (const auto* b = std::get_if<bool>(&c.v)) return Eval(*n.args[*b ? 1 : 2]);
    return Value::Error(Cat("no such overload: _?_:_ applied to ", ValueTypeName(c)));
  }

  Value Binary(const Node& n) {
    Value a = Eval(*n.args[0]);
    if (a.IsError()) return a;
    Value b = Eval(*n.args[1]);
    if (b.IsError()) return b;
    switch (n.bin) {
      case BinOp::kEq:
        return Value{ValuesEqual(a, b)};
      case BinOp::kNe:
        return Value{!ValuesEqual(a, b)};
      case BinOp::kLt:
      case BinOp::kLe:
      case BinOp::kGt:
      case BinOp::kGe:
        return Compare(n.bin, a, b);
      default:
        return Arith(n.bin, a, b, ctx_);
    }
  }

  Value In(const Node& n) {
    Value e = Eval(*n.args[0]);
    if (e.IsError()) return e;
    Value c = Eval(*n.args[1]);
    if (c.IsError()) return c;
    if (const auto* l = std::get_if<ListPtr>(&c.v)) {
      if (!ctx_.Charge((*l)->size())) return Cancelled();
      for (const Value& x : **l) {
        if (ValuesEqual(e, x)) return Value{true};
      }
      return Value{false};
    }
    if (const auto* m = std::get_if<MapPtr>(&c.v)) {
      if (const auto* key = std::get_if<std::string>(&e.v))
        return Value{(*m)->entries.count(*key) > 0};
      return Value{false};
    }
    return NoSuchOverload("@in", e, c);
  }

  Value Comprehension(const Node& n);
  Value Call(const Node& n);
};

Value Evaluator::Comprehension(const Node& n) {
  Value range = Eval(*n.args[0]);
  if (range.IsError()) return range;
  List keys;
  const List* items = nullptr;
  const MapData* map = nullptr;
  if (const auto* l = std::get_if<ListPtr>(&range.v)) {
    items = l->get();
  } else if (const auto* m = std::get_if<MapPtr>(&range.v)) {
    map = m->get();
    for (const auto& [k, v] : (*m)->entries) keys.push_back(Value{k});
    items = &keys;
  } else {
    return Value::Error(Cat("got '", GoTypeName(range), "', expected iterable type"));
  }
  std::optional<Value> error;
  int64_t count = 0;
  for (size_t i = 0; i < items->size(); ++i) {
    const Value& item = (*items)[i];
    if (n.slot2 < 0) {
      ctx_.slots[static_cast<size_t>(n.slot)] = item;
    } else if (map != nullptr) {  // key, value
      ctx_.slots[static_cast<size_t>(n.slot)] = item;
      ctx_.slots[static_cast<size_t>(n.slot2)] =
          map->entries.find(std::get<std::string>(item.v))->second;
    } else {  // index, element
      ctx_.slots[static_cast<size_t>(n.slot)] = Value{static_cast<int64_t>(i)};
      ctx_.slots[static_cast<size_t>(n.slot2)] = item;
    }
    Value p = Eval(*n.args[1]);
    if (ctx_.cancelled) return Cancelled();
    const auto* b = std::get_if<bool>(&p.v);
    if (b == nullptr) {
      Value err = p.IsError() ? p
                              : Value::Error(Cat("no such overload: the condition is ",
                                                 ValueTypeName(p), ", not bool"));
      if (n.op == Op::kExistsOne) return err;  // exists_one is strict
      if (!error) error = std::move(err);
      continue;
    }
    if (n.op == Op::kAll && !*b) return Value{false};
    if (n.op == Op::kExists && *b) return Value{true};
    if (n.op == Op::kExistsOne && *b) ++count;
  }
  if (n.op == Op::kExistsOne) return Value{count == 1};
  if (error) return *error;
  return Value{n.op == Op::kAll};
}

Value Evaluator::Call(const Node& n) {
  std::vector<Value> args;
  args.reserve(n.args.size());
  for (const auto& a : n.args) {
    Value v = Eval(*a);
    if (v.IsError()) return v;
    args.push_back(std::move(v));
  }
  for (const Overload* o : n.overloads) {
    bool ok = true;
    for (size_t i = 0; i < args.size() && ok; ++i) {
      ok = o->params[i] == Kind::kDyn || o->params[i] == KindOf(args[i]);
    }
    if (!ok) continue;
    ctx_.call = &n;
    Value r = o->fn(args.data(), ctx_);
    if (ctx_.cancelled) return Cancelled();
    return r;
  }
  std::vector<std::string> names;
  for (const Value& v : args) names.push_back(ValueTypeName(v));
  return Value::Error(Cat("no such overload: ", n.name, "(", Join(names, ", "), ")"));
}

}  // namespace

bool ValuesEqual(const Value& a, const Value& b) {
  const Kind ka = KindOf(a), kb = KindOf(b);
  if (IsNumeric(ka) && IsNumeric(kb)) return CompareNumbers(a, b) == 0;
  if (ka != kb) return false;
  switch (ka) {
    case Kind::kNull:
      return true;
    case Kind::kBool:
      return std::get<bool>(a.v) == std::get<bool>(b.v);
    case Kind::kString:
      return std::get<std::string>(a.v) == std::get<std::string>(b.v);
    case Kind::kQuantity:
      return std::get<api::Quantity>(a.v).Compare(std::get<api::Quantity>(b.v)) == 0;
    case Kind::kSemver:
      return CompareSemver(*std::get<std::shared_ptr<const Semver>>(a.v),
                           *std::get<std::shared_ptr<const Semver>>(b.v)) == 0;
    case Kind::kList: {
      const List& x = *std::get<ListPtr>(a.v);
      const List& y = *std::get<ListPtr>(b.v);
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!ValuesEqual(x[i], y[i])) return false;
      }
      return true;
    }
    case Kind::kMap: {
      const MapData& x = *std::get<MapPtr>(a.v);
      const MapData& y = *std::get<MapPtr>(b.v);
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x.entries) {
        auto it = y.entries.find(k);
        if (it == y.entries.end() || !ValuesEqual(v, it->second)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

Value Evaluate(const Node& node, EvalContext& ctx) {
  Evaluator e(ctx);
  return e.Eval(node);
}

}  // namespace phalanx::cel
