// Fuzz target: label selectors and node selectors (api/labels.h): validation, then
// matching against a label set.
//
// Input: lines of a small text format (so that seeds are readable):
//   l KEY=VALUE            a label of the object / node
//   m KEY=VALUE            a matchLabels entry of the label selector
//   e KEY OP [V1 V2 ...]   a matchExpressions entry of the label selector
//   n KEY OP [V1 V2 ...]   a node selector requirement (term 0)
//   f OP [V1 ...]          a matchFields entry (key metadata.name) of term 0
//   t                      start a new node selector term
//   N NAME                 the node's name
// Checks: a label selector that validates is matched without a crash, and the rules of
// k8s.io/apimachinery/pkg/labels hold: matchLabels are required exactly; an "Exists" on a
// key absent from the labels never matches.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "api/labels.h"

namespace {

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

bool KeyValue(const std::string& s, std::string* k, std::string* v) {
  const size_t eq = s.find('=');
  if (eq == std::string::npos) return false;
  *k = s.substr(0, eq);
  *v = s.substr(eq + 1);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phalanx::api;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Labels labels;
  LabelSelector sel;
  NodeSelector node_sel;
  node_sel.node_selector_terms.emplace_back();
  std::string node_name;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.size() < 2 || line[1] != ' ') continue;
    const std::string rest = line.substr(2);
    std::string k, v;
    std::vector<std::string> w = Words(rest);
    switch (line[0]) {
      case 'l':
        if (KeyValue(rest, &k, &v)) labels[k] = v;
        break;
      case 'm':
        if (KeyValue(rest, &k, &v)) sel.match_labels[k] = v;
        break;
      case 'e':
        if (w.size() >= 2) {
          sel.match_expressions.push_back({w[0], w[1], {w.begin() + 2, w.end()}});
        }
        break;
      case 'n':
        if (w.size() >= 2) {
          node_sel.node_selector_terms.back().match_expressions.push_back(
              {w[0], w[1], {w.begin() + 2, w.end()}});
        }
        break;
      case 'f':
        if (!w.empty()) {
          node_sel.node_selector_terms.back().match_fields.push_back(
              {"metadata.name", w[0], {w.begin() + 1, w.end()}});
        }
        break;
      case 't':
        node_sel.node_selector_terms.emplace_back();
        break;
      case 'N':
        node_name = rest;
        break;
      default:
        break;
    }
  }

  std::string error;
  if (OkOrMessage(ValidateLabelSelector(sel), &error)) {
    const bool match = LabelSelectorMatches(sel, labels);
    for (const auto& [key, value] : sel.match_labels) {
      auto it = labels.find(key);
      if (match && (it == labels.end() || it->second != value)) std::abort();
    }
    for (const auto& r : sel.match_expressions) {
      if (match && r.op == "Exists" && labels.count(r.key) == 0) std::abort();
      if (match && r.op == "In" && labels.count(r.key) == 0) std::abort();
    }
  } else if (error.empty()) {
    std::abort();
  }

  bool all_valid = true;
  for (const auto& term : node_sel.node_selector_terms) {
    std::string why;
    if (!OkOrMessage(ValidateNodeSelectorTerm(term), &why)) {
      if (why.empty()) std::abort();
      all_valid = false;
    }
  }
  if (all_valid) {
    const bool any = NodeSelectorMatches(node_sel, labels, node_name);
    bool each = false;
    for (const auto& term : node_sel.node_selector_terms) {
      each = each || NodeSelectorTermMatches(term, labels, node_name);
    }
    if (any != each) std::abort();  // terms are ORed
  }
  return 0;
}
