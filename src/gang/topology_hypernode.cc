#include "gang/topology_hypernode.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <regex>

#include "api/field_errors.h"
#include "api/labels.h"
#include "gang/dialects_parse.h"

namespace phalanx::gang {

namespace {

constexpr char kHyperNodeGroup[] = "topology.volcano.sh";

bool Present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

YAML::Node Child(const YAML::Node& n, const char* key) {
  if (!n.IsDefined() || !n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node& cn = n;
  return cn[key];
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

// A string field: "" when absent; an error when present but not a scalar.
std::string StrField(const YAML::Node& parent, const char* key, const std::string& path,
                     api::FieldErrors* errs) {
  const YAML::Node n = Child(parent, key);
  if (!Present(n)) return "";
  if (!n.IsScalar()) {
    errs->TypeInvalid(path, "must be a string");
    return "";
  }
  return n.Scalar();
}

// metav1.LabelSelector{matchLabels, matchExpressions[]{key, operator, values}}, validated as
// the API server does (api/labels.h ValidateLabelSelector).
bool DecodeLabelSelector(const YAML::Node& n, const std::string& path, api::LabelSelector* sel,
                         api::FieldErrors* errs) {
  const size_t before = errs->size();
  if (!n.IsMap()) {
    errs->TypeInvalid(path, "must be an object");
    return false;
  }
  const YAML::Node ml = Child(n, "matchLabels");
  if (Present(ml) && !ml.IsMap()) errs->TypeInvalid(path + ".matchLabels", "must be a map");
  if (Present(ml) && ml.IsMap()) {
    for (auto it = ml.begin(); it != ml.end(); ++it) {
      if (!it->first.IsScalar() || !it->second.IsScalar()) {
        errs->TypeInvalid(path + ".matchLabels", "must map strings to strings");
        break;
      }
      sel->match_labels[it->first.Scalar()] = it->second.Scalar();
    }
  }
  const YAML::Node me = Child(n, "matchExpressions");
  if (Present(me) && !me.IsSequence())
    errs->TypeInvalid(path + ".matchExpressions", "must be a list");
  if (Present(me) && me.IsSequence()) {
    for (size_t i = 0; i < me.size(); ++i) {
      const std::string p = path + ".matchExpressions[" + std::to_string(i) + "]";
      api::LabelSelectorRequirement r;
      r.key = StrField(me[i], "key", p + ".key", errs);
      r.op = StrField(me[i], "operator", p + ".operator", errs);
      const YAML::Node vs = Child(me[i], "values");
      if (Present(vs) && !vs.IsSequence()) errs->TypeInvalid(p + ".values", "must be a list");
      if (Present(vs) && vs.IsSequence()) {
        for (const auto& v : vs) {
          if (v.IsScalar()) r.values.push_back(v.Scalar());
        }
      }
      sel->match_expressions.push_back(std::move(r));
    }
  }
  if (errs->size() != before) return false;
  if (api::Status st = api::ValidateLabelSelector(*sel); !st.ok()) {
    errs->Add(path + "." + std::string(st.message()));
    return false;
  }
  return true;
}

// spec.members[i]: type and exactly one selector.
void DecodeMember(const YAML::Node& item, const std::string& path, HyperNode* h,
                  api::FieldErrors* errs) {
  HyperNodeMember m;
  const std::string type = StrField(item, "type", path + ".type", errs);
  if (type.empty()) {
    errs->Required(path + ".type", "Node or HyperNode");
    return;
  }
  if (type != "Node" && type != "HyperNode") {
    errs->NotSupported(path + ".type", type, {"Node", "HyperNode"});
    return;
  }
  m.hyper_node = type == "HyperNode";
  const std::string sp = path + ".selector";
  const YAML::Node sel = Child(item, "selector");
  const YAML::Node exact = Child(sel, "exactMatch");
  const YAML::Node regex = Child(sel, "regexMatch");
  const YAML::Node labels = Child(sel, "labelMatch");
  const int set = (Present(exact) ? 1 : 0) + (Present(regex) ? 1 : 0) + (Present(labels) ? 1 : 0);
  if (set != 1) {
    errs->Add(sp, "exactly one of exactMatch, regexMatch, labelMatch must be set, got " +
                      std::to_string(set));
    return;
  }
  if (Present(exact)) {
    m.exact = StrField(exact, "name", sp + ".exactMatch.name", errs);
    if (m.exact.empty()) errs->Required(sp + ".exactMatch.name", "");
  } else if (Present(regex)) {
    m.regex = StrField(regex, "pattern", sp + ".regexMatch.pattern", errs);
    if (m.regex.empty()) {
      errs->Required(sp + ".regexMatch.pattern", "");
    } else {
      try {
        std::regex compiled(m.regex);
      } catch (const std::regex_error& e) {
        errs->Invalid(sp + ".regexMatch.pattern", m.regex,
                      std::string("invalid regular expression: ") + e.what());
      }
    }
  } else {
    api::LabelSelector s;
    if (DecodeLabelSelector(labels, sp + ".labelMatch", &s, errs)) m.labels = std::move(s);
  }
  // Volcano follows only exactMatch for HyperNode members (hyper_node_info.go) and applies
  // labelMatch to Node members only: anything else would be ignored there, an error here.
  if (m.hyper_node && !Present(exact)) {
    errs->Add(sp, "a member of type HyperNode is selected by exactMatch only");
    return;
  }
  h->members.push_back(std::move(m));
}

// Leaves of `name` into *out (`names`: the names of `nodes`, for exactMatch); `chain`
// guards against cycles.
void CollectLeaves(const std::map<std::string, const HyperNode*>& by_name, const std::string& name,
                   const std::vector<const api::Node*>& nodes, const std::set<std::string>& names,
                   std::set<std::string>* chain, std::set<std::string>* out) {
  auto it = by_name.find(name);
  if (it == by_name.end() || !chain->insert(name).second) return;
  for (const auto& m : it->second->members) {
    if (m.hyper_node) {
      CollectLeaves(by_name, m.exact, nodes, names, chain, out);
      continue;
    }
    if (!m.exact.empty()) {
      if (names.count(m.exact)) out->insert(m.exact);
      continue;
    }
    std::optional<std::regex> re;
    if (!m.regex.empty()) re.emplace(m.regex);
    for (const api::Node* n : nodes) {
      const std::string& nn = n->metadata.name;
      const bool match = re         ? std::regex_search(nn, *re)
                         : m.labels ? api::LabelSelectorMatches(*m.labels, n->metadata.labels)
                                    : false;
      if (match) out->insert(nn);
    }
  }
  chain->erase(name);
}

// OK when the HyperNodes form a forest: each valid, each child with one parent, no cycle;
// else InvalidArgument naming the HyperNode.
api::Status CheckForest(const HyperNodeList& all) {
  std::map<std::string, const HyperNode*> by_name;
  for (const auto& h : all) {
    if (!h->invalid.empty()) return absl::InvalidArgumentError("invalid " + h->invalid);
    by_name[h->name] = h.get();
  }
  std::map<std::string, std::string> parent;
  for (const auto& [name, h] : by_name) {
    for (const auto& m : h->members) {
      if (!m.hyper_node) continue;
      auto [it, fresh] = parent.emplace(m.exact, name);
      if (!fresh && it->second != name) {
        return absl::InvalidArgumentError("HyperNode " + m.exact + ": member of both " +
                                          it->second + " and " + name +
                                          " (a HyperNode has one parent)");
      }
    }
  }
  // With one parent each, a cycle shows as a walk up the parents that comes back.
  for (const auto& [name, h] : by_name) {
    std::vector<std::string> walk{name};
    for (auto p = parent.find(name); p != parent.end(); p = parent.find(p->second)) {
      walk.push_back(p->second);
      if (p->second == name) {
        std::string path;
        for (auto w = walk.rbegin(); w != walk.rend(); ++w)
          path += (path.empty() ? "" : " -> ") + *w;
        return absl::InvalidArgumentError("HyperNode " + name + ": cycle " + path +
                                          " through spec.members");
      }
      if (walk.size() > by_name.size() + 1) break;
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsHyperNodeObject(const api::Unstructured& obj) {
  return obj.kind == "HyperNode" && obj.Group() == kHyperNodeGroup;
}

HyperNode HyperNodeFromObject(const api::Unstructured& obj) {
  HyperNode h;
  h.name = obj.metadata.name;
  api::FieldErrors errs("HyperNode " + h.name);
  try {
    const YAML::Node root = obj.object ? *obj.object : YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node spec = Child(root, "spec");
    const YAML::Node tier = Child(spec, "tier");
    int64_t t = 0;
    if (!Present(tier)) {
      errs.Required("spec.tier", "");
    } else if (!tier.IsScalar() || !detail::ParseInt64(tier.Scalar(), &t)) {
      errs.TypeInvalid("spec.tier", "must be an integer");
    } else if (t < 0 || t > std::numeric_limits<int32_t>::max()) {
      errs.Invalid("spec.tier", t, "must be >= 0");
    } else {
      h.tier = static_cast<int32_t>(t);
    }
    h.tier_name = StrField(spec, "tierName", "spec.tierName", &errs);
    if (h.tier_name.size() > 253)
      errs.Invalid("spec.tierName", "", "must be at most 253 characters");
    const YAML::Node members = Child(spec, "members");
    if (Present(members) && !members.IsSequence()) {
      errs.TypeInvalid("spec.members", "must be a list");
    } else if (!Present(members) || members.size() == 0) {
      errs.Required("spec.members", "must have at least 1 item");
    } else {
      for (size_t i = 0; i < members.size(); ++i) {
        DecodeMember(members[i], "spec.members[" + std::to_string(i) + "]", &h, &errs);
      }
    }
  } catch (const std::exception& e) {
    errs.Add("spec", std::string("malformed object: ") + e.what());
  }
  h.invalid = errs.Summary();
  return h;
}

std::string TierLevel(int32_t tier) { return "tier " + std::to_string(tier); }

int32_t LevelTier(const std::string& level) {
  int64_t t = 0;
  if (level.rfind("tier ", 0) != 0 || !detail::ParseInt64(level.substr(5), &t) || t < 0) return -1;
  return static_cast<int32_t>(t);
}

api::Status ResolveHyperNodeLevels(const TopologyConstraint& c, const HyperNodeList& all,
                                   PlacementLevels* out) {
  *out = PlacementLevels{};
  const std::string what = "spec.networkTopology: ";
  if (all.empty())
    return absl::NotFoundError(what + "no HyperNode exists (topology.volcano.sh/v1alpha1)");
  if (api::Status err = CheckForest(all); !err.ok()) return err;
  std::set<int32_t> tiers;
  std::map<std::string, int32_t> named;  // tierName -> its highest tier
  for (const auto& h : all) {
    tiers.insert(h->tier);
    if (!h->tier_name.empty()) named[h->tier_name] = std::max(named[h->tier_name], h->tier);
  }
  auto list = [](const auto& items, auto show) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : ", ") + show(i);
    return s;
  };
  const std::string tier_list = list(tiers, [](int32_t t) { return std::to_string(t); });
  int32_t highest = *tiers.rbegin();
  if (c.highest_tier) {
    highest = *c.highest_tier;
    if (*tiers.begin() > highest) {
      return absl::InvalidArgumentError(what + "highestTierAllowed " + std::to_string(highest) +
                                        ": no HyperNode has tier <= " + std::to_string(highest) +
                                        " (tiers: " + tier_list + ")");
    }
  } else if (!c.highest_tier_name.empty()) {
    auto it = named.find(c.highest_tier_name);
    if (it == named.end()) {
      return absl::InvalidArgumentError(
          what + "highestTierName " + Quote(c.highest_tier_name) +
          " is no HyperNode's spec.tierName (" +
          (named.empty() ? std::string("none set")
                         : list(named, [](const auto& kv) { return kv.first; })) +
          ")");
    }
    highest = it->second;
  }
  for (int32_t t : tiers) {
    if (t <= highest) out->levels.push_back(TierLevel(t));
  }
  out->required = c.hard;
  out->topology = "HyperNode tiers";
  return absl::OkStatus();
}

DomainMap HyperNodeDomains(const HyperNodeList& all, int32_t tier,
                           const std::vector<const api::Node*>& nodes) {
  std::map<std::string, const HyperNode*> by_name;
  for (const auto& h : all) by_name[h->name] = h.get();
  std::set<std::string> names;
  for (const api::Node* n : nodes) names.insert(n->metadata.name);
  DomainMap out;
  for (const auto& h : all) {
    if (h->tier != tier || !h->invalid.empty()) continue;
    std::set<std::string> chain, leaves;
    CollectLeaves(by_name, h->name, nodes, names, &chain, &leaves);
    if (!leaves.empty()) out[h->name] = std::move(leaves);
  }
  return out;
}

}  // namespace phalanx::gang
