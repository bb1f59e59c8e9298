// The regular expressions of matches(): a subset of RE2 syntax (which CEL specifies,
// cel-spec doc/langdef.md "matches"), compiled to a Thompson NFA and run as a Pike VM
// without captures, so matching is O(text x pattern) with no backtracking.
//
// Supported: literals (UTF-8), '.', character classes [a-z] [^...] with escapes, the
// escapes \d \D \w \W \s \S \n \t \r \f \v \\ and escaped punctuation, anchors ^ $ \A \z,
// groups (...) and (?:...), alternation |, quantifiers * + ? {n} {n,} {n,m} (and their
// lazy forms, which match the same strings). Rejected with "error parsing regexp: ...":
// flags (?i), named groups, \b \B, \pN, POSIX classes [[:alpha:]], backreferences,
// repetition counts over 1000, programs over 20000 instructions, nesting over 100.
#include <cstdint>
#include <string>
#include <vector>

#include "cel/cel_internal.h"

namespace phalanx::cel {

bool Regex::Class::Contains(uint32_t c) const {
  bool in = false;
  for (const auto& [lo, hi] : ranges) {
    if (c >= lo && c <= hi) {
      in = true;
      break;
    }
  }
  return in != negated;
}

namespace {

constexpr size_t kMaxProgram = 20000;
constexpr int kMaxRepeat = 1000;
constexpr int kMaxDepth = 100;

// Decodes one UTF-8 sequence at s[*i]; an invalid byte reads as U+FFFD.
uint32_t DecodeUtf8(std::string_view s, size_t* i) {
  const auto b = static_cast<unsigned char>(s[*i]);
  int n = 0;
  uint32_t cp = 0;
  if (b < 0x80) {
    ++*i;
    return b;
  }
  if ((b & 0xE0) == 0xC0) {
    n = 1;
    cp = b & 0x1F;
  } else if ((b & 0xF0) == 0xE0) {
    n = 2;
    cp = b & 0x0F;
  } else if ((b & 0xF8) == 0xF0) {
    n = 3;
    cp = b & 0x07;
  } else {
    ++*i;
    return 0xFFFD;
  }
  if (*i + static_cast<size_t>(n) >= s.size()) {  // truncated sequence
    ++*i;
    return 0xFFFD;
  }
  for (int k = 1; k <= n; ++k) {
    const auto c = static_cast<unsigned char>(s[*i + static_cast<size_t>(k)]);
    if ((c & 0xC0) != 0x80) {
      ++*i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (c & 0x3F);
  }
  *i += static_cast<size_t>(n) + 1;
  return cp;
}

struct RNode {
  enum T : uint8_t { kEmpty, kLit, kClass, kAny, kBol, kEol, kCat, kAlt, kRepeat };
  explicit RNode(T type = kEmpty) : t(type) {}
  T t;
  uint32_t c = 0;
  int cls = -1;
  int min = 0, max = 0;  // kRepeat; max -1 = unbounded
  std::vector<RNode> kids;
};

struct Failure {
  std::string message;
};
[[noreturn]] void Fail(std::string what) { throw Failure{Cat("error parsing regexp: ", what)}; }

}  // namespace

class RegexCompiler {
 public:
  RegexCompiler(std::string_view p, Regex& re) : p_(p), re_(re) {}

  void Run() {
    RNode root = Alternation(0);
    if (i_ < p_.size()) Fail(Cat("unexpected ): `", p_, "`"));
    Emit(root);
    Push({Regex::Inst::kMatch});
  }

 private:
  std::string_view p_;
  Regex& re_;
  size_t i_ = 0;

  bool More() const { return i_ < p_.size(); }
  char Cur() const { return p_[i_]; }

  RNode Alternation(int depth) {
    if (depth > kMaxDepth) Fail("expression nests too deeply");
    RNode alt{RNode::kAlt};
    alt.kids.push_back(Concat(depth));
    while (More() && Cur() == '|') {
      ++i_;
      alt.kids.push_back(Concat(depth));
    }
    if (alt.kids.size() == 1) return std::move(alt.kids[0]);
    return alt;
  }

  RNode Concat(int depth) {
    RNode cat{RNode::kCat};
    while (More() && Cur() != '|' && Cur() != ')') {
      RNode atom = Atom(depth);
      cat.kids.push_back(Quantified(std::move(atom)));
    }
    return cat;
  }

  RNode Quantified(RNode atom) {
    while (More()) {
      int min = 0, max = 0;
      const char c = Cur();
      if (c == '*') {
        min = 0, max = -1;
        ++i_;
      } else if (c == '+') {
        min = 1, max = -1;
        ++i_;
      } else if (c == '?') {
        min = 0, max = 1;
        ++i_;
      } else if (c == '{' && Counted(&min, &max)) {
        // i_ advanced by Counted
      } else {
        return atom;
      }
      if (atom.t == RNode::kRepeat) Fail(Cat("invalid nested repetition operator: `", p_, "`"));
      if (atom.t == RNode::kBol || atom.t == RNode::kEol || atom.t == RNode::kEmpty) {
        Fail(Cat("missing argument to repetition operator: `", std::string(1, c), "`"));
      }
      if (More() && Cur() == '?') ++i_;  // lazy: same set of matching strings
      RNode r{RNode::kRepeat};
      r.min = min;
      r.max = max;
      r.kids.push_back(std::move(atom));
      atom = std::move(r);
    }
    return atom;
  }

  // {n}, {n,}, {n,m}; false (nothing consumed) when not a repetition, as RE2 reads a
  // malformed '{' as a literal.
  bool Counted(int* min, int* max) {
    size_t k = i_ + 1;
    auto number = [&](int* out) {
      const size_t b = k;
      long v = 0;
      while (k < p_.size() && p_[k] >= '0' && p_[k] <= '9' && v <= kMaxRepeat)
        v = v * 10 + (p_[k++] - '0');
      if (k == b) return false;
      *out = static_cast<int>(v > kMaxRepeat ? kMaxRepeat + 1 : v);
      return true;
    };
    if (!number(min)) return false;
    *max = *min;
    if (k < p_.size() && p_[k] == ',') {
      ++k;
      if (!number(max)) *max = -1;
    }
    if (k >= p_.size() || p_[k] != '}') return false;
    if (*min > kMaxRepeat || *max > kMaxRepeat || (*max != -1 && *max < *min)) {
      Fail(Cat("invalid repeat count: `", p_.substr(i_, k + 1 - i_), "`"));
    }
    i_ = k + 1;
    return true;
  }

  RNode Atom(int depth) {
    const char c = Cur();
    if (c == '(') {
      ++i_;
      if (More() && Cur() == '?') {
        if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
          i_ += 2;
        } else {
          Fail("flags and named groups ('(?i)', '(?P<name>') are not supported");
        }
      }
      RNode inner = Alternation(depth + 1);
      if (!More() || Cur() != ')') Fail(Cat("missing closing ): `", p_, "`"));
      ++i_;
      return inner;
    }
    if (c == '[') return ClassAtom();
    if (c == '*' || c == '+' || c == '?') {
      Fail(Cat("missing argument to repetition operator: `", std::string(1, c), "`"));
    }
    ++i_;
    if (c == '.') return RNode(RNode::kAny);
    if (c == '^') return RNode(RNode::kBol);
    if (c == '$') return RNode(RNode::kEol);
    if (c == '\\') return Escape(/*in_class=*/false);
    --i_;
    RNode lit{RNode::kLit};
    lit.c = DecodeUtf8(p_, &i_);
    return lit;
  }

  int AddClass(Regex::Class cls) {
    re_.classes_.push_back(std::move(cls));
    return static_cast<int>(re_.classes_.size() - 1);
  }

  static void Perl(char e, Regex::Class* cls) {
    switch (e | 0x20) {
      case 'd':
        cls->ranges.push_back({'0', '9'});
        break;
      case 's':
        for (uint32_t w : {'\t', '\n', '\f', '\r', ' '}) cls->ranges.push_back({w, w});
        break;
      default:  // w
        cls->ranges.insert(cls->ranges.end(), {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}, {'_', '_'}});
    }
  }

  // After a backslash. In a class, returns a kLit or a kClass node to merge.
  RNode Escape(bool in_class) {
    if (!More()) Fail("trailing backslash at end of expression");
    const char e = Cur();
    ++i_;
    RNode lit{RNode::kLit};
    switch (e) {
      case 'n':
        lit.c = '\n';
        return lit;
      case 't':
        lit.c = '\t';
        return lit;
      case 'r':
        lit.c = '\r';
        return lit;
      case 'f':
        lit.c = '\f';
        return lit;
      case 'v':
        lit.c = '\v';
        return lit;
      case 'd':
      case 'D':
      case 's':
      case 'S':
      case 'w':
      case 'W': {
        Regex::Class cls;
        Perl(e, &cls);
        cls.negated = e >= 'A' && e <= 'Z';
        RNode n{RNode::kClass};
        n.cls = AddClass(std::move(cls));
        return n;
      }
      case 'A':
        if (!in_class) return RNode(RNode::kBol);
        break;
      case 'z':
        if (!in_class) return RNode(RNode::kEol);
        break;
      default:
        break;
    }
    const bool punct = (e >= '!' && e <= '/') || (e >= ':' && e <= '@') || (e >= '[' && e <= '`') ||
                       (e >= '{' && e <= '~');
    if (punct) {
      lit.c = static_cast<unsigned char>(e);
      return lit;
    }
    Fail(Cat("invalid or unsupported escape sequence: `\\", std::string(1, e), "`"));
  }

  uint32_t ClassChar(bool* is_class, Regex::Class* into) {
    *is_class = false;
    if (Cur() == '\\') {
      ++i_;
      RNode n = Escape(/*in_class=*/true);
      if (n.t == RNode::kClass) {
        const Regex::Class& c = re_.classes_[static_cast<size_t>(n.cls)];
        if (c.negated) Fail("negated escapes (\\D \\S \\W) inside [...] are not supported");
        into->ranges.insert(into->ranges.end(), c.ranges.begin(), c.ranges.end());
        *is_class = true;
        return 0;
      }
      return n.c;
    }
    return DecodeUtf8(p_, &i_);
  }

  RNode ClassAtom() {
    const size_t begin = i_;
    ++i_;
    Regex::Class cls;
    if (More() && Cur() == '^') {
      cls.negated = true;
      ++i_;
    }
    if (More() && Cur() == '[' && i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
      Fail("POSIX classes ([[:alpha:]]) are not supported");
    }
    bool first = true;
    for (;;) {
      if (!More()) Fail(Cat("missing closing ]: `", p_.substr(begin), "`"));
      if (Cur() == ']' && !first) break;
      first = false;
      bool is_class = false;
      const uint32_t lo = ClassChar(&is_class, &cls);
      if (is_class) continue;
      uint32_t hi = lo;
      if (i_ + 1 < p_.size() && Cur() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        hi = ClassChar(&is_class, &cls);
        if (is_class || hi < lo)
          Fail(Cat("invalid character class range: `", p_.substr(begin, i_ - begin), "`"));
      }
      cls.ranges.push_back({lo, hi});
    }
    ++i_;
    RNode n{RNode::kClass};
    n.cls = AddClass(std::move(cls));
    return n;
  }

  // ---- code generation (Thompson construction) ----
  int Pc() const { return static_cast<int>(re_.prog_.size()); }
  int Push(Regex::Inst inst) {
    if (re_.prog_.size() >= kMaxProgram) Fail("expression too large");
    re_.prog_.push_back(inst);
    return Pc() - 1;
  }

  void Emit(const RNode& n) {
    switch (n.t) {
      case RNode::kEmpty:
        return;
      case RNode::kLit:
        Push({Regex::Inst::kChar, n.c});
        return;
      case RNode::kClass:
        Push({Regex::Inst::kClass, 0, n.cls});
        return;
      case RNode::kAny:
        Push({Regex::Inst::kAnyNotNL});
        return;
      case RNode::kBol:
        Push({Regex::Inst::kBol});
        return;
      case RNode::kEol:
        Push({Regex::Inst::kEol});
        return;
      case RNode::kCat:
        for (const RNode& k : n.kids) Emit(k);
        return;
      case RNode::kAlt:
        return EmitAlt(n, 0);
      case RNode::kRepeat:
        return EmitRepeat(n);
    }
  }

  void EmitAlt(const RNode& n, size_t from) {
    if (from + 1 == n.kids.size()) return Emit(n.kids[from]);
    const int split = Push({Regex::Inst::kSplit});
    re_.prog_[static_cast<size_t>(split)].x = Pc();
    Emit(n.kids[from]);
    const int jmp = Push({Regex::Inst::kJmp});
    re_.prog_[static_cast<size_t>(split)].y = Pc();
    EmitAlt(n, from + 1);
    re_.prog_[static_cast<size_t>(jmp)].x = Pc();
  }

  void EmitRepeat(const RNode& n) {
    const RNode& e = n.kids[0];
    for (int k = 0; k < n.min; ++k) Emit(e);
    if (n.max == -1) {
      const int split = Push({Regex::Inst::kSplit});
      re_.prog_[static_cast<size_t>(split)].x = Pc();
      Emit(e);
      Push({Regex::Inst::kJmp, 0, split});
      re_.prog_[static_cast<size_t>(split)].y = Pc();
      return;
    }
    std::vector<int> splits;
    for (int k = n.min; k < n.max; ++k) {
      const int split = Push({Regex::Inst::kSplit});
      re_.prog_[static_cast<size_t>(split)].x = Pc();
      splits.push_back(split);
      Emit(e);
    }
    for (int s : splits) re_.prog_[static_cast<size_t>(s)].y = Pc();
  }
};

absl::StatusOr<std::shared_ptr<const Regex>> Regex::Compile(std::string_view pattern) {
  auto re = std::make_shared<Regex>();
  try {
    RegexCompiler c(pattern, *re);
    c.Run();
  } catch (const Failure& f) {
    return absl::InvalidArgumentError(f.message);
  }
  return std::shared_ptr<const Regex>(std::move(re));
}

bool Regex::Search(std::string_view text) const {
  const size_t n = prog_.size();
  std::vector<int> cur, next, stack;
  std::vector<size_t> mark(n, SIZE_MAX);  // mark[pc] == generation: already in the list
  size_t gen = 0;
  // Adds pc and everything reachable from it by empty steps at text position `at`.
  auto add = [&](std::vector<int>& list, int start, size_t at) -> bool {
    stack.push_back(start);
    while (!stack.empty()) {
      const int pc = stack.back();
      stack.pop_back();
      if (mark[static_cast<size_t>(pc)] == gen) continue;
      mark[static_cast<size_t>(pc)] = gen;
      const Inst& in = prog_[static_cast<size_t>(pc)];
      switch (in.op) {
        case Inst::kMatch:
          return true;
        case Inst::kJmp:
          stack.push_back(in.x);
          break;
        case Inst::kSplit:
          stack.push_back(in.y);
          stack.push_back(in.x);
          break;
        case Inst::kBol:
          if (at == 0) stack.push_back(pc + 1);
          break;
        case Inst::kEol:
          if (at == text.size()) stack.push_back(pc + 1);
          break;
        default:
          list.push_back(pc);
      }
    }
    return false;
  };
  size_t at = 0;
  for (;;) {
    // Unanchored search: a new thread starts at every position.
    if (add(cur, 0, at)) return true;
    if (at >= text.size()) return false;
    size_t after = at;
    const uint32_t c = DecodeUtf8(text, &after);
    ++gen;
    next.clear();
    for (int pc : cur) {
      const Inst& in = prog_[static_cast<size_t>(pc)];
      bool ok = false;
      switch (in.op) {
        case Inst::kChar:
          ok = in.c == c;
          break;
        case Inst::kAny:
          ok = true;
          break;
        case Inst::kAnyNotNL:
          ok = c != '\n';
          break;
        case Inst::kClass:
          ok = classes_[static_cast<size_t>(in.x)].Contains(c);
          break;
        default:
          break;
      }
      if (ok && add(next, pc + 1, after)) return true;
    }
    std::swap(cur, next);
    at = after;
  }
}

}  // namespace phalanx::cel
