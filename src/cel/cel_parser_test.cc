// cel-go's parser tests (parser/parser_test.go testCases), ported: every input cel-go
// rejects is rejected here too, at cel-go's line:column where both report the same place
// (the rest report an unsupported construct first, e.g. a map literal, or name the bad
// escape rather than the string); every input cel-go parses parses here, unless it uses
// what the subset does not have (then the error says so). Cases are named by their index in
// testCases. Not ported: #143, #144, #151, #152, #153, #154, #155, #156, #157 (they test the
// recursion limit of 32 that the test sets; cel-go's default and Kubernetes' is 250, as here,
// CelRejected.Limits).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cel/cel.h"
#include "cel/cel_internal.h"
#include "cel/cel_testing.h"

namespace phalanx::cel {
namespace {

using ::testing::HasSubstr;
using namespace std::string_view_literals;

struct ParserCase {
  int index;  // testCases[index]
  std::string_view expr;
  std::string_view at;     // rejected: cel-go's "line:column" ("" = not compared)
  std::string_view error;  // rejected: cel-go's message (for the reader); parsed: "" or the
                           // substring of the "not supported" error this subset gives
};

// "line:column" of a byte offset, columns in characters from 1 (as cel-go).
std::string LineColumn(std::string_view s, size_t pos) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos && i < s.size(); ++i) {
    if (s[i] == '\n') {
      ++line;
      col = 1;
    } else if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

// The first error of parsing and checking `expr` (the checker runs too: cel-go reports a
// few errors, such as an accumulator-named variable, from its macro expansion).
std::optional<CompileError> Compile(std::string_view expr) { return ParseAndCheck(expr).error; }

TEST(CelGoParser, RejectsWhatCelGoRejects) {
  const std::vector<ParserCase> cases = {
      {54, "0xFFFFFFFFFFFFFFFFF", "1:1", "invalid int literal"},
      {55, "0xFFFFFFFFFFFFFFFFFu", "1:1", "invalid uint literal"},
      {56, "1.99e90000009", "1:1", "invalid double literal"},
      {57, "*@a | b", "",
       "Syntax error: extraneous input '*' expecting {'[', '{', '(', '.', '-', '!', 'true', "
       "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
      {58, "a | b", "1:3", "Syntax error: token recognition error at: '| '"},
      {60, "has(m)", "1:5", "invalid argument to has() macro"},
      {64, "[].existsOne(__result__, __result__)", "1:14",
       "iteration variable overwrites accumulator variable"},
      {66, "m.map(__result__, __result__)", "",
       "iteration variable overwrites accumulator variable"},
      {69, "m.filter(__result__, false)", "", "iteration variable overwrites accumulator variable"},
      {70, "m.filter(a.b, false)", "", "argument is not an identifier"},
      {87, "{", "",
       "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '}', '(', '.', ',', '-', '!', "
       "'?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
      {91, "TestAllTypes(){}", "1:15", "Syntax error: mismatched input '{' expecting <EOF>"},
      {92, "TestAllTypes{}()", "", "Syntax error: mismatched input '(' expecting <EOF>"},
      {94, "1 + $", "1:5", "Syntax error: token recognition error at: '$'"},
      {95, R"cel(1 + 2
3 +)cel",
       "2:1", "Syntax error: mismatched input '3' expecting <EOF>"},
      {98, "1.all(2, 3)", "1:7", "argument must be a simple name"},
      {104, "1 + +", "1:5",
       "Syntax error: mismatched input '+' expecting {'[', '{', '(', '.', '-', '!', 'true', "
       "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
      {106, R"cel({"a": 1}."a")cel", "",
       R"cel(Syntax error: no viable alternative at input '."a"')cel"},
      {112, R"cel("\xFh")cel", "", R"cel(Syntax error: token recognition error at: '"\xFh')cel"},
      {113, R"cel("\a\b\f\n\r\t\v\'\"\\\? Illegal escape \>")cel", "",
       R"cel(Syntax error: token recognition error at: '"\a\b\f\n\r\t\v\'\"\\\? Illegal escape \>')cel"},
      {115,
       "      '\360\237\230\201' in ['\360\237\230\201', '\360\237\230\221', "
       "'\360\237\230\246']\012\011\011\011&& in.\360\237\230\201",
       "",
       "Syntax error: extraneous input 'in' expecting {'[', '{', '(', '.', '-', '!', 'true', "
       "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
      {116, "as", "1:1", "reserved identifier: as"},
      {117, "break", "1:1", "reserved identifier: break"},
      {118, "const", "1:1", "reserved identifier: const"},
      {119, "continue", "1:1", "reserved identifier: continue"},
      {120, "else", "1:1", "reserved identifier: else"},
      {121, "for", "1:1", "reserved identifier: for"},
      {122, "function", "1:1", "reserved identifier: function"},
      {123, "if", "1:1", "reserved identifier: if"},
      {124, "import", "1:1", "reserved identifier: import"},
      {125, "in", "1:1",
       "Syntax error: mismatched input 'in' expecting {'[', '{', '(', '.', '-', '!', 'true', "
       "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
      {126, "let", "1:1", "reserved identifier: let"},
      {127, "loop", "1:1", "reserved identifier: loop"},
      {128, "package", "1:1", "reserved identifier: package"},
      {129, "namespace", "1:1", "reserved identifier: namespace"},
      {130, "return", "1:1", "reserved identifier: return"},
      {131, "var", "1:1", "reserved identifier: var"},
      {132, "void", "1:1", "reserved identifier: void"},
      {133, "while", "1:1", "reserved identifier: while"},
      {134, "[1, 2, 3].map(var, var * var)", "1:15", "reserved identifier: var"},
      {135, "func{{a}}", "",
       "Syntax error: extraneous input '{' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}"},
      {136, "msg{:a}", "",
       "Syntax error: extraneous input ':' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}"},
      {137, "{a}", "", "Syntax error: mismatched input '}' expecting ':'"},
      {138, "{:a}", "",
       "Syntax error: extraneous input ':' expecting {'[', '{', '}', '(', '.', ',', '-', '!', '?', "
       "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
      {139, "ind[a{b}]", "", "Syntax error: mismatched input '}' expecting ':'"},
      {140, "--", "1:3", "Syntax error: no viable alternative at input '-'"},
      {141, "?", "1:1",
       "Syntax error: mismatched input '?' expecting {'[', '{', '(', '.', '-', '!', 'true', "
       "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
      {142, "a ? b ((?))", "1:9",
       "Syntax error: mismatched input '?' expecting {'[', '{', '(', '.', '-', '!', 'true', "
       "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
      {158, "self.true == 1", "1:6", "Syntax error: mismatched input 'true' expecting IDENTIFIER"},
      {159, "a.?b && a[?b]", "", "unsupported syntax '.?'"},
      {164, "[?a, ?b]", "1:2", "unsupported syntax '?'"},
      {166, "Msg{?field: value} && {?'key': value}", "", "unsupported syntax '?'"},
      {173, "`b-c`", "1:1",
       "Syntax error: mismatched input '`b-c`' expecting {'[', '{', '(', '.', '-', '!', 'true', "
       "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
      {174, "`b-c`()", "1:1",
       "Syntax error: extraneous input '`b-c`' expecting {'[', '{', '(', '.', '-', '!', 'true', "
       "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
      {175, "a.`$b`", "1:3", "Syntax error: token recognition error at: '`$'"},
      {176, "a.`b.c`()", "", "Syntax error: mismatched input '(' expecting <EOF>"},
      {177, "a.`b-c`", "1:3", "unsupported syntax: '`'"},
      {178, "a.`b.c`", "1:3", "unsupported syntax: '`'"},
      {179, "a.`in`", "1:3", "unsupported syntax: '`'"},
      {180, "a.`/foo`", "1:3", "unsupported syntax: '`'"},
      {181, "Message{`in`: true}", "1:9", "unsupported syntax: '`'"},
      {183, "x{?.", "", "unsupported syntax '?'"},
      {184, "x{.", "",
       "Syntax error: mismatched input '.' expecting {'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}"},
      {185, R"cel('3# < 10" '& tru ^^)cel", "1:12",
       "Syntax error: token recognition error at: '& '"},
      {186, R"cel('\udead' == '\ufffd')cel", "", "invalid unicode code point"},
  };
  for (const ParserCase& c : cases) {
    SCOPED_TRACE("parser_test.go testCases[" + std::to_string(c.index) +
                 "]: " + std::string(c.expr));
    const std::optional<CompileError> error = Compile(c.expr);
    ASSERT_TRUE(error.has_value()) << "accepted; cel-go: " << c.error;
    if (!c.at.empty()) {
      EXPECT_EQ(LineColumn(c.expr, error->pos), c.at) << error->message;
    }
  }
}

TEST(CelGoParser, ParsesWhatCelGoParses) {
  const std::vector<ParserCase> cases = {
      {0, R"cel("A")cel", "", ""},
      {1, "true", "", ""},
      {2, "false", "", ""},
      {3, "0", "", ""},
      {4, "42", "", ""},
      {5, "0xF", "", ""},
      {6, "0u", "", ""},
      {7, "23u", "", ""},
      {8, "24u", "", ""},
      {9, "0xFu", "", ""},
      {10, "-1", "", ""},
      {11, "4--4", "", ""},
      {12, "4--4.1", "", ""},
      {13, R"cel(b"abc")cel", "", "not supported by this CEL subset"},
      {14, "23.39", "", ""},
      {15, "!a", "", ""},
      {16, "null", "", ""},
      {17, "a", "", ""},
      {18, "a?b:c", "", ""},
      {19, "a || b", "", ""},
      {20, "a || b || c || d || e || f ", "", ""},
      {21, "a && b", "", ""},
      {22, "a && b && c && d && e && f && g", "", ""},
      {23, "a && b && c && d || e && f && g && h", "", ""},
      {24, "a + b", "", ""},
      {25, "a - b", "", ""},
      {26, "a * b", "", ""},
      {27, "a / b", "", ""},
      {28, "a % b", "", ""},
      {29, "a in b", "", ""},
      {30, "a == b", "", ""},
      {31, "a != b", "", ""},
      {32, "a > b", "", ""},
      {33, "a >= b", "", ""},
      {34, "a < b", "", ""},
      {35, "a <= b", "", ""},
      {36, "a.b", "", ""},
      {37, "a.b.c", "", ""},
      {38, "a[b]", "", ""},
      {39, "foo{ }", "", "not supported by this CEL subset"},
      {40, "foo{ a:b }", "", "not supported by this CEL subset"},
      {41, "foo{ a:b, c:d }", "", "not supported by this CEL subset"},
      {42, "{}", "", "not supported by this CEL subset"},
      {43, "{a:b, c:d}", "", "not supported by this CEL subset"},
      {44, "[]", "", ""},
      {45, "[a]", "", ""},
      {46, "[a, b, c]", "", ""},
      {47, "(a)", "", ""},
      {48, "((a))", "", ""},
      {49, "a()", "", ""},
      {50, "a(b)", "", ""},
      {51, "a(b, c)", "", ""},
      {52, "a.b()", "", ""},
      {53, "a.b(c)", "", ""},
      {59, "has(m.f)", "", ""},
      {61, "m.exists(v, f)", "", ""},
      {62, "m.all(v, f)", "", ""},
      {63, "m.existsOne(v, f)", "", ""},
      {65, "m.map(v, f)", "", "not supported by this CEL subset"},
      {67, "m.map(v, p, f)", "", "not supported by this CEL subset"},
      {68, "m.filter(v, p)", "", "not supported by this CEL subset"},
      {71, "x * 2", "", ""},
      {72, "x * 2u", "", ""},
      {73, "x * 2.0", "", ""},
      {74, R"cel("\u2764")cel", "", ""},
      {75, R"cel("❤")cel", "", ""},
      {76, "! false", "", ""},
      {77, "-a", "", ""},
      {78, "a.b(5)", "", ""},
      {79, "a[3]", "", ""},
      {80, R"cel(SomeMessage{foo: 5, bar: "xyz"})cel", "", "not supported by this CEL subset"},
      {81, "[3, 4, 5]", "", ""},
      {82, "[3, 4, 5,]", "", ""},
      {83, R"cel({foo: 5, bar: "xyz"})cel", "", "not supported by this CEL subset"},
      {84, R"cel({foo: 5, bar: "xyz", })cel", "", "not supported by this CEL subset"},
      {85, "a > 5 && a < 10", "", ""},
      {86, "a < 5 || a > 10", "", ""},
      {88, "[] + [1,2,3,] + [4]", "", ""},
      {89, "{1:2u, 2:3u}", "", "not supported by this CEL subset"},
      {90, "TestAllTypes{single_int32: 1, single_int64: 2}", "",
       "not supported by this CEL subset"},
      {93, "size(x) == x.size()", "", ""},
      {96, R"cel("\"")cel", "", ""},
      {97, "[1,3,4][0]", "", ""},
      {99, R"cel(x["a"].single_int32 == 23)cel", "", ""},
      {100, "x.single_nested_message != null", "", ""},
      {101, "false && !true || false ? 2 : 3", "", ""},
      {102, R"cel(b"abc" + B"def")cel", "", "not supported by this CEL subset"},
      {103, "1 + 2 * 3 - 1 / 2 == 6 % 1", "", ""},
      {105, R"cel("abc" + "def")cel", "", ""},
      {107, R"cel("\xC3\XBF")cel", "", ""},
      {108, R"cel("\303\277")cel", "", ""},
      {109, R"cel("hi\u263A \u263Athere")cel", "", ""},
      {110, R"cel("\U000003A8\?")cel", "", ""},
      {111, R"cel("\a\b\f\n\r\t\v'\"\\\? Legal escapes")cel", "", ""},
      {114, R"cel("😁" in ["😁", "😑", "😦"])cel", "", ""},
      {145, "x.filter(y, y.filter(z, z > 0))", "", "not supported by this CEL subset"},
      {146, "has(a.b).filter(c, c)", "", "not supported by this CEL subset"},
      {147, "x.filter(y, y.exists(z, has(z.a)) && y.exists(z, has(z.b)))", "",
       "not supported by this CEL subset"},
      {148, "(has(a.b) || has(c.d)).string()", "", ""},
      {149, "has(a.b).asList().exists(c, c)", "", ""},
      {150, "[has(a.b), has(c.d)].exists(e, e)", "", ""},
      {160, "a.?b[?0] && a[?c]", "", "not supported by this CEL subset"},
      {161, "{?'key': value}", "", "not supported by this CEL subset"},
      {162, "[?a, ?b]", "", "not supported by this CEL subset"},
      {163, "[?a[?b]]", "", "not supported by this CEL subset"},
      {165, "Msg{?field: value}", "", "not supported by this CEL subset"},
      {167, "a.`b-c`", "", "Syntax error"},
      {168, "a.`b c`", "", "Syntax error"},
      {169, "a.`b.c`", "", "Syntax error"},
      {170, "a.`in`", "", "Syntax error"},
      {171, "a.`/foo`", "", "Syntax error"},
      {172, "Message{`in`: true}", "", "Syntax error"},
      {182, "noop_macro(123)", "", ""},
      {187, "m.exists(v, f)", "", ""},
      {188, "m.all(v, f)", "", ""},
      {189, "m.existsOne(v, f)", "", ""},
      {190, "m.map(v, f)", "", "not supported by this CEL subset"},
      {191, "m.map(v, p, f)", "", "not supported by this CEL subset"},
  };
  for (const ParserCase& c : cases) {
    SCOPED_TRACE("parser_test.go testCases[" + std::to_string(c.index) +
                 "]: " + std::string(c.expr));
    auto parsed = Parse(c.expr);
    if (c.error.empty()) {
      EXPECT_TRUE(std::holds_alternative<std::unique_ptr<Node>>(parsed))
          << std::get<CompileError>(parsed).message;
    } else {
      auto error = Compile(c.expr);
      ASSERT_TRUE(error.has_value());
      EXPECT_THAT(error->message, HasSubstr(std::string(c.error)));
    }
  }
}

}  // namespace
}  // namespace phalanx::cel
