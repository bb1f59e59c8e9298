// Lexer and recursive-descent parser of the CEL subset (grammar: cel-spec doc/langdef.md,
// "Syntax"). Macros has(), all(), exists(), exists_one() and cel.bind() (cel-go
// parser/macro.go and ext/bindings.go) become their own nodes here.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cel/cel_internal.h"

namespace phalanx::cel {
namespace {

struct Token {
  enum T : uint8_t { kEof, kIdent, kInt, kUint, kDouble, kString, kPunct };
  T t = kEof;
  size_t pos = 0;
  std::string text;  // identifier, decoded string, or punctuation
  uint64_t u = 0;    // kInt (magnitude, may be 2^63 for a negated literal) / kUint
  double d = 0;      // kDouble
};

struct Failure {
  CompileError error;
};

[[noreturn]] void Fail(size_t pos, std::string message) {
  throw Failure{CompileError{pos, std::move(message)}};
}

bool IsIdentStart(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexVal(char c) { return IsDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10; }

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}
  std::vector<Token> Run() {
    std::vector<Token> out;
    for (;;) {
      SkipSpaceAndComments();
      Token t;
      t.pos = i_;
      if (i_ >= s_.size()) {
        out.push_back(t);
        return out;
      }
      Next(t);
      out.push_back(std::move(t));
    }
  }

 private:
  std::string_view s_;
  size_t i_ = 0;

  char At(size_t k) const { return k < s_.size() ? s_[k] : '\0'; }

  void SkipSpaceAndComments() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++i_;
      } else if (c == '/' && At(i_ + 1) == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        return;
      }
    }
  }

  void Next(Token& t) {
    const char c = s_[i_];
    if ((c == 'r' || c == 'R') && (At(i_ + 1) == '"' || At(i_ + 1) == '\'')) {
      ++i_;
      return String(t, /*raw=*/true);
    }
    if ((c == 'b' || c == 'B') &&
        (At(i_ + 1) == '"' || At(i_ + 1) == '\'' ||
         ((At(i_ + 1) == 'r' || At(i_ + 1) == 'R') && (At(i_ + 2) == '"' || At(i_ + 2) == '\'')))) {
      Fail(i_, "bytes literals are not supported by this CEL subset");
    }
    if (IsIdentStart(c)) {
      const size_t b = i_;
      while (i_ < s_.size() && (IsIdentStart(s_[i_]) || IsDigit(s_[i_]))) ++i_;
      t.t = Token::kIdent;
      t.text = std::string(s_.substr(b, i_ - b));
      return;
    }
    if (IsDigit(c) || (c == '.' && IsDigit(At(i_ + 1)))) return Number(t);
    if (c == '"' || c == '\'') return String(t, /*raw=*/false);
    static constexpr const char* kTwo[] = {"==", "!=", "<=", ">=", "&&", "||"};
    for (const char* p : kTwo) {
      if (c == p[0] && At(i_ + 1) == p[1]) {
        t.t = Token::kPunct;
        t.text = p;
        i_ += 2;
        return;
      }
    }
    if (std::strchr("<>+-*/%!?:.,()[]{}", c) != nullptr && c != '\0') {
      t.t = Token::kPunct;
      t.text = std::string(1, c);
      ++i_;
      return;
    }
    if (c == '=') Fail(i_, "Syntax error: token recognition error at: '=' (use '==')");
    if (c == '&' || c == '|') {
      Fail(i_, Cat("Syntax error: token recognition error at: '", std::string(1, c), "' (use '",
                   std::string(2, c), "')"));
    }
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) {
      static constexpr char kHex[] = "0123456789abcdef";
      const auto b = static_cast<unsigned char>(c);
      Fail(i_, Cat("Syntax error: unexpected character (byte 0x",
                   std::string{kHex[b >> 4], kHex[b & 15]}, ")"));
    }
    Fail(i_, Cat("Syntax error: token recognition error at: '", std::string(1, c), "'"));
  }

  void Number(Token& t) {
    const size_t b = i_;
    if (s_[i_] == '0' && (At(i_ + 1) == 'x' || At(i_ + 1) == 'X')) {
      i_ += 2;
      const size_t db = i_;
      uint64_t v = 0;
      bool overflow = false;
      while (IsHex(At(i_))) {
        if (v > (std::numeric_limits<uint64_t>::max() >> 4)) overflow = true;
        v = (v << 4) | static_cast<uint64_t>(HexVal(s_[i_]));
        ++i_;
      }
      if (i_ == db) Fail(b, "Syntax error: invalid hexadecimal literal");
      return IntSuffix(t, b, v, overflow);
    }
    while (IsDigit(At(i_))) ++i_;
    bool is_float = false;
    if (At(i_) == '.' && IsDigit(At(i_ + 1))) {
      is_float = true;
      ++i_;
      while (IsDigit(At(i_))) ++i_;
    }
    if (At(i_) == 'e' || At(i_) == 'E') {
      size_t k = i_ + 1;
      if (At(k) == '+' || At(k) == '-') ++k;
      if (!IsDigit(At(k))) Fail(b, "Syntax error: invalid exponent in number literal");
      is_float = true;
      i_ = k;
      while (IsDigit(At(i_))) ++i_;
    }
    const std::string text(s_.substr(b, i_ - b));
    if (is_float) {
      t.t = Token::kDouble;
      t.d = std::strtod(text.c_str(), nullptr);
      // cel-go's parser rejects what strconv.ParseFloat cannot hold (1e400); underflow is 0.
      if (std::isinf(t.d)) Fail(b, "invalid double literal");
      if (IsIdentStart(At(i_))) Fail(i_, "Syntax error: unexpected character after number");
      return;
    }
    uint64_t v = 0;
    bool overflow = false;
    for (char ch : text) {
      const uint64_t d = static_cast<uint64_t>(ch - '0');
      if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) overflow = true;
      v = v * 10 + d;
    }
    IntSuffix(t, b, v, overflow);
  }

  void IntSuffix(Token& t, size_t b, uint64_t v, bool overflow) {
    if (At(i_) == 'u' || At(i_) == 'U') {
      ++i_;
      if (overflow) Fail(b, "invalid uint literal: out of range");
      t.t = Token::kUint;
    } else {
      if (overflow || v > (uint64_t{1} << 63)) Fail(b, "invalid int literal: out of range");
      t.t = Token::kInt;
    }
    if (IsIdentStart(At(i_)) || IsDigit(At(i_))) {
      Fail(i_, "Syntax error: unexpected character after number");
    }
    t.u = v;
  }

  void String(Token& t, bool raw) {
    const size_t b = i_;
    const char q = s_[i_];
    const bool triple = At(i_ + 1) == q && At(i_ + 2) == q;
    i_ += triple ? 3 : 1;
    t.t = Token::kString;
    for (;;) {
      if (i_ >= s_.size()) Fail(b, "Syntax error: unterminated string literal");
      const char c = s_[i_];
      if (c == q && (!triple || (At(i_ + 1) == q && At(i_ + 2) == q))) {
        i_ += triple ? 3 : 1;
        return;
      }
      if (!triple && (c == '\n' || c == '\r')) {
        Fail(b, "Syntax error: newline in string literal (use a triple-quoted string)");
      }
      if (c == '\\' && !raw) {
        Escape(t.text);
        continue;
      }
      t.text += c;
      ++i_;
    }
  }

  void Escape(std::string& out) {
    const size_t b = i_;
    const char e = At(i_ + 1);
    i_ += 2;
    switch (e) {
      case 'a':
        out += '\a';
        return;
      case 'b':
        out += '\b';
        return;
      case 'f':
        out += '\f';
        return;
      case 'n':
        out += '\n';
        return;
      case 'r':
        out += '\r';
        return;
      case 't':
        out += '\t';
        return;
      case 'v':
        out += '\v';
        return;
      case '\\':
      case '\'':
      case '"':
      case '`':
      case '?':
        out += e;
        return;
      default:
        break;
    }
    int digits = 0;
    int base = 16;
    if (e == 'x' || e == 'X') {
      digits = 2;
    } else if (e == 'u') {
      digits = 4;
    } else if (e == 'U') {
      digits = 8;
    } else if (e >= '0' && e <= '3') {
      digits = 2;
      base = 8;
    } else {
      Fail(b, "Syntax error: invalid escape sequence in string literal");
    }
    uint32_t cp = base == 8 ? static_cast<uint32_t>(e - '0') : 0;
    for (int k = 0; k < digits; ++k) {
      const char h = At(i_);
      const bool ok = base == 8 ? (h >= '0' && h <= '7') : IsHex(h);
      if (!ok) Fail(b, "Syntax error: invalid escape sequence in string literal");
      cp = cp * static_cast<uint32_t>(base) + static_cast<uint32_t>(HexVal(h));
      ++i_;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      Fail(b, "Syntax error: invalid code point in escape sequence");
    }
    AppendUtf8(out, cp);
  }
};

const char* const kReserved[] = {"as",        "break",  "const",  "continue", "else", "for",
                                 "function",  "if",     "import", "let",      "loop", "package",
                                 "namespace", "return", "var",    "void",     "while"};

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

  std::unique_ptr<Node> Run() {
    auto e = Expr();
    if (Peek().t != Token::kEof) Unexpected(Peek());
    return e;
  }

 private:
  std::vector<Token> t_;
  size_t k_ = 0;
  int depth_ = 0;

  struct DepthGuard {
    Parser* p;
    DepthGuard(Parser* parser, size_t pos) : p(parser) {
      if (++p->depth_ > kMaxNesting) {
        Fail(pos, Cat("expression nested deeper than ", kMaxNesting, " levels"));
      }
    }
    ~DepthGuard() { --p->depth_; }
  };

  // One more level of tree depth (a link of a left-deep chain such as a.b.c or 1+2+3);
  // the caller gives the levels back with depth_ -= links when the chain ends, so that
  // sub-expressions parsed inside the chain see the depth of the tree they are part of.
  void Nest(size_t pos, int* links) {
    ++*links;
    if (++depth_ > kMaxNesting) {
      Fail(pos, Cat("expression nested deeper than ", kMaxNesting, " levels"));
    }
  }

  const Token& Peek(size_t ahead = 0) const { return t_[std::min(k_ + ahead, t_.size() - 1)]; }
  bool IsPunct(std::string_view p, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.t == Token::kPunct && t.text == p;
  }
  bool Accept(std::string_view p) {
    if (!IsPunct(p)) return false;
    ++k_;
    return true;
  }
  [[noreturn]] static void Unexpected(const Token& t) {
    if (t.t == Token::kEof) Fail(t.pos, "Syntax error: unexpected end of expression");
    std::string what = t.t == Token::kPunct || t.t == Token::kIdent ? t.text : "literal";
    Fail(t.pos, Cat("Syntax error: unexpected '", what, "'"));
  }
  void Expect(std::string_view p) {
    if (!Accept(p)) {
      const Token& t = Peek();
      if (t.t == Token::kEof) {
        Fail(t.pos, Cat("Syntax error: missing '", p, "' at end of expression"));
      }
      Fail(t.pos, Cat("Syntax error: expected '", p, "', found '",
                      t.t == Token::kPunct || t.t == Token::kIdent ? t.text : "literal", "'"));
    }
  }

  static std::unique_ptr<Node> Make(Op op, size_t pos) {
    auto n = std::make_unique<Node>();
    n->op = op;
    n->pos = pos;
    return n;
  }

  std::unique_ptr<Node> Expr() {
    DepthGuard g(this, Peek().pos);
    auto cond = LogicalChain(Op::kOr);
    if (!IsPunct("?")) return cond;
    const size_t pos = Peek().pos;
    ++k_;
    if (IsPunct(".") || IsPunct("[")) {
      Fail(pos, "optional syntax ('?.' and '[?') is not supported by this CEL subset");
    }
    auto n = Make(Op::kTernary, pos);
    n->args.push_back(std::move(cond));
    n->args.push_back(LogicalChain(Op::kOr));
    Expect(":");
    n->args.push_back(Expr());
    return n;
  }

  // a || b || c and a && b && c as one n-ary node (cel-go balances these chains too).
  std::unique_ptr<Node> LogicalChain(Op op) {
    const std::string_view tok = op == Op::kOr ? "||" : "&&";
    auto first = op == Op::kOr ? LogicalChain(Op::kAnd) : Relation();
    if (!IsPunct(tok)) return first;
    auto n = Make(op, Peek().pos);
    n->args.push_back(std::move(first));
    while (Accept(tok)) n->args.push_back(op == Op::kOr ? LogicalChain(Op::kAnd) : Relation());
    return n;
  }

  std::unique_ptr<Node> Relation() {
    auto lhs = Addition();
    int links = 0;
    for (;;) {
      static constexpr std::pair<std::string_view, BinOp> kRel[] = {
          {"==", BinOp::kEq}, {"!=", BinOp::kNe}, {"<", BinOp::kLt},
          {"<=", BinOp::kLe}, {">", BinOp::kGt},  {">=", BinOp::kGe}};
      const Token& t = Peek();
      if (t.t == Token::kIdent && t.text == "in") {
        Nest(t.pos, &links);
        auto n = Make(Op::kIn, t.pos);
        ++k_;
        n->args.push_back(std::move(lhs));
        n->args.push_back(Addition());
        lhs = std::move(n);
        continue;
      }
      bool found = false;
      for (const auto& [p, op] : kRel) {
        if (t.t == Token::kPunct && t.text == p) {
          Nest(t.pos, &links);
          lhs = Binary(op, std::move(lhs), &Parser::Addition);
          found = true;
          break;
        }
      }
      if (!found) {
        depth_ -= links;
        return lhs;
      }
    }
  }

  std::unique_ptr<Node> Binary(BinOp op, std::unique_ptr<Node> lhs,
                               std::unique_ptr<Node> (Parser::*next)()) {
    auto n = Make(Op::kBinary, Peek().pos);
    ++k_;
    n->bin = op;
    n->args.push_back(std::move(lhs));
    n->args.push_back((this->*next)());
    return n;
  }

  std::unique_ptr<Node> Addition() {
    auto lhs = Multiplication();
    int links = 0;
    for (;;) {
      if (IsPunct("+") || IsPunct("-")) Nest(Peek().pos, &links);
      if (IsPunct("+")) {
        lhs = Binary(BinOp::kAdd, std::move(lhs), &Parser::Multiplication);
      } else if (IsPunct("-")) {
        lhs = Binary(BinOp::kSub, std::move(lhs), &Parser::Multiplication);
      } else {
        depth_ -= links;
        return lhs;
      }
    }
  }

  std::unique_ptr<Node> Multiplication() {
    auto lhs = Unary();
    int links = 0;
    for (;;) {
      if (IsPunct("*") || IsPunct("/") || IsPunct("%")) Nest(Peek().pos, &links);
      if (IsPunct("*")) {
        lhs = Binary(BinOp::kMul, std::move(lhs), &Parser::Unary);
      } else if (IsPunct("/")) {
        lhs = Binary(BinOp::kDiv, std::move(lhs), &Parser::Unary);
      } else if (IsPunct("%")) {
        lhs = Binary(BinOp::kMod, std::move(lhs), &Parser::Unary);
      } else {
        depth_ -= links;
        return lhs;
      }
    }
  }

  std::unique_ptr<Node> Unary() {
    const size_t pos = Peek().pos;
    if (IsPunct("!")) {
      DepthGuard g(this, pos);
      ++k_;
      auto n = Make(Op::kNot, pos);
      n->args.push_back(Unary());
      return n;
    }
    if (IsPunct("-")) {
      DepthGuard g(this, pos);
      ++k_;
      // -9223372036854775808 is a literal, not the negation of an out-of-range int.
      if (Peek().t == Token::kInt && !IsPunct(".", 1) && !IsPunct("[", 1)) {
        const Token& t = Peek();
        ++k_;
        auto n = Make(Op::kLiteral, pos);
        n->literal.v = static_cast<int64_t>(0 - t.u);  // u <= 2^63
        return n;
      }
      auto n = Make(Op::kNeg, pos);
      n->args.push_back(Unary());
      return n;
    }
    return Member(Primary());
  }

  std::unique_ptr<Node> Member(std::unique_ptr<Node> e) {
    int links = 0;
    for (;;) {
      const size_t pos = Peek().pos;
      if (Accept(".")) {
        Nest(pos, &links);
        const Token& id = Peek();
        if (id.t != Token::kIdent) {
          if (IsPunct("?")) {
            Fail(id.pos, "optional syntax ('?.' and '[?') is not supported by this CEL subset");
          }
          Fail(id.pos, "Syntax error: expected a field or method name after '.'");
        }
        // true, false, null and in are keywords, not identifiers (CEL.g4's escapeIdent).
        if (id.text == "true" || id.text == "false" || id.text == "null" || id.text == "in") {
          Fail(id.pos, Cat("Syntax error: mismatched input '", id.text, "' expecting IDENTIFIER"));
        }
        std::string name = id.text;
        ++k_;
        if (IsPunct("(")) {
          e = MemberCall(std::move(e), std::move(name), id.pos);
        } else {
          auto n = Make(Op::kSelect, id.pos);
          n->name = std::move(name);
          n->args.push_back(std::move(e));
          e = std::move(n);
        }
      } else if (IsPunct("[")) {
        Nest(pos, &links);
        ++k_;
        if (IsPunct("?"))
          Fail(pos, "optional syntax ('?.' and '[?') is not supported by this CEL subset");
        auto n = Make(Op::kIndex, pos);
        n->args.push_back(std::move(e));
        n->args.push_back(Expr());
        Expect("]");
        e = std::move(n);
      } else if (IsPunct("{")) {
        Fail(pos, "message construction ('Type{...}') is not supported by this CEL subset");
      } else {
        depth_ -= links;
        return e;
      }
    }
  }

  std::vector<std::unique_ptr<Node>> Args(std::string_view close) {
    std::vector<std::unique_ptr<Node>> args;
    if (Accept(close)) return args;
    for (;;) {
      if (close == "]" && IsPunct("?")) {  // [?a]: an optional element
        Fail(Peek().pos, "optional syntax ('?.' and '[?') is not supported by this CEL subset");
      }
      args.push_back(Expr());
      if (Accept(close)) return args;
      Expect(",");
      if (close == "]" && Accept(close)) return args;  // trailing comma in list literals
    }
  }

  std::unique_ptr<Node> MemberCall(std::unique_ptr<Node> target, std::string name, size_t pos) {
    Expect("(");
    auto args = Args(")");
    // The quantifier macros (parser/macro.go), with one variable, or two (the index or key,
    // then the value) as cel-go's ext.TwoVarComprehensions, which the Kubernetes base
    // environment includes since 1.32. existsOne is exists_one's newer name.
    if (name == "all" || name == "exists" || name == "exists_one" || name == "existsOne") {
      const Op op = name == "all" ? Op::kAll : (name == "exists" ? Op::kExists : Op::kExistsOne);
      if (args.size() != 2 && args.size() != 3) {
        Fail(pos, Cat(name,
                      "() macro takes a variable name (or two: index or key, and value) and a "
                      "condition"));
      }
      auto n = Make(op, pos);
      n->name = VariableName(*args[0], name);
      if (args.size() == 3) {
        n->name2 = VariableName(*args[1], name);
        if (n->name2 == n->name) Fail(args[1]->pos, Cat("duplicate variable name: ", n->name));
      }
      n->args.push_back(std::move(target));
      n->args.push_back(std::move(args.back()));
      return n;
    }
    if (name == "map" || name == "filter" || name == "transformList" || name == "transformMap" ||
        name == "transformMapEntry" || name == "sortBy") {
      Fail(pos, Cat("the '", name, "' macro is not supported by this CEL subset"));
    }
    if (target->op == Op::kIdent && target->name == "cel") {
      if (name != "bind") Fail(pos, Cat("cel.", name, "() is not supported by this CEL subset"));
      if (args.size() != 3) {
        Fail(pos,
             "cel.bind() macro takes three arguments: a variable name, a value and an expression");
      }
      auto n = Make(Op::kBind, pos);
      n->name = VariableName(*args[0], "cel.bind");
      n->args.push_back(std::move(args[1]));
      n->args.push_back(std::move(args[2]));
      return n;
    }
    auto n = Make(Op::kCall, pos);
    n->name = std::move(name);
    n->member = true;
    n->args.push_back(std::move(target));
    for (auto& a : args) n->args.push_back(std::move(a));
    return n;
  }

  static std::string VariableName(const Node& n, std::string_view macro) {
    if (n.op != Op::kIdent) {
      Fail(n.pos, Cat(macro, "(): argument must be a simple name"));
    }
    // cel-go expands the quantifiers into comprehensions over an accumulator of this name
    // (parser.AccumulatorName) and rejects it as an iteration variable.
    if (macro != "cel.bind" && n.name == "__result__") {
      Fail(n.pos, "iteration variable overwrites accumulator variable");
    }
    return n.name;
  }

  std::unique_ptr<Node> Primary() {
    const Token& t = Peek();
    const size_t pos = t.pos;
    switch (t.t) {
      case Token::kInt: {
        if (t.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          Fail(pos, "invalid int literal: out of range");
        }
        auto n = Make(Op::kLiteral, pos);
        n->literal.v = static_cast<int64_t>(t.u);
        ++k_;
        return n;
      }
      case Token::kUint: {
        auto n = Make(Op::kLiteral, pos);
        n->literal.v = t.u;
        ++k_;
        return n;
      }
      case Token::kDouble: {
        auto n = Make(Op::kLiteral, pos);
        n->literal.v = t.d;
        ++k_;
        return n;
      }
      case Token::kString: {
        auto n = Make(Op::kLiteral, pos);
        n->literal.v = t.text;
        ++k_;
        return n;
      }
      case Token::kIdent:
        return IdentOrCall();
      case Token::kEof:
        Unexpected(t);
      case Token::kPunct:
        break;
    }
    if (Accept("(")) {
      auto e = Expr();
      Expect(")");
      return e;
    }
    if (Accept("[")) {
      DepthGuard g(this, pos);
      auto n = Make(Op::kList, pos);
      n->args = Args("]");
      return n;
    }
    if (IsPunct("{")) Fail(pos, "map literals ('{...}') are not supported by this CEL subset");
    if (IsPunct(".") && Peek(1).t == Token::kIdent) {
      Fail(pos, "leading-dot identifiers ('.name') are not supported by this CEL subset");
    }
    Unexpected(t);
  }

  std::unique_ptr<Node> IdentOrCall() {
    const Token& t = Peek();
    const size_t pos = t.pos;
    std::string name = t.text;
    ++k_;
    if (name == "true" || name == "false") {
      auto n = Make(Op::kLiteral, pos);
      n->literal.v = name == "true";
      return n;
    }
    if (name == "null") return Make(Op::kLiteral, pos);
    if (name == "in") Fail(pos, "Syntax error: unexpected 'in'");
    for (const char* r : kReserved) {
      if (name == r) Fail(pos, Cat("reserved identifier: ", name));
    }
    if (!IsPunct("(")) {
      auto n = Make(Op::kIdent, pos);
      n->name = std::move(name);
      return n;
    }
    ++k_;
    auto args = Args(")");
    if (name == "has") {
      if (args.size() != 1 || args[0]->op != Op::kSelect) {
        Fail(args.empty() ? pos : args[0]->pos,
             "invalid argument to has() macro: it takes one field selection, e.g. has(a.b)");
      }
      auto n = Make(Op::kHas, pos);
      n->name = args[0]->name;
      n->args.push_back(std::move(args[0]->args[0]));
      return n;
    }
    auto n = Make(Op::kCall, pos);
    n->name = std::move(name);
    n->args = std::move(args);
    return n;
  }
};

}  // namespace

std::variant<std::unique_ptr<Node>, CompileError> Parse(std::string_view expr) {
  try {
    Lexer lexer(expr);
    Parser parser(lexer.Run());
    return parser.Run();
  } catch (const Failure& f) {
    return f.error;
  }
}

}  // namespace phalanx::cel
