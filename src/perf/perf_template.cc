#include "perf/perf_template.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

namespace phalanx::perf {

bool IsTemplated(const std::string& text) { return text.find("{{") != std::string::npos; }

namespace {

struct Value {
  double v = 0;
  bool is_int = true;
};

std::string Format(const Value& x) {
  if (x.is_int) return std::to_string(static_cast<long long>(x.v));
  // Go's fmt %v for float64: the shortest representation that round-trips.
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, x.v);
    if (std::strtod(buf, nullptr) == x.v) break;
  }
  return buf;
}

api::Status Fail(const std::string& path, const std::string& action, const std::string& msg) {
  return absl::InvalidArgumentError(path + ": template: {{" + action + "}}: " + msg);
}

}  // namespace

api::StatusOr<std::string> RenderTemplate(const std::string& text, const std::string& path,
                                          const std::map<std::string, double>& vars) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t open = text.find("{{", at);
    if (open == std::string::npos) {
      out += text.substr(at);
      break;
    }
    std::string lit = text.substr(at, open - at);
    const size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) {
      return absl::InvalidArgumentError(path + ": template: unclosed action \"{{\"");
    }
    std::string action = text.substr(open + 2, close - open - 2);
    bool trim_left = false, trim_right = false;
    if (!action.empty() && action[0] == '-') {
      trim_left = true;
      action.erase(0, 1);
    }
    if (!action.empty() && action.back() == '-') {
      trim_right = true;
      action.pop_back();
    }
    if (trim_left) {
      while (!lit.empty() && std::isspace(static_cast<unsigned char>(lit.back()))) lit.pop_back();
    }
    out += lit;
    at = close + 2;
    if (trim_right) {
      while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    }
    std::istringstream words(action);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.empty()) return Fail(path, action, "empty action");
    auto arg = [&](const std::string& a, Value* v) -> api::Status {
      if (a.size() > 1 && a[0] == '.') {
        auto it = vars.find(a.substr(1));
        if (it == vars.end()) return Fail(path, action, "no variable " + a);
        *v = Value{it->second, std::floor(it->second) == it->second};
        return absl::OkStatus();
      }
      char* end = nullptr;
      const double d = std::strtod(a.c_str(), &end);
      if (end != a.c_str() + a.size()) {
        return Fail(path, action, "unsupported argument \"" + a + "\" (a .Variable or a number)");
      }
      *v = Value{d, a.find_first_of(".eE") == std::string::npos};
      return absl::OkStatus();
    };
    if (w.size() == 1 && w[0][0] == '.') {
      Value v;
      if (auto s = arg(w[0], &v); !s.ok()) return s;
      out += Format(v);
      continue;
    }
    const std::string& fn = w[0];
    std::vector<Value> args;
    for (size_t i = 1; i < w.size(); ++i) {
      Value v;
      if (auto s = arg(w[i], &v); !s.ok()) return s;
      args.push_back(v);
    }
    const bool variadic =
        fn == "AddInt" || fn == "MultiplyInt" || fn == "AddFloat" || fn == "MultiplyFloat";
    const bool binary = fn == "SubtractInt" || fn == "DivideInt" || fn == "Mod" ||
                        fn == "SubtractFloat" || fn == "DivideFloat";
    if (!variadic && !binary) {
      return Fail(path, action,
                  "unsupported function or syntax \"" + fn +
                      "\" (supported: .Index, .Count, AddInt, SubtractInt, MultiplyInt, "
                      "DivideInt, Mod and their Float forms)");
    }
    if (binary && args.size() != 2) return Fail(path, action, fn + " takes 2 arguments");
    Value r;
    if (fn == "AddInt" || fn == "AddFloat") {
      r.v = 0;
      for (const auto& a : args) r.v += a.v;
    } else if (fn == "MultiplyInt" || fn == "MultiplyFloat") {
      r.v = 1;
      for (const auto& a : args) r.v *= a.v;
    } else if (fn == "SubtractInt" || fn == "SubtractFloat") {
      r.v = args[0].v - args[1].v;
    } else if (fn == "DivideInt" || fn == "DivideFloat") {
      if (args[1].v == 0) return Fail(path, action, "division by zero");
      r.v = args[0].v / args[1].v;
    } else {  // Mod: int(a) % int(b)
      const long long b = static_cast<long long>(args[1].v);
      if (b == 0) return Fail(path, action, "division by zero");
      r.v = static_cast<double>(static_cast<long long>(args[0].v) % b);
    }
    r.is_int = fn.find("Int") != std::string::npos || fn == "Mod";
    if (r.is_int) r.v = std::trunc(r.v);  // Go int(float64) truncates
    out += Format(r);
  }
  return out;
}

}  // namespace phalanx::perf
