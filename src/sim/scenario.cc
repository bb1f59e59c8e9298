#include "sim/scenario.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "api/decode.h"
#include "api/resource.h"
#include "gang/dialects.h"
#include "sim/kinds.h"
#include "sim/workloads.h"

namespace phalanx::sim {

namespace {

bool ParseSeconds(const std::string& s, int64_t* ns) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0 || v > 1e12) {
    return false;
  }
  *ns = static_cast<int64_t>(std::llround(v * 1e9));
  return true;
}

// The StatefulSet controller's claims (pkg/controller/statefulset/stateful_set_utils.go
// getPersistentVolumeClaims / updateStorage): for each spec.volumeClaimTemplates[] entry
// and each replica pod, the claim "<template>-<pod>" (the template's labels and spec, in
// the set's namespace) is added to `objects` unless one of that name exists, and the pod's
// volume named after the template (replacing one of that name) uses the claim.
api::Status AddVolumeClaimTemplates(const std::string& path, const api::WorkloadController& c,
                                    std::vector<api::Pod>* pods,
                                    std::vector<api::Unstructured>* objects) {
  if (c.kind != "StatefulSet") return absl::OkStatus();
  const api::Unstructured* sts = nullptr;
  for (const auto& o : *objects) {
    if (o.kind == c.kind && o.metadata.name == c.metadata.name &&
        o.metadata.namespace_ == c.metadata.namespace_) {
      sts = &o;
    }
  }
  if (!sts || !sts->object) return absl::OkStatus();
  // (Each lookup checks IsDefined first: a missing key of a const node is invalid.)
  const YAML::Node spec = (*sts->object)["spec"];
  if (!spec.IsDefined() || !spec.IsMap()) return absl::OkStatus();
  const YAML::Node tpls = spec["volumeClaimTemplates"];
  if (!tpls.IsDefined() || tpls.IsNull()) return absl::OkStatus();
  const std::string ns = c.metadata.namespace_.empty() ? "default" : c.metadata.namespace_;
  auto fail = [&](size_t i, const std::string& what) {
    return absl::InvalidArgumentError(path + ": StatefulSet " + ns + "/" + c.metadata.name +
                                      ": spec.volumeClaimTemplates[" + std::to_string(i) + "]" +
                                      what);
  };
  if (!tpls.IsSequence()) {
    return absl::InvalidArgumentError(path + ": StatefulSet " + ns + "/" + c.metadata.name +
                                      ": spec.volumeClaimTemplates: Invalid value: must be a list");
  }
  for (size_t i = 0; i < tpls.size(); ++i) {
    const YAML::Node meta = tpls[i].IsMap() ? tpls[i]["metadata"] : YAML::Node();
    const YAML::Node name = meta.IsDefined() && meta.IsMap() ? meta["name"] : YAML::Node();
    if (!name.IsDefined() || !name.IsScalar() || name.Scalar().empty()) {
      return fail(i, ".metadata.name: Required value");
    }
    const std::string tname = name.Scalar();
    for (auto& pod : *pods) {
      const std::string claim = tname + "-" + pod.metadata.name;
      bool exists = false;
      for (const auto& o : *objects) {
        exists =
            exists || (o.kind == "PersistentVolumeClaim" && o.metadata.name == claim &&
                       (o.metadata.namespace_.empty() ? "default" : o.metadata.namespace_) == ns);
      }
      if (!exists) {
        YAML::Node doc;
        doc["apiVersion"] = "v1";
        doc["kind"] = "PersistentVolumeClaim";
        doc["metadata"]["name"] = claim;
        doc["metadata"]["namespace"] = ns;
        api::Unstructured u;
        u.api_version = "v1";
        u.kind = "PersistentVolumeClaim";
        u.metadata.name = claim;
        u.metadata.namespace_ = ns;
        const YAML::Node labels = meta["labels"];
        if (labels.IsDefined() && labels.IsMap()) {
          doc["metadata"]["labels"] = YAML::Clone(labels);
          for (const auto& kv : labels) u.metadata.labels[kv.first.Scalar()] = kv.second.Scalar();
        }
        if (tpls[i]["spec"].IsDefined()) doc["spec"] = YAML::Clone(tpls[i]["spec"]);
        u.metadata.uid = u.Key();
        u.object = std::make_shared<const YAML::Node>(doc);
        objects->push_back(std::move(u));
      }
      auto& vols = pod.spec.volumes;
      vols.erase(std::remove_if(vols.begin(), vols.end(),
                                [&](const api::Volume& v) { return v.name == tname; }),
                 vols.end());
      vols.push_back(api::Volume{tname, claim, nullptr, {}});
    }
  }
  return absl::OkStatus();
}

// Every object of the manifests as sim/kinds.h classifies it: used ones are left alone,
// the others counted by kind, and kinds that would create pods or change placement become
// one warning each, naming the objects.
void ClassifyObjects(const std::vector<api::Unstructured>& objects, const WorkloadExpansion& wx,
                     Scenario* out) {
  struct NotModelled {
    std::string why;
    std::vector<std::string> names;
  };
  std::map<std::string, NotModelled> not_modelled;  // by KindName
  for (const auto& o : objects) {
    const std::string file = o.source.empty() ? out->name : o.source;
    const std::string what = o.kind + " " +
                             (o.metadata.namespace_.empty() ? "" : o.metadata.namespace_ + "/") +
                             o.metadata.name;
    // A gang object that does not decode (a draft's field names, minMember < 1, ...) keeps
    // its member pods pending with the error as their reason; said here too, so that it is
    // not silent when no pod of it exists yet.
    if (gang::IsGangObject(o)) {
      for (const auto& spec : gang::SpecsFromObject(o)) {
        if (spec.invalid.empty()) continue;
        out->warnings.push_back(file + ": " +
                                (spec.invalid.rfind(what, 0) == 0 ? "" : what + ": ") +
                                spec.invalid + " (its member pods stay pending)");
      }
    }
    for (const auto& f : UnmodelledFields(o))
      out->warnings.push_back(file + ": " + what + ": " + f);
    if (wx.used.count(o.Key())) continue;
    const ObjectClass c = ClassifyObject(o);
    if (c.use == ObjectUse::kUsed) continue;
    const std::string kind = KindName(o);
    ++out->unused_kinds[kind];
    if (c.use != ObjectUse::kNotModelled) continue;
    NotModelled& n = not_modelled[kind];
    n.why = c.why;
    n.names.push_back((o.metadata.namespace_.empty() ? "" : o.metadata.namespace_ + "/") +
                      o.metadata.name);
  }
  for (const auto& [kind, n] : not_modelled) {
    std::string names;
    for (size_t i = 0; i < n.names.size() && i < 5; ++i) names += (i ? ", " : "") + n.names[i];
    if (n.names.size() > 5) names += ", ...";
    out->warnings.push_back(std::to_string(n.names.size()) + " " + kind +
                            " not modelled: " + n.why + " (" + names + ")");
  }
}

}  // namespace

api::Status LoadManifestScenario(const std::string& path, Scenario* out) {
  return LoadManifestScenario(std::vector<std::string>{path}, out);
}

api::Status LoadManifestScenario(const std::vector<std::string>& paths, Scenario* out) {
  api::Manifests m;
  if (auto s = api::LoadManifests(paths, &m); !s.ok()) return s;
  std::string name;
  for (const auto& p : paths) name += (name.empty() ? "" : " + ") + p;
  return ScenarioFromManifests(std::move(m), name, out);
}

api::Node NodeGroupNode(const NodeGroup& g, int32_t n) {
  api::Node node = g.node_template;
  node.metadata.name = g.name + "-" + std::to_string(n);
  node.metadata.uid.clear();
  node.metadata.resource_version.clear();
  node.metadata.labels["kubernetes.io/hostname"] = node.metadata.name;
  for (const char* key :
       {kNodeGroupMinAnnotation, kNodeGroupMaxAnnotation, kNodeGroupDesiredAnnotation,
        kProvisioningDelayAnnotation, kProvisioningFailureRateAnnotation, kArrivalAnnotation}) {
    node.metadata.annotations.erase(key);
  }
  return node;
}

// The node group a template Node declares (scenario.h); errors name the annotation.
api::Status ReadNodeGroup(const api::Node& n, const std::string& path, NodeGroup* g) {
  const auto& ann = n.metadata.annotations;
  g->name = ann.at(kNodeGroupAnnotation);
  g->node_template = n;
  auto bad = [&](const char* key, const std::string& v, const char* want) {
    return absl::InvalidArgumentError(path + ": Node " + n.metadata.name +
                                      ": metadata.annotations[" + key + "]: Invalid value: \"" + v +
                                      "\": " + want);
  };
  auto count = [&](const char* key, int32_t* out) -> api::Status {
    auto it = ann.find(key);
    if (it == ann.end()) return absl::OkStatus();
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || v < 0 || v > 100000) {
      return bad(key, it->second, "must be an integer from 0 to 100000");
    }
    *out = static_cast<int32_t>(v);
    return absl::OkStatus();
  };
  if (g->name.empty()) return bad(kNodeGroupAnnotation, g->name, "must not be empty");
  if (auto s = count(kNodeGroupMinAnnotation, &g->min_size); !s.ok()) return s;
  if (auto s = count(kNodeGroupMaxAnnotation, &g->max_size); !s.ok()) return s;
  if (auto s = count(kNodeGroupDesiredAnnotation, &g->desired); !s.ok()) return s;
  if (g->min_size > g->max_size) {
    return bad(kNodeGroupMinAnnotation, std::to_string(g->min_size), "must not exceed max-count");
  }
  g->desired = std::clamp(g->desired, g->min_size, g->max_size);
  if (auto it = ann.find(kProvisioningDelayAnnotation); it != ann.end()) {
    if (!ParseSeconds(it->second, &g->provisioning_delay_ns)) {
      return bad(kProvisioningDelayAnnotation, it->second,
                 "must be a non-negative number of seconds");
    }
  }
  if (auto it = ann.find(kProvisioningFailureRateAnnotation); it != ann.end()) {
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0' || !(v >= 0 && v <= 1)) {
      return bad(kProvisioningFailureRateAnnotation, it->second, "must be a number from 0 to 1");
    }
    g->failure_rate = v;
  }
  return absl::OkStatus();
}

// The scenario's Nodes: at time 0, or later with the arrival annotation (in arrival
// order), moved out of `nodes`. Errors: InvalidArgument naming the file, the Node and the
// annotation. A Node with the node-group annotation is a group's template (scenario.h):
// its desired-count nodes are added instead.
api::Status ScenarioNodes(std::vector<api::Node>& nodes, const std::string& path, Scenario* out) {
  for (auto& n : nodes) {
    if (n.metadata.annotations.count(kNodeGroupAnnotation)) {
      NodeGroup g;
      if (auto s = ReadNodeGroup(n, path, &g); !s.ok()) return s;
      for (const auto& other : out->node_groups) {
        if (other.name == g.name) {
          return absl::InvalidArgumentError(path + ": Node " + n.metadata.name +
                                            ": metadata.annotations[" + kNodeGroupAnnotation +
                                            "]: Duplicate value: \"" + g.name + "\"");
        }
      }
      for (int32_t i = 1; i <= g.desired; ++i) out->nodes.push_back(NodeGroupNode(g, i));
      out->node_groups.push_back(std::move(g));
      continue;
    }
    auto a = n.metadata.annotations.find(kArrivalAnnotation);
    int64_t at = 0;
    if (a != n.metadata.annotations.end() && !ParseSeconds(a->second, &at)) {
      return absl::InvalidArgumentError(
          path + ": Node " + n.metadata.name + ": metadata.annotations[" + kArrivalAnnotation +
          "]: Invalid value: \"" + a->second + "\": must be a non-negative number of seconds");
    }
    if (at > 0) {
      out->later_nodes.push_back({std::move(n), at});
    } else {
      out->nodes.push_back(std::move(n));
    }
  }
  std::stable_sort(out->later_nodes.begin(), out->later_nodes.end(),
                   [](const TimedNode& a, const TimedNode& b) { return a.arrival < b.arrival; });
  return absl::OkStatus();
}

// Pods that name a Kueue LocalQueue themselves (Kueue's plain-pod integration, its pod
// groups): admission not modelled, a warning naming up to five of them.
void WarnKueuePods(const std::vector<api::Pod>& pods, Scenario* out) {
  std::vector<std::string> kueue_pods;
  bool pod_groups = false;
  for (const auto& p : pods) {
    if (!p.metadata.labels.count(kKueueQueueNameLabel)) continue;
    kueue_pods.push_back(p.Key());
    pod_groups = pod_groups || p.metadata.labels.count("kueue.x-k8s.io/pod-group-name");
  }
  if (!kueue_pods.empty()) {
    std::string names;
    for (size_t i = 0; i < kueue_pods.size() && i < 5; ++i) {
      names += (i ? ", " : "") + kueue_pods[i];
    }
    if (kueue_pods.size() > 5) names += ", ...";
    out->warnings.push_back(
        std::to_string(kueue_pods.size()) + " pod(s) labelled " + kKueueQueueNameLabel +
        ": Kueue's admission (LocalQueue, ClusterQueue quotas" +
        (pod_groups ? ", pod groups admitted whole (kueue.x-k8s.io/pod-group-name)" : "") +
        ") is not modelled: they are scheduled as if admitted at once (" + names + ")");
  }
}

// The pods of the manifests' controllers (api::ExpandController), with their volume claim
// templates and the controller's simulation annotations, appended to `pods`; a Kueue-labelled
// Job is a warning (admission not modelled, suspend lifted), a suspended Job a note.
api::Status ControllerPods(const std::vector<api::WorkloadController>& controllers,
                           const std::string& path, Scenario* out, std::vector<api::Pod>* pods) {
  for (const auto& c : controllers) {
    if (c.kind != "Job") out->controller_replicas[c.metadata.uid] = c.replicas;
    const std::string what = (c.source.empty() ? path : c.source) + ": " + c.kind + " " +
                             c.metadata.namespace_ + "/" + c.metadata.name;
    auto queue = c.metadata.labels.find(kKueueQueueNameLabel);
    const bool kueue = c.kind == "Job" && queue != c.metadata.labels.end();
    if (kueue) {
      out->warnings.push_back(
          what + ": metadata.labels[" + kKueueQueueNameLabel + "]: \"" + queue->second +
          "\": Kueue's admission (LocalQueue, ClusterQueue quotas) is not modelled: created "
          "as if admitted at once" +
          (c.suspend ? " (spec.suspend: true is lifted as Kueue would)" : ""));
    } else if (c.suspend) {
      out->notes.push_back(what +
                           ": spec.suspend: true: no pods are created (as the Job controller "
                           "does for a suspended Job)");
    }
    api::WorkloadController admitted = c;
    if (kueue) admitted.suspend = false;
    auto expanded = api::ExpandController(admitted);
    if (auto s = AddVolumeClaimTemplates(path, c, &expanded, &out->objects); !s.ok()) return s;
    for (auto& p : expanded) {
      // Controller-level simulation annotations apply to every pod.
      for (const char* k : {kArrivalAnnotation, kDurationAnnotation}) {
        auto it = c.metadata.annotations.find(k);
        if (it != c.metadata.annotations.end() && !p.metadata.annotations.count(k)) {
          p.metadata.annotations[k] = it->second;
        }
      }
      pods->push_back(std::move(p));
    }
  }
  return absl::OkStatus();
}

// The pods as the scenario's timed arrivals: the arrival annotation, else the creation
// timestamp relative to the earliest one; the duration annotation; sorted by arrival.
// Errors: InvalidArgument naming the file, the Pod and the annotation.
api::Status TimedPods(std::vector<api::Pod> pods, const std::string& path, Scenario* out) {
  api::Timestamp earliest = 0;
  bool have = false;
  for (const auto& p : pods) {
    if (p.metadata.creation_timestamp != 0 && (!have || p.metadata.creation_timestamp < earliest)) {
      earliest = p.metadata.creation_timestamp;
      have = true;
    }
  }
  for (auto& p : pods) {
    TimedPod tp;
    auto a = p.metadata.annotations.find(kArrivalAnnotation);
    if (a != p.metadata.annotations.end()) {
      if (!ParseSeconds(a->second, &tp.arrival)) {
        return absl::InvalidArgumentError(path + ": Pod " + p.Key() + ": metadata.annotations[" +
                                          kArrivalAnnotation + "]: Invalid value: \"" + a->second +
                                          "\": must be a non-negative number of seconds");
      }
    } else if (p.metadata.creation_timestamp != 0) {
      tp.arrival = p.metadata.creation_timestamp - earliest;
    }
    auto d = p.metadata.annotations.find(kDurationAnnotation);
    if (d != p.metadata.annotations.end()) {
      int64_t ns = 0;
      if (!ParseSeconds(d->second, &ns)) {
        return absl::InvalidArgumentError(path + ": Pod " + p.Key() + ": metadata.annotations[" +
                                          kDurationAnnotation + "]: Invalid value: \"" + d->second +
                                          "\": must be a non-negative number of seconds");
      }
      tp.run_duration_ns = ns;
    }
    p.metadata.creation_timestamp = 0;  // the store stamps the virtual arrival time
    // A pod a controller owns comes back when the scheduler evicts it (a DaemonSet's would
    // come back on its own node, which the simulator does not model: it stays gone).
    for (const auto& o : p.metadata.owner_references) {
      if (o.controller) tp.restart_on_eviction = o.kind != "DaemonSet";
    }
    tp.pod = std::move(p);
    out->pods.push_back(std::move(tp));
  }
  std::stable_sort(out->pods.begin(), out->pods.end(),
                   [](const TimedPod& a, const TimedPod& b) { return a.arrival < b.arrival; });
  return absl::OkStatus();
}

api::Status ScenarioFromManifests(api::Manifests m, const std::string& path, Scenario* out) {
  out->name = path;
  if (auto s = ScenarioNodes(m.nodes, path, out); !s.ok()) return s;
  WarnKueuePods(m.pods, out);
  // The ecosystem's workloads, as their controllers expand them (sim/workloads.h).
  WorkloadExpansion wx;
  if (auto s = ExpandWorkloads(m, &wx); !s.ok()) return s;
  ClassifyObjects(m.objects, wx, out);
  for (auto& p : wx.created.pods) m.pods.push_back(std::move(p));
  for (auto& c : wx.created.controllers) m.controllers.push_back(std::move(c));
  for (auto& o : wx.created.objects) m.objects.push_back(std::move(o));
  out->warnings.insert(out->warnings.end(), wx.warnings.begin(), wx.warnings.end());
  out->notes.insert(out->notes.end(), wx.notes.begin(), wx.notes.end());
  out->namespaces = std::move(m.namespaces);
  out->priority_classes = std::move(m.priority_classes);
  out->objects = std::move(m.objects);
  out->pod_disruption_budgets = std::move(m.pod_disruption_budgets);
  std::vector<api::Pod> pods = std::move(m.pods);
  if (auto s = ControllerPods(m.controllers, path, out, &pods); !s.ok()) return s;
  return TimedPods(std::move(pods), path, out);
}

}  // namespace phalanx::sim
