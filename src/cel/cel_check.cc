// The type checker of the CEL subset: resolves identifiers (the `device` variable and
// macro-bound variables), fields of `device` (compile.go's kubernetes.DRADevice: driver,
// attributes, capacity) and function overloads, and infers a static type per node. As in
// cel-go's checker, a known type mismatch is a compile error ("found no matching overload
// for '_+_' applied to '(int, double)'"); values of unknown type (`dyn`, e.g. attribute
// values) are checked at runtime.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cel/cel_internal.h"

namespace phalanx::cel {

std::string_view KindName(Kind k) {
  switch (k) {
    case Kind::kDyn:
      return "dyn";
    case Kind::kNull:
      return "null_type";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kUint:
      return "uint";
    case Kind::kDouble:
      return "double";
    case Kind::kString:
      return "string";
    case Kind::kList:
      return "list";
    case Kind::kMap:
      return "map";
    case Kind::kQuantity:
      return "kubernetes.Quantity";
    case Kind::kSemver:
      return "kubernetes.Semver";
    case Kind::kDevice:
      return "kubernetes.DRADevice";
    case Kind::kError:
      return "error";
  }
  return "?";
}

std::string Type::Name() const {
  if (kind == Kind::kList) return Cat("list(", Elem().Name(), ")");
  if (kind == Kind::kMap) return Cat("map(string, ", Elem().Name(), ")");
  return std::string(KindName(kind));
}

std::string_view BinOpName(BinOp op) {
  switch (op) {
    case BinOp::kAdd:
      return "_+_";
    case BinOp::kSub:
      return "_-_";
    case BinOp::kMul:
      return "_*_";
    case BinOp::kDiv:
      return "_/_";
    case BinOp::kMod:
      return "_%_";
    case BinOp::kEq:
      return "_==_";
    case BinOp::kNe:
      return "_!=_";
    case BinOp::kLt:
      return "_<_";
    case BinOp::kLe:
      return "_<=_";
    case BinOp::kGt:
      return "_>_";
    case BinOp::kGe:
      return "_>=_";
  }
  return "?";
}

namespace {

bool IsDyn(const Type& t) { return t.kind == Kind::kDyn; }
bool IsNumeric(Kind k) { return k == Kind::kInt || k == Kind::kUint || k == Kind::kDouble; }
// t may hold a value of kind k (dyn holds anything).
bool Admits(const Type& t, Kind k) { return IsDyn(t) || t.kind == k; }

// cel-go's isAssignable (checker/types.go) for this subset's types: dyn unifies with
// anything; null with the nullable opaque types (Quantity, Semver) and itself; lists and
// maps element-wise; otherwise the kinds must agree.
bool Assignable(const Type& a, const Type& b) {
  if (IsDyn(a) || IsDyn(b)) return true;
  const auto nullable = [](const Type& t) {
    return t.kind == Kind::kNull || t.kind == Kind::kQuantity || t.kind == Kind::kSemver;
  };
  if (a.kind == Kind::kNull) return nullable(b);
  if (b.kind == Kind::kNull) return nullable(a);
  if (a.kind != b.kind) return false;
  if (a.kind == Kind::kList || a.kind == Kind::kMap) return Assignable(a.Elem(), b.Elem());
  return true;
}

// cel-go's isEqualOrLessSpecific: `a` is `b`, or matches it through dyn.
bool EqualOrLessSpecific(const Type& a, const Type& b) {
  if (IsDyn(a)) return true;
  if (IsDyn(b) || a.kind != b.kind) return false;
  if (a.kind == Kind::kList || a.kind == Kind::kMap) {
    return EqualOrLessSpecific(a.Elem(), b.Elem());
  }
  return true;
}

// cel-go's mostGeneral: the less specific of two types known to unify.
Type MostGeneral(const Type& a, const Type& b) { return EqualOrLessSpecific(a, b) ? a : b; }

struct Failure {
  CompileError error;
};
[[noreturn]] void Fail(size_t pos, std::string message) {
  throw Failure{CompileError{pos, std::move(message)}};
}

std::string NoOverload(std::string_view fn, const std::vector<Type>& args) {
  std::vector<std::string> names;
  names.reserve(args.size());
  for (const Type& t : args) names.push_back(t.Name());
  return Cat("found no matching overload for '", fn, "' applied to '(", Join(names, ", "), ")'");
}

Type DeviceField(const std::string& field) {
  if (field == "driver") return Type::Of(Kind::kString);
  if (field == "attributes") return Type::MapOf(Type::MapOf(Type::Of(Kind::kDyn)));
  if (field == "capacity") return Type::MapOf(Type::MapOf(Type::Of(Kind::kQuantity)));
  if (field == "allowMultipleAllocations") return Type::Of(Kind::kBool);
  return Type::Of(Kind::kError);
}

void FoldConstant(Node& n);

class Checker {
 public:
  int slots = 0;

  Type Check(Node& n) {
    n.type = CheckOp(n);
    return n.type;
  }

 private:
  struct Var {
    std::string name;
    Type type;
    int slot;
  };
  std::vector<Var> scope_;

  Type CheckOp(Node& n) {
    switch (n.op) {
      case Op::kLiteral:
        return Type::Of(KindOf(n.literal));
      case Op::kIdent:
        return Ident(n);
      case Op::kSelect:
        return Select(n, /*has=*/false);
      case Op::kHas:
        Select(n, /*has=*/true);
        return Type::Of(Kind::kBool);
      case Op::kIndex:
        return Index(n);
      case Op::kList:
        return ListLiteral(n);
      case Op::kAnd:
      case Op::kOr:
        return Logical(n);
      case Op::kNot:
        return Unary(n, "!_", Kind::kBool);
      case Op::kNeg:
        return Unary(n, "-_", Kind::kDyn);
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
      case Op::kBind:
        return Bind(n);
      case Op::kCall:
        return Call(n);
    }
    Fail(n.pos, "internal error: unknown node");
  }

  Type Ident(Node& n) {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
      if (it->name == n.name) {
        n.slot = it->slot;
        return it->type;
      }
    }
    if (n.name == "device") return Type::Of(Kind::kDevice);
    Fail(n.pos, Cat("undeclared reference to '", n.name,
                    "' (the only variable of a device selector is 'device')"));
  }

  Type Select(Node& n, bool has) {
    const Type t = Check(*n.args[0]);
    if (t.kind == Kind::kDevice) {
      Type f = DeviceField(n.name);
      if (f.kind == Kind::kError) {
        Fail(n.pos, Cat("undefined field '", n.name,
                        "' (a device has 'driver', 'attributes', 'capacity' and "
                        "'allowMultipleAllocations')"));
      }
      return f;
    }
    if (t.kind == Kind::kMap) return t.Elem();
    if (IsDyn(t)) return t;
    Fail(n.pos,
         Cat("type '", t.Name(), "' does not support field selection", has ? " (in has())" : ""));
  }

  Type Index(Node& n) {
    const Type t = Check(*n.args[0]);
    const Type i = Check(*n.args[1]);
    if (t.kind == Kind::kList && (Admits(i, Kind::kInt) || i.kind == Kind::kUint)) return t.Elem();
    if (t.kind == Kind::kMap && Admits(i, Kind::kString)) return t.Elem();
    if (IsDyn(t) &&
        (IsDyn(i) || i.kind == Kind::kString || i.kind == Kind::kInt || i.kind == Kind::kUint)) {
      return t;
    }
    Fail(n.pos, NoOverload("_[_]", {t, i}));
  }

  // The Kubernetes base environment sets cel.HomogeneousAggregateLiterals: the elements
  // of a list literal must have one type (cel-go checker.go joinTypes), so `[1, 'a']` is
  // "expected type 'int' but found 'string'" at the second element. A dyn element (an
  // attribute value) joins any type.
  Type ListLiteral(Node& n) {
    std::optional<Type> elem;
    for (auto& a : n.args) {
      const Type t = Check(*a);
      if (!elem) {
        elem = t;
      } else if (Assignable(*elem, t)) {
        elem = MostGeneral(*elem, t);
      } else {
        Fail(a->pos, Cat("expected type '", elem->Name(), "' but found '", t.Name(), "'"));
      }
    }
    return Type::ListOf(elem.value_or(Type::Of(Kind::kDyn)));
  }

  Type Logical(Node& n) {
    const std::string_view fn = n.op == Op::kAnd ? "_&&_" : "_||_";
    for (auto& a : n.args) {
      const Type t = Check(*a);
      if (!Admits(t, Kind::kBool)) {
        Fail(a->pos, Cat("found no matching overload for '", fn, "': operand of type '", t.Name(),
                         "' is not bool"));
      }
    }
    return Type::Of(Kind::kBool);
  }

  Type Unary(Node& n, std::string_view fn, Kind want) {
    const Type t = Check(*n.args[0]);
    const bool ok = want == Kind::kBool
                        ? Admits(t, Kind::kBool)
                        : (IsDyn(t) || t.kind == Kind::kInt || t.kind == Kind::kDouble);
    if (!ok) Fail(n.pos, NoOverload(fn, {t}));
    return t;
  }

  Type Ternary(Node& n) {
    const Type c = Check(*n.args[0]);
    const Type a = Check(*n.args[1]);
    const Type b = Check(*n.args[2]);
    if (!Admits(c, Kind::kBool)) Fail(n.pos, NoOverload("_?_:_", {c, a, b}));
    if (IsDyn(a) || IsDyn(b) || a.kind == Kind::kNull || b.kind == Kind::kNull) {
      return Type::Of(Kind::kDyn);
    }
    if (a.Name() != b.Name()) Fail(n.pos, NoOverload("_?_:_", {c, a, b}));
    return a;
  }

  Type Binary(Node& n) {
    const Type l = Check(*n.args[0]);
    const Type r = Check(*n.args[1]);
    const auto fail = [&] { Fail(n.pos, NoOverload(BinOpName(n.bin), {l, r})); };
    switch (n.bin) {
      case BinOp::kEq:
      case BinOp::kNe:
        if (!IsDyn(l) && !IsDyn(r) && l.kind != Kind::kNull && r.kind != Kind::kNull &&
            l.kind != r.kind) {
          fail();
        }
        return Type::Of(Kind::kBool);
      case BinOp::kLt:
      case BinOp::kLe:
      case BinOp::kGt:
      case BinOp::kGe: {
        // Cross-type numeric comparisons are allowed (the Kubernetes base environment
        // enables cel.CrossTypeNumericComparisons).
        const auto orderable = [](const Type& t) {
          return IsDyn(t) || IsNumeric(t.kind) || t.kind == Kind::kString || t.kind == Kind::kBool;
        };
        if (!orderable(l) || !orderable(r)) fail();
        if (!IsDyn(l) && !IsDyn(r) && l.kind != r.kind &&
            !(IsNumeric(l.kind) && IsNumeric(r.kind))) {
          fail();
        }
        return Type::Of(Kind::kBool);
      }
      default:
        return Arithmetic(n, l, r, fail);
    }
  }

  template <typename F>
  Type Arithmetic(const Node& n, const Type& l, const Type& r, F fail) {
    const auto allowed = [&](Kind k) {
      switch (n.bin) {
        case BinOp::kAdd:
          return IsNumeric(k) || k == Kind::kString || k == Kind::kList;
        case BinOp::kMod:
          return k == Kind::kInt || k == Kind::kUint;
        default:
          return IsNumeric(k);
      }
    };
    if (!IsDyn(l) && !allowed(l.kind)) fail();
    if (!IsDyn(r) && !allowed(r.kind)) fail();
    if (!IsDyn(l) && !IsDyn(r)) {
      if (l.kind != r.kind) fail();  // no implicit int/uint/double conversions
      if (l.kind == Kind::kList && l.Name() != r.Name()) return Type::ListOf(Type::Of(Kind::kDyn));
      return l;
    }
    return IsDyn(l) ? r : l;
  }

  Type In(Node& n) {
    const Type e = Check(*n.args[0]);
    const Type c = Check(*n.args[1]);
    const auto fail = [&] { Fail(n.pos, NoOverload("@in", {e, c})); };
    if (c.kind == Kind::kMap) {
      if (!Admits(e, Kind::kString)) fail();
    } else if (c.kind == Kind::kList) {
      const Type el = c.Elem();
      if (!IsDyn(e) && !IsDyn(el) && e.kind != el.kind && e.kind != Kind::kNull) fail();
    } else if (!IsDyn(c)) {
      fail();
    }
    return Type::Of(Kind::kBool);
  }

  // One variable: a list's elements or a map's keys. Two (cel-go ext/comprehensions.go): a
  // list's index (int) and element, or a map's key and value.
  Type Comprehension(Node& n) {
    const Type range = Check(*n.args[0]);
    const bool two = !n.name2.empty();
    Type var;
    Type var2 = Type::Of(Kind::kDyn);
    if (range.kind == Kind::kList) {
      var = two ? Type::Of(Kind::kInt) : range.Elem();
      var2 = range.Elem();
    } else if (range.kind == Kind::kMap) {
      var = Type::Of(Kind::kString);
      var2 = range.Elem();
    } else if (IsDyn(range)) {
      var = range;
    } else {
      Fail(n.pos, Cat("expression of type '", range.Name(),
                      "' cannot be range of a comprehension (must be list, map, or dynamic)"));
    }
    n.slot = slots++;
    scope_.push_back(Var{n.name, var, n.slot});
    if (two) {
      n.slot2 = slots++;
      scope_.push_back(Var{n.name2, var2, n.slot2});
    }
    const Type pred = Check(*n.args[1]);
    scope_.pop_back();
    if (two) scope_.pop_back();
    if (!Admits(pred, Kind::kBool)) {
      Fail(n.args[1]->pos, Cat("the condition of a comprehension must be bool, not ", pred.Name()));
    }
    return Type::Of(Kind::kBool);
  }

  Type Bind(Node& n) {
    const Type init = Check(*n.args[0]);
    n.slot = slots++;
    scope_.push_back(Var{n.name, init, n.slot});
    const Type body = Check(*n.args[1]);
    scope_.pop_back();
    return body;
  }

  Type Call(Node& n);

  bool InScope(const std::string& name) const {
    for (const Var& v : scope_) {
      if (v.name == name) return true;
    }
    return false;
  }
};

Type Checker::Call(Node& n) {
  // A namespaced function of a library the Kubernetes environment has and this subset
  // does not (strings.quote, sets.contains, math.greatest, ...): say so, rather than
  // "undeclared reference to 'strings'".
  if (n.member && n.args[0]->op == Op::kIdent && !InScope(n.args[0]->name) &&
      IsKnownUnsupportedFunction(n.args[0]->name)) {
    Fail(n.pos, Cat("function '", n.args[0]->name, ".", n.name,
                    "' is not supported by this CEL subset (see docs/dra-cel.md)"));
  }
  std::vector<Type> args;
  args.reserve(n.args.size());
  for (auto& a : n.args) args.push_back(Check(*a));
  bool named = false;
  for (const Overload& o : Overloads()) {
    if (o.name != n.name) continue;
    named = true;
    if (o.member != n.member || o.params.size() != args.size()) continue;
    bool ok = true;
    for (size_t i = 0; i < args.size() && ok; ++i) ok = Admits(args[i], o.params[i]);
    if (ok) n.overloads.push_back(&o);
  }
  if (!named) {
    if (IsKnownUnsupportedFunction(n.name)) {
      Fail(n.pos, Cat("function '", n.name,
                      "' is not supported by this CEL subset (see docs/dra-cel.md)"));
    }
    Fail(n.pos, Cat("undeclared reference to '", n.name, "'"));
  }
  if (n.overloads.empty()) {
    std::string fn = n.member ? Cat(args[0].Name(), ".", n.name) : n.name;
    if (n.member) args.erase(args.begin());
    Fail(n.pos, NoOverload(fn, args));
  }
  // matches() with a literal pattern: compile the pattern now, so that a bad pattern is a
  // compile error rather than a runtime one.
  if (n.name == "matches" && n.args.size() == 2 && n.args[1]->op == Op::kLiteral &&
      std::holds_alternative<std::string>(n.args[1]->literal.v)) {
    auto re = Regex::Compile(std::get<std::string>(n.args[1]->literal.v));
    if (!re.ok()) Fail(n.args[1]->pos, std::string(re.status().message()));
    n.regex = *std::move(re);
  }
  FoldConstant(n);
  const Kind result = n.overloads[0]->result;
  for (const Overload* o : n.overloads) {
    if (o->result != result) return Type::Of(Kind::kDyn);
  }
  if (result == Kind::kList) return Type::ListOf(Type::Of(Kind::kString));  // split()
  return Type::Of(result);
}

// quantity("4Gi") and semver("1.2.3") with literal arguments are parsed once, here,
// instead of at every evaluation. A literal that does not parse stays a call, so the
// error happens at evaluation time as upstream (where `false && quantity("x")` is false).
void FoldConstant(Node& n) {
  if (n.name != "quantity" && n.name != "semver") return;
  if (n.member || n.overloads.size() != 1) return;
  std::vector<Value> args;
  for (const auto& a : n.args) {
    if (a->op != Op::kLiteral) return;
    args.push_back(a->literal);
  }
  EvalContext ctx;
  Value v = n.overloads[0]->fn(args.data(), ctx);
  if (v.IsError()) return;
  n.op = Op::kLiteral;
  n.literal = std::move(v);
  n.args.clear();
  n.overloads.clear();
}

}  // namespace

std::optional<CompileError> Check(Node& root, int* slots) {
  try {
    Checker c;
    c.Check(root);
    *slots = c.slots;
    return std::nullopt;
  } catch (const Failure& f) {
    return f.error;
  }
}

}  // namespace phalanx::cel
