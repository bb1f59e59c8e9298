#include "sim/explain.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "framework/cycle_state.h"
#include "framework/runtime.h"
#include "gang/default_podgroup_manager.h"
#include "scheduler/scheduler.h"
#include "sim/whatif.h"
#include "store/store.h"

namespace phalanx::sim {

namespace {

using framework::Status;

std::string Num(double v) {
  std::ostringstream o;
  o << std::round(v * 1000) / 1000;
  return o.str();
}

bool SplitKey(const std::string& key, std::string* ns, std::string* name) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == key.size()) return false;
  *ns = key.substr(0, slash);
  *name = key.substr(slash + 1);
  return true;
}

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Score plugins' weighted scores of the feasible nodes into their verdicts.
void ScoreFeasible(framework::Framework& fwk, framework::CycleState& state,
                   const framework::PodInfo& pi,
                   const std::vector<const framework::NodeInfo*>& feasible,
                   std::vector<NodeVerdict>* verdicts) {
  if (feasible.empty() || !fwk.RunPreScorePlugins(state, pi, feasible).IsSuccess()) return;
  if (!fwk.HasScorePlugins()) return;
  std::vector<int64_t> totals;
  framework::ScoreTable table;
  if (!fwk.RunScorePlugins(state, pi, feasible, &totals, &table).IsSuccess()) return;
  const std::vector<std::string> names = fwk.ListPlugins("Score");
  std::map<std::string, NodeVerdict*> by_name;
  for (auto& v : *verdicts) by_name[v.node] = &v;
  for (size_t n = 0; n < feasible.size(); ++n) {
    NodeVerdict* v = by_name[feasible[n]->name()];
    if (!v) continue;
    v->total = totals[n];
    for (size_t j = 0; j < table.plugins.size(); ++j) {
      const std::string& plugin = table.plugins[j] < names.size() ? names[table.plugins[j]] : "?";
      v->scores.emplace_back(plugin, table.weights[j] * table.normalized[j][n]);
    }
  }
}

// One pending pod's scheduling pass on the snapshot as it is (upstream schedulePod without
// the numFeasibleNodesToFind cut: every node is filtered).
MemberExplanation DiagnosePod(scheduler::Scheduler& s, const api::PodPtr& pod) {
  MemberExplanation m;
  m.pod = pod->Key();
  framework::Framework* fwk = s.ProfileFor(*pod);
  if (!fwk) {
    m.unserved = "no profile serves schedulerName \"" + pod->spec.scheduler_name + "\"";
    return m;
  }
  const auto pi = framework::PodInfo::Make(pod);
  // PreEnqueue first, as the queue runs it: a gated pod is never tried on a node.
  if (const Status gate = fwk->RunPreEnqueuePlugins(*pi); !gate.IsSuccess()) {
    m.gate_plugin = gate.plugin();
    m.gate_reason = gate.Message();
    return m;
  }
  framework::CycleState state;
  framework::PreFilterResult pfr;
  const Status pre = fwk->RunPreFilterPlugins(state, *pi, &pfr);
  if (!pre.IsSuccess()) {
    m.prefilter_plugin = pre.plugin();
    m.prefilter_reason = pre.Message();
  }
  std::vector<const framework::NodeInfo*> feasible;
  for (const framework::NodeInfo* ni : s.snapshot().List()) {
    NodeVerdict v;
    v.node = ni->name();
    if (!pre.IsSuccess()) {
      v.plugin = pre.plugin();
      v.reason = pre.Message();
    } else if (!pfr.all_nodes && !pfr.node_names.count(ni->name())) {
      v.plugin = Join(pfr.narrowed_by, " ");
      v.reason = "node(s) didn't satisfy plugin(s) [" + v.plugin + "]";
    } else {
      const Status f = fwk->RunFilterPluginsWithNominatedPods(state, *pi, *ni);
      v.feasible = f.IsSuccess();
      if (!v.feasible) {
        v.plugin = f.plugin();
        v.reason = f.Message();
      } else {
        feasible.push_back(ni);
      }
    }
    m.nodes.push_back(std::move(v));
  }
  ScoreFeasible(*fwk, state, *pi, feasible, &m.nodes);
  std::stable_sort(m.nodes.begin(), m.nodes.end(), [](const NodeVerdict& a, const NodeVerdict& b) {
    if (a.feasible != b.feasible) return a.feasible;
    if (a.feasible) return a.total > b.total;
    return a.node < b.node;
  });
  return m;
}

// The diagnosis at the end of the (stopped) run: fills out's members, counts and forecast.
class Diagnoser {
 public:
  Diagnoser(const ExplainRequest& req, const ExpectedEnds& ends, Explanation* out)
      : req_(req), ends_(ends), out_(out) {}

  api::Status status;
  double now_s = 0;

  void Run(scheduler::Scheduler& s, store::Store& st) {
    s.cache().UpdateSnapshot(&s.snapshot());
    std::vector<api::PodPtr> pods;
    if (!Members(s, st, &pods)) return;
    std::vector<api::PodPtr> pending;
    for (const auto& p : pods) {
      if (p->spec.node_name.empty()) {
        pending.push_back(p);
        continue;
      }
      MemberExplanation m;
      m.pod = p->Key();
      m.bound = true;
      m.node = p->spec.node_name;
      out_->members.push_back(std::move(m));
      ++out_->active;
    }
    out_->pending = static_cast<int>(pending.size());
    std::vector<api::Resource> demand;
    for (const auto& p : pending) {
      MemberExplanation m = DiagnosePod(s, p);
      if (!m.nodes.empty() && m.nodes[0].feasible) {
        auto placed = std::make_shared<api::Pod>(*p);
        placed->spec.node_name = m.nodes[0].node;
        s.snapshot().AddPodToView(framework::PodInfo::Make(std::move(placed)));
        m.node = m.nodes[0].node;
        ++out_->fit;
      }
      if (out_->active + static_cast<int>(demand.size()) < out_->min_member) {
        demand.push_back(framework::PodInfo::Make(p)->requests);
      }
      out_->members.push_back(std::move(m));
    }
    s.cache().UpdateSnapshot(&s.snapshot());  // drops the greedy placements
    if (!out_->satisfied() && !demand.empty()) {
      // A gate does not lift when running pods end: no start can be forecast.
      for (const auto& m : out_->members) {
        if (m.gate_plugin.empty() && m.gate_reason.empty()) continue;
        out_->forecast = StartForecast{};
        out_->forecast->why_not = "held back before its first attempt by PreEnqueue " +
                                  m.gate_plugin + ": " + m.gate_reason;
        return;
      }
      const auto nodes = RoomOnlyNodes(s);
      if (nodes.empty()) {
        out_->forecast = StartForecast{};
        out_->forecast->why_not =
            "no node rejects it only for want of room (the other rejections do not end when "
            "running pods do)";
        return;
      }
      out_->forecast = ForecastStart(nodes, std::move(demand), ends_.Fn(),
                                     static_cast<api::Timestamp>(std::llround(now_s * 1e9)));
      if (!out_->is_gang) {
        // PlanReservation speaks of gangs; a single pod is a gang of one there.
        std::string& w = out_->forecast->why_not;
        for (size_t at; (at = w.find("the gang")) != std::string::npos;)
          w.replace(at, 8, "the pod");
      }
    }
  }

  // The nodes where time can help: some pending member found it feasible or was rejected
  // there only for want of room (NodeResourcesFit, GpuShare, GangReservation's hold). A
  // taint or an affinity does not go away when pods end, so the forecast leaves those out.
  std::vector<const framework::NodeInfo*> RoomOnlyNodes(scheduler::Scheduler& s) const {
    static const std::set<std::string> kRoom = {"NodeResourcesFit", "GpuShare", "GangReservation"};
    std::set<std::string> ok;
    for (const auto& m : out_->members) {
      if (m.bound || !m.prefilter_plugin.empty()) continue;
      for (const auto& v : m.nodes) {
        if (v.feasible || kRoom.count(v.plugin)) ok.insert(v.node);
      }
    }
    std::vector<const framework::NodeInfo*> nodes;
    for (const auto* ni : s.snapshot().List()) {
      if (ok.count(ni->name())) nodes.push_back(ni);
    }
    return nodes;
  }

 private:
  bool Members(scheduler::Scheduler& s, store::Store& st, std::vector<api::PodPtr>* pods) {
    const std::string when = " at t=" + Num(now_s) + "s";
    if (!req_.pod.empty()) {
      std::string ns, name;
      SplitKey(req_.pod, &ns, &name);
      auto p = st.GetPod(ns, name);
      if (!p) {
        status = absl::NotFoundError("pod " + req_.pod + " does not exist" + when +
                                     " (deleted, or not yet created)");
        return false;
      }
      pods->push_back(p);
      return true;
    }
    auto info = s.gangs().Info(req_.gang, /*with_members=*/true);
    if (!info) {
      const auto keys = s.gangs().GangKeys();
      std::vector<std::string> some(keys.begin(), keys.begin() + std::min<size_t>(keys.size(), 20));
      status = absl::NotFoundError("no gang " + req_.gang + when +
                                   " (gangs: " + (some.empty() ? "none" : Join(some)) +
                                   (keys.size() > some.size() ? ", ..." : "") + ")");
      return false;
    }
    out_->min_member =
        info->spec ? info->spec->min_member : static_cast<int>(info->member_pods.size());
    for (const auto& key : info->member_pods) {
      std::string ns, name;
      if (!SplitKey(key, &ns, &name)) continue;
      if (auto p = st.GetPod(ns, name)) pods->push_back(p);
    }
    return true;
  }

  const ExplainRequest& req_;
  const ExpectedEnds& ends_;
  Explanation* out_;
};

// Pods other than `keys` never bound and still present at the end of a run.
size_t PendingOthers(const SimulationResult& r, const std::vector<std::string>& keys) {
  size_t n = 0;
  for (const auto& o : r.outcomes) {
    if (!o.pod.empty() && !o.scheduled_s && !o.deleted_s &&
        std::find(keys.begin(), keys.end(), o.pod) == keys.end()) {
      ++n;
    }
  }
  return n;
}

// When the target was bound in a what-if run (its min_member-th member), nullopt if never.
std::optional<double> BoundAt(const SimulationResult& r, const std::vector<std::string>& keys,
                              int min_member) {
  std::vector<double> times;
  for (const auto& o : r.outcomes) {
    if (o.scheduled_s && std::find(keys.begin(), keys.end(), o.pod) != keys.end()) {
      times.push_back(*o.scheduled_s);
    }
  }
  if (static_cast<int>(times.size()) < std::max(1, min_member)) return std::nullopt;
  std::sort(times.begin(), times.end());
  return times[static_cast<size_t>(std::max(1, min_member)) - 1];
}

// Runs a what-if scenario: when the target was bound (nullopt: never), and how many other
// pods were left pending at the end in *others_pending.
std::optional<double> WhatIf(const Scenario& sc, const SimulationOptions& base,
                             const std::vector<std::string>& keys, int min_member,
                             size_t* others_pending, api::Status* err) {
  SimulationOptions so = base;
  so.progress = nullptr;
  so.hooks = {};
  SimulationResult r;
  *err = RunSimulation(sc, so, &r);
  if (!err->ok()) return std::nullopt;
  *others_pending = PendingOthers(r, keys);
  return BoundAt(r, keys, min_member);
}

// The fewest added nodes of one existing shape, then every droppable constraint alone.
api::Status SearchFixes(const Scenario& sc, const SimulationOptions& base,
                        const ExplainRequest& req, Explanation* e) {
  // A gate (PreEnqueue) is not lifted by more nodes or fewer constraints: what lifts it is
  // in its message (the missing members, the missing claim).
  for (const auto& m : e->members) {
    if (m.gate_plugin.empty() && m.gate_reason.empty()) continue;
    e->search_note = "not searched: " + m.pod +
                     " is held back before its first attempt (more nodes or fewer constraints "
                     "do not lift a PreEnqueue gate)";
    return absl::OkStatus();
  }
  std::vector<std::string> keys, pending_keys;
  for (const auto& m : e->members) {
    keys.push_back(m.pod);
    if (!m.bound) pending_keys.push_back(m.pod);
  }
  constexpr size_t kMaxShapes = 8;
  std::vector<std::string> shapes = NodeShapeTemplates(sc);
  if (shapes.size() > kMaxShapes) shapes.resize(kMaxShapes);
  api::Status err;
  bool found = false;
  for (int k = 1; k <= req.max_add_nodes && !found; ++k) {
    for (const auto& tmpl : shapes) {
      Scenario w = sc;
      if (auto s = AddNodeCopies({k, tmpl}, &w); !s.ok()) return s;
      size_t others = 0;
      auto at = WhatIf(w, base, keys, e->min_member, &others, &err);
      if (!err.ok()) return err;
      if (!at) continue;
      ExplainFix f;
      f.others_pending = others;
      f.kind = "add-nodes";
      f.count = k;
      f.node_template = tmpl;
      f.what_if = "--add-nodes " + std::to_string(k) + "x" + tmpl;
      f.bound_s = *at;
      e->fixes.push_back(std::move(f));
      found = true;
      break;
    }
  }
  if (!found && req.max_add_nodes > 0) {
    e->search_note = "no fix with up to " + std::to_string(req.max_add_nodes) +
                     " added node(s) of one existing shape (" + Join(shapes) + ")";
  }
  if (!req.search_constraints) return absl::OkStatus();
  for (const auto& c : DroppableConstraints()) {
    Scenario w = sc;
    if (!DropConstraint(c, pending_keys, &w)) continue;
    size_t others = 0;
    auto at = WhatIf(w, base, keys, e->min_member, &others, &err);
    if (!err.ok()) return err;
    if (!at) continue;
    ExplainFix f;
    f.others_pending = others;
    f.kind = "drop-constraint";
    f.constraint = c;
    f.what_if = c == "node taints" ? "add the toleration {operator: Exists} to the pending pods"
                                   : "remove " + c + " from the pending pods";
    f.bound_s = *at;
    e->fixes.push_back(std::move(f));
  }
  return absl::OkStatus();
}

}  // namespace

int MemberExplanation::feasible_nodes() const {
  return static_cast<int>(
      std::count_if(nodes.begin(), nodes.end(), [](const NodeVerdict& v) { return v.feasible; }));
}

api::Status Explain(const Scenario& sc, const SimulationOptions& base, const ExplainRequest& req,
                    Explanation* out) {
  if (req.pod.empty() == req.gang.empty()) {
    return absl::InvalidArgumentError(
        "explain: give either a pod NAMESPACE/NAME or --gang NAMESPACE/NAME");
  }
  std::string ns, name;
  if (!SplitKey(req.pod.empty() ? req.gang : req.pod, &ns, &name)) {
    return absl::InvalidArgumentError("explain: \"" + (req.pod.empty() ? req.gang : req.pod) +
                                      "\": want NAMESPACE/NAME");
  }
  if (!req.pod.empty() && std::none_of(sc.pods.begin(), sc.pods.end(), [&](const TimedPod& tp) {
        return (tp.pod.metadata.namespace_.empty() ? "default" : tp.pod.metadata.namespace_) ==
                   ns &&
               tp.pod.metadata.name == name;
      })) {
    return absl::NotFoundError("pod " + req.pod + " is not in the scenario");
  }
  *out = Explanation{};
  out->is_gang = !req.gang.empty();
  out->target = (out->is_gang ? "gang " : "pod ") + (out->is_gang ? req.gang : req.pod);
  ExpectedEnds ends(sc);
  Diagnoser d(req, ends, out);
  SimulationOptions so = base;
  so.progress = nullptr;
  so.stop_at_s = req.at_s;
  so.hooks = {};
  so.hooks.on_bound = [&](size_t i, const api::Pod&, const std::string&, double t) {
    ends.OnBound(i, t);
  };
  so.hooks.on_step = [&](double t) { d.now_s = t; };
  so.hooks.on_end = [&](scheduler::Scheduler& s, store::Store& st) {
    if (req.at_s) d.now_s = std::max(d.now_s, *req.at_s);
    d.Run(s, st);
  };
  SimulationResult res;
  if (auto s = RunSimulation(sc, so, &res); !s.ok()) return s;
  if (!d.status.ok()) return d.status;
  out->at_s = d.now_s;
  std::vector<std::string> keys;
  for (const auto& m : out->members) keys.push_back(m.pod);
  out->others_pending = PendingOthers(res, keys);
  for (auto& m : out->members) {
    for (const auto& o : res.outcomes) {
      if (o.pod == m.pod && !m.bound) m.last_attempt = o.reason;
    }
  }
  if (out->satisfied() || out->pending == 0) return absl::OkStatus();
  SimulationOptions wb = base;
  wb.stop_at_s = req.at_s;
  return SearchFixes(sc, wb, req, out);
}

namespace {

// Rejected nodes grouped by (plugin, reason): "3 node(s) NodeResourcesFit: Insufficient
// nvidia.com/gpu (gpu-1, gpu-2, gpu-3)".
void FormatRejections(const MemberExplanation& m, std::ostringstream& o) {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups;
  for (const auto& v : m.nodes) {
    if (!v.feasible) groups[{v.plugin, v.reason}].push_back(v.node);
  }
  for (const auto& [pr, nodes] : groups) {
    std::vector<std::string> shown(nodes.begin(),
                                   nodes.begin() + std::min<size_t>(nodes.size(), 8));
    o << "      rejected by " << (pr.first.empty() ? "?" : pr.first) << " on " << nodes.size()
      << " node(s): " << pr.second << " (" << Join(shown)
      << (nodes.size() > shown.size() ? ", ..." : "") << ")\n";
  }
}

void FormatMember(const MemberExplanation& m, bool show_last_attempt, std::ostringstream& o) {
  if (m.bound) {
    o << "  " << m.pod << ": bound on " << m.node << "\n";
    return;
  }
  if (!m.unserved.empty()) {
    o << "  " << m.pod << ": never scheduled: " << m.unserved << "\n";
    return;
  }
  if (!m.gate_plugin.empty() || !m.gate_reason.empty()) {
    o << "  " << m.pod << ": held back before its first attempt by PreEnqueue " << m.gate_plugin
      << ": " << m.gate_reason << "\n";
    return;
  }
  const int feasible = m.feasible_nodes();
  o << "  " << m.pod << ": " << feasible << "/" << m.nodes.size() << " node(s) feasible";
  if (!m.node.empty()) o << ", would go to " << m.node;
  o << "\n";
  if (!m.prefilter_plugin.empty()) {
    o << "      PreFilter " << m.prefilter_plugin << " rejected every node: " << m.prefilter_reason
      << "\n";
  } else {
    FormatRejections(m, o);
  }
  int shown = 0;
  for (const auto& v : m.nodes) {
    if (!v.feasible || shown++ == 3) break;
    o << "      score " << v.node << ": " << v.total;
    for (size_t i = 0; i < v.scores.size(); ++i) {
      o << (i ? ", " : " (") << v.scores[i].first << " " << v.scores[i].second;
    }
    o << (v.scores.empty() ? "" : ")") << "\n";
  }
  if (show_last_attempt && !m.last_attempt.empty())
    o << "      last attempt: " << m.last_attempt << "\n";
}

}  // namespace

std::string FormatExplanation(const Explanation& e) {
  std::ostringstream o;
  o << e.target << " at t=" << Num(e.at_s) << "s: ";
  if (e.is_gang) {
    o << "minMember " << e.min_member << ", " << e.active << " bound, " << e.pending << " pending";
  } else {
    o << (e.satisfied() ? "bound" : "pending");
  }
  o << "\n";
  // A gang's members usually share the PodGroup cycle's message: shown once then.
  std::set<std::string> attempts;
  for (const auto& m : e.members) {
    if (!m.bound) attempts.insert(m.last_attempt);
  }
  const bool shared = e.is_gang && attempts.size() == 1;
  for (const auto& m : e.members) FormatMember(m, !shared, o);
  if (shared && !attempts.begin()->empty())
    o << "  last attempt (every pending member): " << *attempts.begin() << "\n";
  if (e.satisfied()) {
    o << "nothing blocks it: " << (e.is_gang ? "minMember members are bound" : "it is bound")
      << "\n";
    return o.str();
  }
  const int short_by = e.min_member - e.active - e.fit;
  if (e.is_gang) {
    o << "pending members that fit now (placed one after another): " << e.fit << " of "
      << e.pending;
    if (short_by > 0) o << "; short by " << short_by << " member(s)";
    o << "\n";
  }
  if (e.forecast) {
    if (e.forecast->ok) {
      o << "forecast start: t=" << Num(e.forecast->start_s) << "s on " << Join(e.forecast->nodes)
        << " (expected ends of running pods; resources only)\n";
    } else {
      o << "forecast start: none (" << e.forecast->why_not << ")\n";
    }
  }
  if (e.fixes.empty())
    o << "smallest fix: none found" << (e.search_note.empty() ? "" : ": " + e.search_note) << "\n";
  for (size_t i = 0; i < e.fixes.size(); ++i) {
    const ExplainFix& f = e.fixes[i];
    o << (i == 0 ? "smallest fix: " : "also fixes it: ");
    if (f.kind == "add-nodes") {
      o << "add " << f.count << " node(s) like " << f.node_template;
    } else {
      o << "drop " << f.constraint;
    }
    o << " -> bound at t=" << Num(f.bound_s) << "s (what-if: " << f.what_if << ")";
    if (f.others_pending != e.others_pending) {
      o << "; other pods pending: " << f.others_pending << " (now " << e.others_pending << ")";
    }
    o << "\n";
  }
  if (!e.fixes.empty() && !e.search_note.empty()) o << "note: " << e.search_note << "\n";
  return o.str();
}

std::string ExplanationJson(const Explanation& e) {
  using nlohmann::json;
  json members = json::array();
  for (const auto& m : e.members) {
    json nodes = json::array();
    for (const auto& v : m.nodes) {
      json scores = json::object();
      for (const auto& [plugin, score] : v.scores) scores[plugin] = score;
      nodes.push_back({{"node", v.node},
                       {"feasible", v.feasible},
                       {"plugin", v.plugin},
                       {"reason", v.reason},
                       {"total", v.total},
                       {"scores", scores}});
    }
    json jm = {{"pod", m.pod},
               {"bound", m.bound},
               {"node", m.node},
               {"unserved", m.unserved},
               {"last_attempt", m.last_attempt},
               {"nodes", nodes}};
    jm["gate"] = m.gate_plugin.empty() && m.gate_reason.empty()
                     ? json(nullptr)
                     : json{{"plugin", m.gate_plugin}, {"reason", m.gate_reason}};
    jm["prefilter"] = m.prefilter_plugin.empty()
                          ? json(nullptr)
                          : json{{"plugin", m.prefilter_plugin}, {"reason", m.prefilter_reason}};
    members.push_back(std::move(jm));
  }
  json fixes = json::array();
  for (const auto& f : e.fixes) {
    fixes.push_back({{"kind", f.kind},
                     {"count", f.count},
                     {"node_template", f.node_template},
                     {"constraint", f.constraint},
                     {"what_if", f.what_if},
                     {"bound_s", f.bound_s},
                     {"others_pending", f.others_pending}});
  }
  json j = {{"target", e.target},
            {"gang", e.is_gang},
            {"at_s", e.at_s},
            {"min_member", e.min_member},
            {"active", e.active},
            {"pending", e.pending},
            {"fit", e.fit},
            {"satisfied", e.satisfied()},
            {"others_pending", e.others_pending},
            {"members", members},
            {"fixes", fixes},
            {"search_note", e.search_note}};
  j["forecast"] = e.forecast ? json{{"ok", e.forecast->ok},
                                    {"start_s", e.forecast->start_s},
                                    {"nodes", e.forecast->nodes},
                                    {"why_not", e.forecast->why_not}}
                             : json(nullptr);
  return j.dump(2);
}

}  // namespace phalanx::sim
