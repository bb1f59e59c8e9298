// Conformance of what Phalanx reads, on k8s.io/api's round-trip fixtures of 1.36 (and of
// the 1.37 head for scheduling.k8s.io): one fully populated object of every type.
//
//  - Every fixture of a kind Phalanx reads decodes through the live client's decoder
//    (client::DecodeObjectJson, the informers' path) and the kind's model (gang specs, the
//    DRA objects, the storage objects), after its placeholder values ("operatorValue")
//    are replaced by valid ones (Normalize).
//  - The field audit of the kinds the Workload API and DRA added (Workload, PodGroup,
//    ResourceClaim, ResourceClaimTemplate, ResourceSlice, DeviceClass, DeviceTaintRule
//    v1alpha3), of PodDisruptionBudget and Lease, and of Node, Namespace and PriorityClass:
//    every field path the 1.36 OpenAPI schema defines (schema::SchemaSet::FieldPaths) has
//    a row saying what Phalanx does with it, and the row is checked on the fixture (the
//    kinds are listed in AuditKinds; not yet audited: Pod, Job, PersistentVolume(Claim),
//    the storage.k8s.io kinds, and the 1.37 head's, which have no served schema here):
//      kHonoured  removing the field (or the row's mutation) changes the decoded model;
//      kNamed     setting it makes the object an error, or its gang pending, naming it;
//      kNotRead   not read by kube-scheduler either (status written by others,
//                 informational references); its presence changes nothing.
//      kGap       read by kube-scheduler (placement, binding or the allocation it writes)
//                 but dropped by Phalanx: a known gap. Checked like kNotRead (its presence
//                 changes nothing, so a decoder that starts reading it moves the row) and
//                 listed by the test's output, never passed off as conformant.
//    A field the schema gains without a row fails the audit, and so does a decoder that
//    drops an honoured field in silence.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "api/decode.h"
#include "client/leader_election.h"
#include "client/objects.h"
#include "client/rest_client.h"
#include "conformance/recording_server.h"
#include "dra/model.h"
#include "framework/clock.h"
#include "gang/dialects.h"
#include "schema/schema.h"
#include "schema/schema_testing.h"
#include "volume/objects.h"

namespace phalanx::conformance {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using schema::GroupVersionKind;

const std::string kFixtures136 = schema::UpstreamDir() + "/k8s-api-fixtures/v1.36.0";
const std::string kFixtures137 = schema::UpstreamDir() + "/k8s-api-fixtures/v1.37-head";

json LoadFixture(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// Replaces the fixtures' placeholder strings where the field is an enum by a valid value
// ("operatorValue" -> "In"), keyed by the field's name and its list's name.
void Normalize(json& j, const std::string& key = "", const std::string& list = "") {
  if (j.is_object()) {
    // A CEL selector must compile ("expressionValue" names no variable).
    if (key == "cel" && j.contains("expression")) j["expression"] = "true";
    for (auto& [k, v] : j.items()) {
      if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s != k + "Value") continue;
        if (k == "minAvailable" || k == "maxUnavailable") {
          v = "50%";
          continue;
        }
        if (k == "operator") {
          v = key == "tolerations" ? "Equal" : "In";
        } else if (k == "effect") {
          // A toleration with tolerationSeconds must be for NoExecute (validation).
          v = key == "tolerations" ? "NoExecute" : "NoSchedule";
        } else if (k == "allocationMode") {
          v = "ExactCount";
        } else if (k == "status" && list == "conditions") {
          v = "True";
        } else if (k == "protocol") {
          v = "TCP";
        } else if (k == "phase") {
          v = "Running";
        } else if (k == "restartPolicy") {
          v = "Always";
        } else if (k == "completionMode") {
          v = "NonIndexed";
        } else if (k == "preemptionPolicy") {
          v = "PreemptLowerPriority";
        } else if (k == "dnsPolicy") {
          v = "ClusterFirst";
        } else if (k == "whenUnsatisfiable") {
          v = "DoNotSchedule";
        } else if (k == "nodeAffinityPolicy" || k == "nodeTaintsPolicy") {
          v = "Honor";
        } else if (k == "unhealthyPodEvictionPolicy") {
          v = "AlwaysAllow";
        } else if (k == "disruptionMode") {
          v = "PodGroup";
        } else if (k == "volumeBindingMode") {
          v = "WaitForFirstConsumer";
        } else if (k == "reclaimPolicy" || k == "persistentVolumeReclaimPolicy") {
          v = "Delete";
        } else if (k == "volumeMode") {
          v = "Filesystem";
        } else if (k == "accessModes") {
          v = "ReadWriteOnce";
        } else if (k == "key" && list == "matchFields") {
          v = "metadata.name";
        } else if (k == "values" && list == "matchFields") {
          v = json::array({"node-a"});
        }
      } else if (v.is_array()) {
        for (auto& e : v) {
          if (e.is_string() && e.get<std::string>() == k + "Value" && k == "accessModes") {
            e = "ReadWriteOnce";
          } else if (e.is_string() && k == "values" && list == "matchFields") {
            e = "node-a";
          } else if (e.is_object() && k == "volumes" && e.contains("name")) {
            // The fixture sets every volume source; a volume has exactly one (validation):
            // keep the claim, which the scheduler reads, else the first source.
            json one = {{"name", e["name"]}};
            for (const auto& [src, body] : e.items()) {
              if (src == "name") continue;
              if (src == "persistentVolumeClaim" || one.size() == 1) {
                one = {{"name", e["name"]}, {src, body}};
                if (src == "persistentVolumeClaim") break;
              }
            }
            e = std::move(one);
            Normalize(e, k, k);
          } else {
            Normalize(e, k, k);
          }
        }
      } else {
        Normalize(v, k, list);
      }
    }
  }
}

// ---- JSON paths of the audit: "spec.devices.requests[].exactly.count", "x{}.value" ----

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '.') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (path.compare(i, 2, "[]") == 0 || path.compare(i, 2, "{}") == 0) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      out.push_back(path.substr(i, 2));
      ++i;
    } else {
      cur += path[i];
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Applies fn(parent, key) to every object holding the path's last key.
void ForEachParent(json& j, const std::vector<std::string>& seg, size_t i,
                   const std::function<void(json&, const std::string&)>& fn) {
  if (i + 1 == seg.size()) {
    if (j.is_object()) fn(j, seg[i]);
    return;
  }
  if (seg[i] == "[]") {
    if (j.is_array()) {
      for (auto& e : j) ForEachParent(e, seg, i + 1, fn);
    }
    return;
  }
  if (seg[i] == "{}") {
    if (j.is_object()) {
      for (auto& [k, v] : j.items()) ForEachParent(v, seg, i + 1, fn);
    }
    return;
  }
  if (!j.is_object() || !j.contains(seg[i])) return;
  json& next = j[seg[i]];
  if (i + 1 < seg.size() && seg[i + 1] == "[]" && i + 2 == seg.size()) {
    fn(j, seg[i]);  // a list of scalars: the list itself
    return;
  }
  ForEachParent(next, seg, i + 1, fn);
}

void RemovePath(json& j, const std::string& path) {
  auto seg = Segments(path);
  if (!seg.empty() && (seg.back() == "[]" || seg.back() == "{}")) seg.pop_back();
  ForEachParent(j, seg, 0, [](json& parent, const std::string& k) { parent.erase(k); });
}

bool HasPath(const json& j, const std::string& path) {
  json copy = j;
  bool found = false;
  auto seg = Segments(path);
  if (!seg.empty() && (seg.back() == "[]" || seg.back() == "{}")) seg.pop_back();
  ForEachParent(copy, seg, 0,
                [&](json& parent, const std::string& k) { found = found || parent.contains(k); });
  return found;
}

// The fixture's value at `path` copied into `dst` (the same shape: lists align by index).
void CopyPath(json& dst, const json& src, const std::string& path) {
  auto seg = Segments(path);
  if (!seg.empty() && (seg.back() == "[]" || seg.back() == "{}")) seg.pop_back();
  std::function<void(json&, const json&, size_t)> go = [&](json& d, const json& s, size_t i) {
    if (i + 1 == seg.size()) {
      if (s.is_object() && s.contains(seg[i]) && d.is_object()) d[seg[i]] = s[seg[i]];
      return;
    }
    if (seg[i] == "[]") {
      if (!s.is_array()) return;
      if (!d.is_array()) d = json::array();
      for (size_t k = 0; k < s.size(); ++k) {
        if (k >= d.size()) d.push_back(json::object());
        go(d[k], s[k], i + 1);
      }
      return;
    }
    if (seg[i] == "{}") {
      if (!s.is_object()) return;
      for (const auto& [k, v] : s.items()) go(d[k], v, i + 1);
      return;
    }
    if (!s.is_object() || !s.contains(seg[i])) return;
    if (!d.is_object()) d = json::object();
    if (!d.contains(seg[i])) d[seg[i]] = s[seg[i]].is_array() ? json::array() : json::object();
    go(d[seg[i]], s[seg[i]], i + 1);
  };
  go(dst, src, 0);
}

// ---- The live decoder ----

client::ResourceType Type(const GroupVersionKind& g, const std::string& plural,
                          client::Target t = client::Target::kObject) {
  return client::ResourceType{g.group, g.version, plural, g.kind, t, ""};
}

// What a fixture decodes into, as text (the audit's fingerprint), or the error.
using Fingerprint = std::function<api::StatusOr<std::string>(const json&)>;

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + ";";
  return out;
}
std::string Sel(const std::optional<api::LabelSelector>& s) {
  if (!s) return "nil";
  std::string out;
  for (const auto& [k, v] : s->match_labels) out += k + "=" + v + ",";
  for (const auto& r : s->match_expressions) out += r.key + " " + r.op + " " + Join(r.values) + ",";
  return out;
}
std::string NodeSel(const std::optional<api::NodeSelector>& s) {
  if (!s) return "nil";
  std::string out;
  for (const auto& t : s->node_selector_terms) {
    out += "{";
    for (const auto& r : t.match_expressions) out += r.key + r.op + Join(r.values) + ",";
    out += "|";
    for (const auto& r : t.match_fields) out += r.key + r.op + Join(r.values) + ",";
    out += "}";
  }
  return out;
}

api::StatusOr<api::UnstructuredPtr> Unstructured(const json& obj, const client::ResourceType& rt) {
  auto o = client::DecodeObjectJson(obj.dump(), rt);
  if (!o.ok()) return o.status();
  return std::static_pointer_cast<const api::Unstructured>(o->ptr);
}

// Gang objects: every spec SpecsFromObject yields; an invalid spec is an error (the gang
// stays pending with it), and a PodGroup's claims (KEP-5729).
Fingerprint GangFingerprint(const client::ResourceType& rt) {
  return [rt](const json& obj) -> api::StatusOr<std::string> {
    auto u = Unstructured(obj, rt);
    if (!u.ok()) return u.status();
    std::string out;
    for (const auto& s : gang::SpecsFromObject(**u)) {
      if (!s.invalid.empty()) return absl::InvalidArgumentError(s.invalid);
      out += s.key + " min=" + std::to_string(s.min_member) + " topo=" + s.topology.required_level +
             ";";
    }
    if (rt.kind == "PodGroup") {
      auto claims = dra::ParsePodGroupClaims(**u);
      if (!claims.ok()) return claims.status();
      for (const auto& c : claims->claims) {
        out += "claim " + c.name + "," + c.resource_claim_name + "," +
               c.resource_claim_template_name + ";";
      }
      for (const auto& [k, v] : claims->statuses) out += "status " + k + "=" + v + ";";
    }
    return out;
  };
}

std::string Tolerations(const std::vector<dra::DeviceToleration>& ts) {
  std::string out;
  for (const auto& t : ts) {
    out += t.key + t.op + t.value + t.effect +
           (t.toleration_seconds ? std::to_string(*t.toleration_seconds) : "-") + ",";
  }
  return out;
}
std::string Claim(const dra::ClaimSpec& c) {
  std::string out;
  auto req = [&](const dra::RequestSpec& r) {
    out += "{" + r.name + " class=" + r.device_class_name +
           " sel=" + std::to_string(r.selectors.size()) + " all=" + std::to_string(r.all) +
           " n=" + std::to_string(r.count) + " admin=" + std::to_string(r.admin_access) +
           " tol=" + Tolerations(r.tolerations) + " cap=";
    for (const auto& [k, q] : r.capacity_requests)
      out += k + "=" + std::to_string(q.MilliValue()) + ",";
    out += "}";
  };
  for (const auto& r : c.requests) {
    out += "request " + r.name + ":";
    if (r.exactly) req(*r.exactly);
    for (const auto& s : r.first_available) req(s);
    out += ";";
  }
  for (const auto& k : c.constraints)
    out += "constraint " + Join(k.requests) + k.match_attribute +
           " distinct=" + k.distinct_attribute + ";";
  return out;
}

Fingerprint DraFingerprint(const client::ResourceType& rt) {
  return [rt](const json& obj) -> api::StatusOr<std::string> {
    auto u = Unstructured(obj, rt);
    if (!u.ok()) return u.status();
    if (rt.kind == "DeviceClass") {
      auto c = dra::ParseDeviceClass(**u);
      if (!c.ok()) return c.status();
      return c->name + " sel=" + std::to_string(c->selectors.size()) +
             " ern=" + c->extended_resource_name;
    }
    if (rt.kind == "ResourceClaim") {
      auto c = dra::ParseResourceClaim(**u);
      if (!c.ok()) return c.status();
      std::string out = Claim(c->spec);
      if (c->allocation) {
        for (const auto& d : c->allocation->devices) {
          out += "result " + d.request + d.driver + d.pool + d.device +
                 std::to_string(d.admin_access) + " share=" + d.share_id + " consumed=";
          for (const auto& [k, q] : d.consumed_capacity) {
            out += k + "=" + std::to_string(q.MilliValue()) + ",";
          }
          out += " binding=";
          for (const auto& t : d.binding_conditions) out += t + ",";
          out += " failure=";
          for (const auto& t : d.binding_failure_conditions) out += t + ",";
          out += ";";
        }
        out += "alloc on " + NodeSel(c->allocation->node_selector) + ";";
        if (c->allocation->allocation_timestamp) {
          out += "at " + std::to_string(*c->allocation->allocation_timestamp) + ";";
        }
      }
      for (const auto& r : c->reserved_for)
        out += "reserved " + r.api_group + r.resource + r.name + r.uid + ";";
      for (const auto& d : c->devices) {
        out += "status " + d.driver + d.pool + d.device + ":";
        for (const auto& cond : d.conditions) {
          out += cond.type + "=" + cond.status + "(" + cond.reason + "," + cond.message + ")";
        }
        out += ";";
      }
      return out;
    }
    if (rt.kind == "ResourceClaimTemplate") {
      auto t = dra::ParseResourceClaimTemplate(**u);
      if (!t.ok()) return t.status();
      std::string out = Claim(t->spec);
      for (const auto& [k, v] : t->claim_metadata.labels) out += "label " + k + "=" + v + ";";
      for (const auto& [k, v] : t->claim_metadata.annotations)
        out += "annotation " + k + "=" + v + ";";
      return out;
    }
    if (rt.kind == "ResourceSlice") {
      auto s = dra::ParseResourceSlice(**u);
      if (!s.ok()) return s.status();
      std::string out = s->driver + " pool=" + s->pool + "/" + std::to_string(s->pool_generation) +
                        "/" + std::to_string(s->resource_slice_count) + " node=" + s->node_name +
                        " sel=" + NodeSel(s->node_selector) +
                        " all=" + std::to_string(s->all_nodes) +
                        " per-device=" + std::to_string(s->per_device_node_selection) + ";";
      for (const auto& d : s->devices) {
        out += "device " + d.name + " node=" + d.node_name + " sel=" + NodeSel(d.node_selector) +
               " all=" + std::to_string(d.all_nodes) + " attrs=";
        for (const auto& [k, v] : d.view.attributes) {
          out += k + "=" + std::to_string(static_cast<int>(v.kind)) + ":" +
                 std::to_string(v.int_value) + std::to_string(v.bool_value) + v.string_value + ",";
        }
        out += " cap=";
        for (const auto& [k, q] : d.view.capacity)
          out += k + "=" + std::to_string(q.MilliValue()) + ",";
        for (const auto& [k, p] : d.request_policies) {
          out += " policy " + k + ":" +
                 (p.default_value ? std::to_string(p.default_value->MilliValue()) : "-") +
                 " range=" + std::to_string(p.has_range) + "/" +
                 std::to_string(p.min.MilliValue()) + "/" +
                 (p.max ? std::to_string(p.max->MilliValue()) : "-") + "/" +
                 (p.step ? std::to_string(p.step->MilliValue()) : "-") + " values=";
          for (const auto& v : p.valid_values) out += std::to_string(v.MilliValue()) + ",";
        }
        out += " multi=" + std::to_string(d.view.allow_multiple_allocations) + " taints=";
        for (const auto& t : d.taints) out += t.key + t.value + t.effect + t.time_added + ",";
        out += " binds=" + std::to_string(d.binds_to_node) + " binding=";
        for (const auto& t : d.binding_conditions) out += t + ",";
        out += " failure=";
        for (const auto& t : d.binding_failure_conditions) out += t + ",";
        for (const auto& [set, cs] : d.consumes_counters) {
          out += " consumes " + set + ":";
          for (const auto& [k, q] : cs) out += k + "=" + std::to_string(q.MilliValue()) + ",";
        }
        out += ";";
      }
      for (const auto& [set, cs] : s->shared_counters) {
        out += "counters " + set + ":";
        for (const auto& [k, q] : cs) out += k + "=" + std::to_string(q.MilliValue()) + ",";
        out += ";";
      }
      return out;
    }
    if (rt.kind == "DeviceTaintRule") {
      auto r = dra::ParseDeviceTaintRule(**u);
      if (!r.ok()) return r.status();
      return r->name + " sel=" + std::to_string(r->has_selector) + (r->driver ? *r->driver : "-") +
             (r->pool ? *r->pool : "-") + (r->device ? *r->device : "-") +
             " taint=" + r->taint.key + r->taint.value + r->taint.effect + r->taint.time_added;
    }
    return absl::InternalError("no DRA fingerprint for " + rt.kind);
  };
}

Fingerprint PdbFingerprint() {
  return [](const json& obj) -> api::StatusOr<std::string> {
    auto o = client::DecodeObjectJson(
        obj.dump(), Type({"policy", "v1", "PodDisruptionBudget"}, "poddisruptionbudgets",
                         client::Target::kPodDisruptionBudget));
    if (!o.ok()) return o.status();
    const auto& p = *std::static_pointer_cast<const api::PodDisruptionBudget>(o->ptr);
    auto ios = [](const std::optional<api::IntOrString>& v) {
      return !v ? std::string("nil") : v->is_string ? v->str_value : std::to_string(v->int_value);
    };
    // What the scheduler and simulate's disruption controller use (the other status
    // counts are the controller's output, the eviction policy the eviction API's).
    std::string out = "sel=" + Sel(p.spec.selector) + " min=" + ios(p.spec.min_available) +
                      " max=" + ios(p.spec.max_unavailable) +
                      " allowed=" + std::to_string(p.status.disruptions_allowed) + " disrupted=";
    for (const auto& [k, v] : p.status.disrupted_pods) out += k + "@" + std::to_string(v) + ",";
    return out;
  };
}

std::string Resources(const api::ResourceList& rl) {
  std::string out;
  for (const auto& [k, q] : rl) out += k + "=" + std::to_string(q.MilliValue()) + ",";
  return out;
}

// A Node as the scheduler's plugins read it (api::Node).
Fingerprint NodeFingerprint() {
  return [](const json& obj) -> api::StatusOr<std::string> {
    auto o = client::DecodeObjectJson(obj.dump(),
                                      Type({"", "v1", "Node"}, "nodes", client::Target::kNode));
    if (!o.ok()) return o.status();
    const auto& n = *std::static_pointer_cast<const api::Node>(o->ptr);
    std::string out = "unschedulable=" + std::to_string(n.spec.unschedulable) + " taints=";
    for (const auto& t : n.spec.taints) out += t.key + "/" + t.value + "/" + t.effect + ",";
    out += " capacity=" + Resources(n.status.capacity) +
           " allocatable=" + Resources(n.status.allocatable) + " conditions=";
    for (const auto& c : n.status.conditions) out += c.type + "=" + c.status + ",";
    out += " images=";
    for (const auto& i : n.status.images) out += Join(i.names) + std::to_string(i.size_bytes) + ",";
    return out + " features=" + Join(n.status.declared_features);
  };
}

// A Namespace: its labels (namespaceSelector of pod affinity and topology spread).
Fingerprint NamespaceFingerprint() {
  return [](const json& obj) -> api::StatusOr<std::string> {
    auto o = client::DecodeObjectJson(
        obj.dump(), Type({"", "v1", "Namespace"}, "namespaces", client::Target::kNamespace));
    if (!o.ok()) return o.status();
    std::string out;
    for (const auto& [k, v] :
         std::static_pointer_cast<const api::Namespace>(o->ptr)->metadata.labels) {
      out += k + "=" + v + ",";
    }
    return out;
  };
}

Fingerprint PriorityClassFingerprint() {
  return [](const json& obj) -> api::StatusOr<std::string> {
    auto o = client::DecodeObjectJson(
        obj.dump(), Type({"scheduling.k8s.io", "v1", "PriorityClass"}, "priorityclasses",
                         client::Target::kPriorityClass));
    if (!o.ok()) return o.status();
    const auto& p = *std::static_pointer_cast<const api::PriorityClass>(o->ptr);
    return std::to_string(p.value) + " default=" + std::to_string(p.global_default) +
           " policy=" + p.preemption_policy;
  };
}

// A Lease as leader election reads it: the body LeaderElector writes back after reading
// `obj`, as the holder (holderIdentity "phalanx-0": a renewal keeps acquireTime and the
// transitions) or as a candidate (another holder: taken over once expired, the transitions
// counted up), or "not acquired".
Fingerprint LeaseFingerprint() {
  return [](const json& obj) -> api::StatusOr<std::string> {
    RecordingServer server;
    const std::string body = obj.dump();
    // One attempt: the first GET ends the campaign (stop is set before the answer goes
    // out, so a lease that is not acquired now is not waited for).
    std::atomic<bool> stop{false};
    server.SetResponder([&](const RecordedRequest& r) -> std::pair<int, std::string> {
      if (r.method == "GET") {
        stop = true;
        return {200, body};
      }
      return {200, r.body};
    });
    client::RestConfig c;
    c.server = server.url();
    c.qps = 0;
    client::RestClient api(c);
    framework::VirtualClock clock(1'700'000'000LL * api::kNanosPerSecond);
    client::LeaderElectionConfig cfg;
    cfg.identity = "phalanx-0";
    cfg.lease_namespace = obj["metadata"].value("namespace", "kube-system");
    cfg.lease_name = obj["metadata"].value("name", "kube-scheduler");
    client::LeaderElector e(api, cfg, clock);
    const bool acquired = e.Acquire(stop);
    std::string written;
    for (const auto& r : server.requests()) {
      if (r.method != "GET") {
        json w = json::parse(r.body);
        w["spec"].erase("renewTime");  // the clock's now
        if (w["spec"].value("holderIdentity", "") == "phalanx-0" &&
            w["spec"].value("acquireTime", "") == "2023-11-14T22:13:20.000000Z") {
          w["spec"].erase("acquireTime");
        }
        written = w["spec"].dump();
      }
    }
    return std::string(acquired ? "acquired " : "not acquired ") + written;
  };
}

// ---- Reads ----

std::vector<std::string> Split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t at = 0;
  while (!s.empty()) {
    const size_t next = s.find(sep, at);
    out.push_back(s.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) break;
    at = next + sep.size();
  }
  return out;
}

struct FixtureRead {
  std::string file;  // under v1.36.0 (or v1.37-head with "head/")
  client::ResourceType type;
  std::function<std::string(const api::UnstructuredPtr&)> model;  // "" or the model's error
};

std::vector<FixtureRead> Reads() {
  using T = client::Target;
  auto obj = [](std::string g, std::string v, std::string k, std::string plural) {
    return client::ResourceType{std::move(g), std::move(v), std::move(plural),
                                std::move(k), T::kObject,   ""};
  };
  auto gang = [](const api::UnstructuredPtr& u) {
    std::string err;
    for (const auto& s : gang::SpecsFromObject(*u)) {
      // The fixtures set every field: the workload-aware preemption fields are named as not
      // supported, and "basic" and "gang" at once is refused as upstream's validation does.
      for (const auto& part : Split(s.invalid, "; ")) {
        if (part.find("unknown field") != std::string::npos ||
            part.find("must be") != std::string::npos) {
          err += part + "; ";
        }
      }
    }
    return err;
  };
  auto dra_err = [](const api::Status& s) {
    return s.ok() ? std::string() : std::string(s.message());
  };
  std::vector<FixtureRead> r = {
      {"core.v1.Pod.json", {"", "v1", "pods", "Pod", T::kPod, ""}, nullptr},
      {"core.v1.Node.json", {"", "v1", "nodes", "Node", T::kNode, ""}, nullptr},
      {"core.v1.Namespace.json", {"", "v1", "namespaces", "Namespace", T::kNamespace, ""}, nullptr},
      {"scheduling.k8s.io.v1.PriorityClass.json",
       {"scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", T::kPriorityClass, ""},
       nullptr},
      {"policy.v1.PodDisruptionBudget.json",
       {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", T::kPodDisruptionBudget, ""},
       nullptr},
      {"core.v1.PersistentVolume.json", obj("", "v1", "PersistentVolume", "persistentvolumes"),
       [](const api::UnstructuredPtr& u) { return volume::DecodePersistentVolume(u).error; }},
      {"core.v1.PersistentVolumeClaim.json",
       obj("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims"),
       [](const api::UnstructuredPtr& u) { return volume::DecodePersistentVolumeClaim(u).error; }},
      {"storage.k8s.io.v1.StorageClass.json",
       obj("storage.k8s.io", "v1", "StorageClass", "storageclasses"),
       [](const api::UnstructuredPtr& u) { return volume::DecodeStorageClass(*u).error; }},
      {"storage.k8s.io.v1.CSINode.json", obj("storage.k8s.io", "v1", "CSINode", "csinodes"),
       [](const api::UnstructuredPtr& u) { return volume::DecodeCSINode(*u).error; }},
      {"storage.k8s.io.v1.CSIDriver.json", obj("storage.k8s.io", "v1", "CSIDriver", "csidrivers"),
       [](const api::UnstructuredPtr& u) { return volume::DecodeCSIDriver(*u).error; }},
      {"storage.k8s.io.v1.CSIStorageCapacity.json",
       obj("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities"),
       [](const api::UnstructuredPtr& u) { return volume::DecodeCSIStorageCapacity(*u).error; }},
      {"resource.k8s.io.v1.DeviceClass.json",
       obj("resource.k8s.io", "v1", "DeviceClass", "deviceclasses"),
       [=](const api::UnstructuredPtr& u) { return dra_err(dra::ParseDeviceClass(*u).status()); }},
      {"resource.k8s.io.v1.ResourceSlice.json",
       obj("resource.k8s.io", "v1", "ResourceSlice", "resourceslices"),
       [=](const api::UnstructuredPtr& u) {
         return dra_err(dra::ParseResourceSlice(*u).status());
       }},
      {"resource.k8s.io.v1.ResourceClaim.json",
       obj("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims"),
       [=](const api::UnstructuredPtr& u) {
         return dra_err(dra::ParseResourceClaim(*u).status());
       }},
      {"resource.k8s.io.v1.ResourceClaimTemplate.json",
       obj("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates"),
       [=](const api::UnstructuredPtr& u) {
         return dra_err(dra::ParseResourceClaimTemplate(*u).status());
       }},
      {"resource.k8s.io.v1alpha3.DeviceTaintRule.json",
       obj("resource.k8s.io", "v1alpha3", "DeviceTaintRule", "devicetaintrules"),
       [=](const api::UnstructuredPtr& u) {
         return dra_err(dra::ParseDeviceTaintRule(*u).status());
       }},
      {"scheduling.k8s.io.v1alpha2.Workload.json",
       obj("scheduling.k8s.io", "v1alpha2", "Workload", "workloads"), gang},
      {"scheduling.k8s.io.v1alpha2.PodGroup.json",
       obj("scheduling.k8s.io", "v1alpha2", "PodGroup", "podgroups"), gang},
      {"batch.v1.Job.json", obj("batch", "v1", "Job", "jobs"), nullptr},
      {"coordination.k8s.io.v1.Lease.json", obj("coordination.k8s.io", "v1", "Lease", "leases"),
       nullptr},
      {"head/scheduling.k8s.io.v1alpha3.Workload.json",
       obj("scheduling.k8s.io", "v1alpha3", "Workload", "workloads"), gang},
      {"head/scheduling.k8s.io.v1alpha3.PodGroup.json",
       obj("scheduling.k8s.io", "v1alpha3", "PodGroup", "podgroups"), gang},
      {"head/scheduling.k8s.io.v1alpha3.CompositePodGroup.json",
       obj("scheduling.k8s.io", "v1alpha3", "CompositePodGroup", "compositepodgroups"), gang},
      {"head/scheduling.k8s.io.v1beta1.Workload.json",
       obj("scheduling.k8s.io", "v1beta1", "Workload", "workloads"), gang},
      {"head/scheduling.k8s.io.v1beta1.PodGroup.json",
       obj("scheduling.k8s.io", "v1beta1", "PodGroup", "podgroups"), gang},
  };
  return r;
}

std::string FixturePath(const std::string& f) {
  return f.rfind("head/", 0) == 0 ? kFixtures137 + "/" + f.substr(5) : kFixtures136 + "/" + f;
}

TEST(ConformanceReads, FixturesOfEveryKindPhalanxReadsDecode) {
  PHALANX_UPSTREAM_SCHEMAS(schemas);  // the fixtures live beside the schemas
  (void)schemas;
  int decoded = 0;
  for (const auto& r : Reads()) {
    json obj = LoadFixture(FixturePath(r.file));
    Normalize(obj);
    // One-of fields the fixtures set together (the decoders validate as the API server):
    // a pod's claim names a claim or a template; a PDB sets minAvailable or maxUnavailable.
    const std::string kind = obj.value("kind", "");
    std::vector<json*> pod_specs;
    if (kind == "Pod") pod_specs.push_back(&obj["spec"]);
    if (kind == "Job") pod_specs.push_back(&obj["spec"]["template"]["spec"]);
    for (json* ps : pod_specs) {
      if (!ps->contains("resourceClaims")) continue;
      for (auto& c : (*ps)["resourceClaims"]) c.erase("resourceClaimTemplateName");
    }
    // Pod-level resources allow cpu, memory, hugepages-* only ("limitsKey" in the fixture).
    for (json* ps : pod_specs) {
      if (!ps->contains("resources")) continue;
      for (const char* rl : {"limits", "requests"}) {
        json& m = (*ps)["resources"][rl];
        if (!m.is_object()) continue;
        json named = json::object();
        for (const auto& [name, q] : m.items()) {
          named[name == std::string(rl) + "Key" ? "cpu" : name] = q;
        }
        m = std::move(named);
      }
    }
    // A PersistentVolume has one source: keep csi and the fields that are not sources.
    if (kind == "PersistentVolume") {
      json kept = json::object();
      for (const auto& [f, v] : obj["spec"].items()) {
        static const std::set<std::string> kNotSources = {"capacity",
                                                          "accessModes",
                                                          "claimRef",
                                                          "persistentVolumeReclaimPolicy",
                                                          "storageClassName",
                                                          "mountOptions",
                                                          "volumeMode",
                                                          "nodeAffinity",
                                                          "volumeAttributesClassName",
                                                          "csi"};
        if (kNotSources.count(f)) kept[f] = v;
      }
      obj["spec"] = std::move(kept);
    }
    if (kind == "PodDisruptionBudget") obj["spec"].erase("maxUnavailable");
    // A device request is `exactly` or `firstAvailable`; a selector's CEL must compile.
    if (kind == "ResourceClaim" || kind == "ResourceClaimTemplate") {
      json& spec = kind == "ResourceClaim" ? obj["spec"] : obj["spec"]["spec"];
      for (auto& rq : spec["devices"]["requests"]) {
        if (rq.contains("exactly")) rq.erase("firstAvailable");
      }
      // A constraint is matchAttribute or distinctAttribute, a fully qualified name.
      for (auto& con : spec["devices"]["constraints"]) {
        con.erase("distinctAttribute");
        con["matchAttribute"] = "dra.example.com/model";
        con["requests"] = json::array({spec["devices"]["requests"][0]["name"]});
      }
    }
    // A ResourceSlice has one node selection (the fixture's perDeviceNodeSelection, each
    // device its nodeName) and devices or sharedCounters (devices).
    if (kind == "ResourceSlice") {
      for (const char* f : {"nodeName", "nodeSelector", "allNodes", "sharedCounters"}) {
        obj["spec"].erase(f);
      }
      for (auto& d : obj["spec"]["devices"]) {
        d.erase("nodeSelector");
        d.erase("allNodes");
        d.erase("consumesCounters");  // it names a counter set of the removed sharedCounters
        // A requestPolicy has validRange or validValues; a step above zero.
        for (auto& [name, cap] : d["capacity"].items()) {
          cap["requestPolicy"].erase("validValues");
          cap["requestPolicy"]["validRange"].erase("step");
        }
      }
    }
    // The fixture's placeholder is not an extended resource name (validation refuses it).
    if (kind == "DeviceClass") obj["spec"]["extendedResourceName"] = "example.com/gpu";
    // Volumes need a storage size.
    if (kind == "PersistentVolume") obj["spec"]["capacity"] = {{"storage", "1Gi"}};
    if (kind == "PersistentVolumeClaim")
      obj["spec"]["resources"]["requests"] = {{"storage", "1Gi"}};
    auto o = client::DecodeObjectJson(obj.dump(), r.type);
    ASSERT_TRUE(o.ok()) << r.file << ": " << o.status();
    if (r.model) {
      const std::string err = r.model(std::static_pointer_cast<const api::Unstructured>(o->ptr));
      // A field the scheduler does not honour may be refused by name (ResourceSlice
      // spec.perDeviceNodeSelection): that is conformant, never a silent drop.
      if (err.find("not supported by this scheduler") != std::string::npos) {
        std::cout << r.file << ": refused by name: " << err << "\n";
      } else {
        EXPECT_EQ(err, "") << r.file;
      }
    }
    ++decoded;
  }
  std::cout << decoded << " fixtures decoded through the live client's decoder\n";
  EXPECT_EQ(decoded, static_cast<int>(Reads().size()));
}

// ---- The field audit ----

enum class Audit { kHonoured, kNamed, kNotRead, kGap };

struct Row {
  std::string path;  // a leaf, or a prefix covering the leaves under it
  Audit audit;
  std::string by;  // what honours it, or why it is not read
  // Instead of removing the field: a mutation of the baseline that must change the model
  // (for fields whose removal leaves the default the fixture has). For a kNamed row:
  // instead of copying the fixture's field into the baseline, a mutation that sets it
  // (where the baseline's lists do not align with the fixture's).
  std::function<void(json&)> mutate = nullptr;
  // With `mutate`: the object the mutated one is compared with (default: the baseline).
  std::function<void(json&)> reference = nullptr;
  // Honoured fields whose effect a decode cannot show (time-based): the tests that check
  // them instead; the audit counts them apart.
  std::string checked_by;
};

struct AuditKind {
  GroupVersionKind gvk;
  std::string fixture;
  Fingerprint fingerprint;
  std::vector<Row> rows;
  // Adjusts the normalized fixture into a valid object where the fixture sets mutually
  // exclusive fields (the API server would refuse it): the baseline starts from it.
  std::function<void(json&)> prepare = nullptr;
};

const Row* RowFor(const std::vector<Row>& rows, const std::string& leaf) {
  const Row* best = nullptr;
  for (const auto& r : rows) {
    const bool match = leaf == r.path || leaf.rfind(r.path + ".", 0) == 0 ||
                       leaf.rfind(r.path + "[]", 0) == 0 || leaf.rfind(r.path + "{}", 0) == 0;
    if (match && (!best || r.path.size() > best->path.size())) best = &r;
  }
  return best;
}

// The leaves of the schema's field paths, without metadata, apiVersion and kind (the
// same for every kind; ObjectMeta is read by the shared decoder).
std::vector<std::string> Leaves(const schema::SchemaSet& schemas, const GroupVersionKind& g) {
  std::vector<std::string> all = schemas.FieldPaths(g), out;
  for (const auto& p : all) {
    if (p == "apiVersion" || p == "kind" || p.rfind("metadata", 0) == 0) continue;
    bool leaf = true;
    for (const auto& q : all) {
      if (q.size() > p.size() && q.compare(0, p.size(), p) == 0 &&
          (q[p.size()] == '.' || q[p.size()] == '[' || q[p.size()] == '{')) {
        leaf = false;
        break;
      }
    }
    if (leaf) out.push_back(p);
  }
  return out;
}

std::string LastName(const std::string& leaf) {
  auto seg = Segments(leaf);
  while (!seg.empty() && (seg.back() == "[]" || seg.back() == "{}")) seg.pop_back();
  return seg.empty() ? leaf : seg.back();
}

// Audits kind `k`; counts the fields audited and those checked elsewhere, and appends the
// known gaps ("<kind> <field>: <why>") to `gaps`.
void RunAudit(const AuditKind& k, int* audited, int* elsewhere, std::vector<std::string>* gaps) {
  PHALANX_UPSTREAM_SCHEMAS(schemas);
  const std::vector<std::string> leaves = Leaves(*schemas, k.gvk);
  ASSERT_FALSE(leaves.empty()) << k.gvk.String();
  json fixture = LoadFixture(FixturePath(k.fixture));
  Normalize(fixture);
  // Every leaf has a row; every row covers a leaf.
  for (const auto& l : leaves) {
    EXPECT_NE(RowFor(k.rows, l), nullptr)
        << k.gvk.String() << ": field " << l << " has no audit row (honoured, named or not read)";
  }
  for (const auto& r : k.rows) {
    bool used = false;
    for (const auto& l : leaves) used = used || RowFor(k.rows, l) == &r;
    EXPECT_TRUE(used) << k.gvk.String() << ": audit row " << r.path
                      << " matches no field of the schema";
  }
  // The baseline: the fixture without the named (refused) fields.
  json base = fixture;
  if (k.prepare) k.prepare(base);
  for (const auto& l : leaves) {
    const Row* r = RowFor(k.rows, l);
    if (r && r->audit == Audit::kNamed) RemovePath(base, r->path);
  }
  auto fp = k.fingerprint(base);
  ASSERT_TRUE(fp.ok()) << k.gvk.String() << ": the baseline does not decode: " << fp.status()
                       << "\n"
                       << base.dump();
  for (const auto& l : leaves) {
    const Row* r = RowFor(k.rows, l);
    if (!r) continue;
    ++*audited;
    if (!HasPath(fixture, l)) {
      ADD_FAILURE() << k.gvk.String() << ": the fixture does not set " << l;
      continue;
    }
    if (r->audit == Audit::kHonoured) {
      if (!r->checked_by.empty()) {
        ++*elsewhere;
        continue;
      }
      json m = base;
      std::string ref = *fp;
      if (r->mutate) {
        if (r->reference) {
          json rj = base;
          r->reference(rj);
          auto fr = k.fingerprint(rj);
          ASSERT_TRUE(fr.ok()) << k.gvk.String() << ": " << l << ": reference: " << fr.status();
          ref = *fr;
        }
        r->mutate(m);
      } else {
        RemovePath(m, l);
      }
      auto fm = k.fingerprint(m);
      EXPECT_TRUE(!fm.ok() || *fm != ref)
          << k.gvk.String() << ": " << l << " is audited as honoured (" << r->by
          << "), but the decoded model does not change without it: dropped in silence";
    } else if (r->audit == Audit::kNamed) {
      json m = base;
      if (r->mutate) {
        r->mutate(m);
      } else {
        CopyPath(m, fixture, r->path);
      }
      auto fm = k.fingerprint(m);
      EXPECT_FALSE(fm.ok()) << k.gvk.String() << ": " << l
                            << " is audited as refused by name, but the object decodes: " << *fm;
      if (!fm.ok()) {
        EXPECT_NE(std::string(fm.status().message()).find(LastName(r->path)), std::string::npos)
            << k.gvk.String() << ": the error does not name " << r->path << ": " << fm.status();
      }
    } else if (r->audit == Audit::kGap) {
      json m = base;
      RemovePath(m, l);
      auto fm = k.fingerprint(m);
      EXPECT_TRUE(fm.ok() && *fm == *fp)
          << k.gvk.String() << ": " << l << " is audited as a known gap (" << r->by
          << "), but removing it changes the decoded model: move the row to honoured";
      const std::string gap = k.gvk.String() + " " + r->path + ": " + r->by;
      if (gaps->empty() || gaps->back() != gap) gaps->push_back(gap);
    } else {
      json m = base;
      RemovePath(m, l);
      auto fm = k.fingerprint(m);
      EXPECT_TRUE(fm.ok() && *fm == *fp)
          << k.gvk.String() << ": " << l << " is audited as not read (" << r->by
          << "), but removing it changes the decoded model";
    }
  }
}

const Audit H = Audit::kHonoured;
const Audit N = Audit::kNamed;
const Audit X = Audit::kNotRead;

std::vector<AuditKind> AuditKinds() {
  const GroupVersionKind wl{"scheduling.k8s.io", "v1alpha2", "Workload"};
  const GroupVersionKind pg{"scheduling.k8s.io", "v1alpha2", "PodGroup"};
  auto first_policy_gang = [](const char* list) {
    return [list](json& j) {
      json& p = list[0] ? j["spec"][list][0]["schedulingPolicy"] : j["spec"]["schedulingPolicy"];
      p.erase("gang");
    };
  };
  const std::string wap = "(WorkloadAwarePreemption, alpha: the gang stays pending naming it)";
  const std::string tmpl =
      "copied into the PodGroups made from the template; refused by name there (" + wap + ")";
  std::vector<AuditKind> kinds;
  kinds.push_back(
      {wl,
       "scheduling.k8s.io.v1alpha2.Workload.json",
       GangFingerprint(Type(wl, "workloads")),
       {{"spec.controllerRef", X,
         "informational link to the controller (kube-scheduler does not read it)"},
        {"spec.podGroupTemplates[].name", H, "GangScheduling: the template's gang key"},
        {"spec.podGroupTemplates[].schedulingPolicy.basic", H, "GangScheduling: not a gang",
         [](json& j) {
           json& p = j["spec"]["podGroupTemplates"][0]["schedulingPolicy"];
           p.erase("gang");
           p["basic"] = json::object();
         }},
        {"spec.podGroupTemplates[].schedulingPolicy.gang.minCount", H, "GangScheduling: minMember"},
        {"spec.podGroupTemplates[].schedulingConstraints.topology[].key", H,
         "GangScheduling: a required topology level"},
        {"spec.podGroupTemplates[].resourceClaims", X,
         "copied into the PodGroups made from the template, read there (KEP-5729)"},
        {"spec.podGroupTemplates[].disruptionMode", X, tmpl},
        {"spec.podGroupTemplates[].priorityClassName", X, tmpl},
        {"spec.podGroupTemplates[].priority", X, tmpl}},
       [](json& j) { j["spec"]["podGroupTemplates"][0]["schedulingPolicy"].erase("basic"); }});
  kinds.push_back(
      {pg,
       "scheduling.k8s.io.v1alpha2.PodGroup.json",
       GangFingerprint(Type(pg, "podgroups")),
       {{"spec.podGroupTemplateRef", X, "informational reference to the Workload template"},
        {"spec.schedulingPolicy.basic", H, "GangScheduling: not a gang",
         [](json& j) {
           j["spec"]["schedulingPolicy"].erase("gang");
           j["spec"]["schedulingPolicy"]["basic"] = json::object();
         }},
        {"spec.schedulingPolicy.gang.minCount", H, "GangScheduling: minMember"},
        {"spec.schedulingConstraints.topology[].key", H,
         "GangScheduling: a required topology level"},
        {"spec.resourceClaims[].name", H, "DynamicResources (KEP-5729)"},
        {"spec.resourceClaims[].resourceClaimName", H, "DynamicResources (KEP-5729)"},
        {"spec.resourceClaims[].resourceClaimTemplateName", H, "DynamicResources (KEP-5729)",
         [](json& j) {
           j["spec"]["resourceClaims"][0].erase("resourceClaimName");
           j["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "template-a";
         },
         [](json& j) {
           j["spec"]["resourceClaims"][0].erase("resourceClaimName");
           j["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "template-b";
         }},
        {"spec.disruptionMode", N, wap},
        {"spec.priorityClassName", N, wap},
        {"spec.priority", N, wap},
        {"status.conditions", X, "written by Phalanx (PodGroupScheduled), not read"},
        {"status.resourceClaimStatuses[].name", H,
         "DynamicResources: the generated claim of an entry"},
        {"status.resourceClaimStatuses[].resourceClaimName", H,
         "DynamicResources: the generated claim of an entry"}},
       [](json& j) {
         j["spec"]["schedulingPolicy"].erase("basic");
         // A claim names a ResourceClaim or a template, not both.
         j["spec"]["resourceClaims"][0].erase("resourceClaimTemplateName");
       }});
  (void)first_policy_gang;
  const GroupVersionKind pdb{"policy", "v1", "PodDisruptionBudget"};
  const std::string pre = "DefaultPreemption (filterPodsWithPDBViolation)";
  const std::string dc =
      "written by the disruption controller (simulate: sim/disruption.cc), not read";
  kinds.push_back(
      {pdb,
       "policy.v1.PodDisruptionBudget.json",
       PdbFingerprint(),
       {{"spec.selector", H, pre},
        {"spec.minAvailable", H, "simulate's disruption controller (sim/disruption.cc)"},
        {"spec.maxUnavailable", H, "simulate's disruption controller (sim/disruption.cc)",
         [](json& j) {
           j["spec"].erase("minAvailable");
           j["spec"]["maxUnavailable"] = "50%";
         },
         [](json& j) { j["spec"].erase("minAvailable"); }},
        {"spec.unhealthyPodEvictionPolicy", X,
         "read by the eviction API; preemption deletes pods as upstream's does"},
        {"status.disruptionsAllowed", H, pre},
        {"status.disruptedPods", H, pre},
        {"status.conditions", X, dc},
        {"status.currentHealthy", X, dc},
        {"status.desiredHealthy", X, dc},
        {"status.expectedPods", X, dc},
        {"status.observedGeneration", X, dc}},
       // minAvailable and maxUnavailable at once is invalid (the API server refuses it).
       [](json& j) { j["spec"].erase("maxUnavailable"); }});
  const GroupVersionKind lease{"coordination.k8s.io", "v1", "Lease"};
  const std::string le = "leader election (client/leader_election.cc)";
  const std::string expiry =
      "e2e.leader_election, e2e.leader_kill9 (the lease taken over once it expires: the "
      "expiry is measured on the candidate's monotonic clock, as client-go does)";
  kinds.push_back(
      {lease,
       "coordination.k8s.io.v1.Lease.json",
       LeaseFingerprint(),
       {{"spec.holderIdentity", H, le},
        {"spec.leaseDurationSeconds", H, le, nullptr, nullptr, expiry},
        {"spec.renewTime", H, le, nullptr, nullptr, expiry},
        {"spec.acquireTime", H, le + ": kept when the holder renews",
         [](json& j) { j["spec"]["holderIdentity"] = "phalanx-0"; },
         [](json& j) {
           j["spec"]["holderIdentity"] = "phalanx-0";
           j["spec"]["acquireTime"] = "2023-11-14T22:13:20.000000Z";
         }},
        {"spec.leaseTransitions", H, le + ": counted up on a takeover",
         [](json& j) { j["spec"].erase("holderIdentity"); },
         [](json& j) {
           j["spec"].erase("holderIdentity");
           j["spec"]["leaseTransitions"] = 0;
         }},
        {"spec.preferredHolder", X,
         "coordinated leader election (CoordinatedLeaderElection, off by default): not read"},
        {"spec.strategy", X,
         "coordinated leader election (CoordinatedLeaderElection, off by default): not read"}}});
  // ---- The core kinds the informers decode (client/objects.cc) ----
  const GroupVersionKind node{"", "v1", "Node"};
  const std::string kubelet = "written by the kubelet for others; kube-scheduler does not read it";
  kinds.push_back(
      {node,
       "core.v1.Node.json",
       NodeFingerprint(),
       {{"spec.configSource", X, "dynamic kubelet configuration (removed upstream); not read"},
        {"spec.externalID", X, "deprecated; not read"},
        {"spec.podCIDR", X, "networking; not read"},
        {"spec.podCIDRs", X, "networking; not read"},
        {"spec.providerID", X, "the cloud provider's; not read"},
        {"spec.taints[].effect", H, "TaintToleration"},
        {"spec.taints[].key", H, "TaintToleration"},
        {"spec.taints[].value", H, "TaintToleration"},
        {"spec.taints[].timeAdded", X, "the taint eviction controller's (NoExecute); not read"},
        {"spec.unschedulable", H, "NodeUnschedulable"},
        {"status.addresses", X, kubelet},
        {"status.allocatable", H, "NodeResourcesFit, NodeResourcesBalancedAllocation"},
        {"status.capacity", H,
         "the allocatable when allocatable is unset; extenders' Node; GPU share (gpu/)"},
        {"status.conditions[].type", H, "extenders' Node; node-condition events (queueing)"},
        {"status.conditions[].status", H, "extenders' Node; node-condition events (queueing)"},
        {"status.conditions[].lastHeartbeatTime", X, kubelet},
        {"status.conditions[].lastTransitionTime", X, kubelet},
        {"status.conditions[].message", X, kubelet},
        {"status.conditions[].reason", X, kubelet},
        {"status.config", X, kubelet},
        {"status.daemonEndpoints", X, kubelet},
        {"status.declaredFeatures", H, "NodeDeclaredFeatures (KEP-5328)"},
        {"status.features", X, kubelet},
        {"status.images", H, "ImageLocality"},
        {"status.nodeInfo", X, kubelet + " (placement uses the node's labels)"},
        {"status.phase", X, "deprecated; not read"},
        {"status.runtimeHandlers", X, kubelet + " (RuntimeClass: the pod's overhead)"},
        {"status.volumesAttached", X, kubelet + " (NodeVolumeLimits reads CSINode)"},
        {"status.volumesInUse", X, kubelet}}});
  const GroupVersionKind ns{"", "v1", "Namespace"};
  kinds.push_back({ns,
                   "core.v1.Namespace.json",
                   NamespaceFingerprint(),
                   {{"spec.finalizers", X, "the namespace controller's; not read"},
                    {"status.phase", X,
                     "the namespace controller's (admission refuses pods of a "
                     "terminating namespace); not read"},
                    {"status.conditions", X, "the namespace controller's; not read"}}});
  const GroupVersionKind pc{"scheduling.k8s.io", "v1", "PriorityClass"};
  const std::string admission =
      "the Priority admission of a pod's priority (simulate's store; live: the API server's)";
  kinds.push_back({pc,
                   "scheduling.k8s.io.v1.PriorityClass.json",
                   PriorityClassFingerprint(),
                   {{"value", H, admission + "; KAI gang priority"},
                    {"globalDefault", H, admission + ": pods without a class"},
                    // Unset is PreemptLowerPriority (the default the fixture has).
                    {"preemptionPolicy", H, admission + ": pods without their own",
                     [](json& j) { j["preemptionPolicy"] = "Never"; }},
                    {"description", X, "informational"}}});
  // ---- resource.k8s.io (DynamicResources; allocation in dra/allocator.cc) ----
  const std::string alloc = "DynamicResources: structured allocation (dra/allocator.cc)";
  const std::string cc =
      alloc + ": consumable capacity (KEP-5075; what each share of a device takes)";
  const std::string config_gap =
      "upstream's allocator copies it into the claim's status.allocation.devices.config for "
      "the driver; the allocation Phalanx writes leaves it out";
  // Rows of a claim's spec at `p` ("spec" or "spec.spec"); the baseline (PrepareClaim) has
  // requests[0] `exactly` and requests[1] `firstAvailable`.
  auto claim_rows = [&](const std::string& p, std::function<json&(json&)> spec) {
    const std::string rq = p + ".devices.requests[]";
    auto exactly = [spec](json& j) -> json& {
      return spec(j)["devices"]["requests"][0]["exactly"];
    };
    auto sub = [spec](json& j) -> json& {
      return spec(j)["devices"]["requests"][1]["firstAvailable"][0];
    };
    auto all_mode = [](std::function<json&(json&)> at) {
      return [at](json& j) {
        at(j).erase("count");
        at(j)["allocationMode"] = "All";
      };
    };
    auto exists = [](std::function<json&(json&)> at) {
      return [at](json& j) {
        json& t = at(j)["tolerations"][0];
        t.erase("value");
        t["operator"] = "Exists";
      };
    };
    std::vector<Row> rows = {
        {p + ".devices.config", Audit::kGap, config_gap},
        {p + ".devices.constraints[].distinctAttribute", H, cc,
         [spec](json& j) {
           json& con = spec(j)["devices"]["constraints"][0];
           con.erase("matchAttribute");
           con["distinctAttribute"] = "dra.example.com/model";
         }},
        {p + ".devices.constraints[].matchAttribute", H, alloc + ": matchAttribute"},
        {p + ".devices.constraints[].requests", H, alloc + ": the constrained requests"},
        {rq + ".name", H, alloc},
        {rq + ".exactly.adminAccess", H, alloc + ": admin access (allocated devices stay free)"},
        {rq + ".exactly.allocationMode", H, alloc, all_mode(exactly)},
        {rq + ".exactly.capacity", H, cc},
        {rq + ".exactly.count", H, alloc},
        {rq + ".exactly.deviceClassName", H, alloc + ": the class's selectors"},
        {rq + ".exactly.selectors", H, alloc + ": CEL selectors (cel/)"},
        {rq + ".exactly.tolerations", H, alloc + ": device taints (KEP-5055)"},
        {rq + ".exactly.tolerations[].operator", H, alloc + ": device taints (KEP-5055)",
         exists(exactly)},
        {rq + ".firstAvailable[].name", H, alloc + ": the subrequest's result name"},
        {rq + ".firstAvailable[].allocationMode", H, alloc, all_mode(sub)},
        {rq + ".firstAvailable[].capacity", H, cc},
        {rq + ".firstAvailable[].count", H, alloc},
        {rq + ".firstAvailable[].deviceClassName", H, alloc + ": the class's selectors"},
        {rq + ".firstAvailable[].selectors", H, alloc + ": CEL selectors (cel/)"},
        {rq + ".firstAvailable[].tolerations", H, alloc + ": device taints (KEP-5055)"},
        {rq + ".firstAvailable[].tolerations[].operator", H, alloc + ": device taints (KEP-5055)",
         exists(sub)},
    };
    return rows;
  };
  // The fixture sets `exactly` and `firstAvailable` on one request, which validation
  // refuses: the baseline has one request of each, constraints naming the first.
  auto prepare_claim = [](json& spec) {
    json& reqs = spec["devices"]["requests"];
    json second = reqs[0];
    second["name"] = "second";
    second.erase("exactly");
    reqs[0].erase("firstAvailable");
    reqs.push_back(second);
    json& con = spec["devices"]["constraints"][0];
    con["requests"] = json::array({"nameValue"});
    con["matchAttribute"] = "dra.example.com/model";
    con.erase("distinctAttribute");  // exactly one of matchAttribute, distinctAttribute
  };
  const GroupVersionKind rc{"resource.k8s.io", "v1", "ResourceClaim"};
  {
    std::vector<Row> rows = claim_rows("spec", [](json& j) -> json& { return j["spec"]; });
    const std::string results = "status.allocation.devices.results[]";
    const std::string in_use = alloc + ": an allocated claim's devices are in use";
    // KEP-5007 (DRADeviceBindingConditions, beta): src/plugins/dynamicresources
    // DynamicResourcesBindingTest.* and src/sim DraBindingConditionsTest.*.
    const std::string binding =
        "DynamicResources (KEP-5007): PreBind waits until the result's binding conditions are "
        "True in status.devices, fails on a failure condition or the timeout "
        "(DraBindingConditionsTest.*, DynamicResourcesBindingTest.*)";
    const std::string share =
        alloc + ": a share of a device with allowMultipleAllocations (its capacity in use)";
    std::vector<Row> status = {
        {"status.allocation.allocationTimestamp", H,
         "DynamicResources: the binding timeout counts from it; written by PreBind "
         "(DynamicResourcesBindingTest.TimeoutEndsTheWaitAndMakesTheClaimUnavailable, "
         "DraBindingConditionsTest.UnmetConditionTimesOutAndFreesTheDeviceForAnotherPod)"},
        {"status.allocation.devices.config", X, "read by the kubelet and the driver"},
        {results + ".adminAccess", H, in_use},
        {results + ".device", H, in_use},
        {results + ".driver", H, in_use},
        {results + ".pool", H, in_use},
        {results + ".request", H, in_use},
        {results + ".bindingConditions", H, binding},
        {results + ".bindingFailureConditions", H, binding},
        {results + ".consumedCapacity", H, share},
        {results + ".shareID", H, share},
        {results + ".tolerations", X, "read by the device taint eviction controller"},
        {"status.allocation.nodeSelector", H, alloc + ": the allocation's nodes"},
        {"status.devices", X,
         "written by the driver (device status); kept by the scheduler's status writes while "
         "the claim is allocated, cleared with a deallocation"},
        {"status.devices[].driver", H, binding + ": the entry of the allocated device"},
        {"status.devices[].pool", H, binding + ": the entry of the allocated device"},
        {"status.devices[].device", H, binding + ": the entry of the allocated device"},
        {"status.devices[].conditions[].type", H, binding},
        {"status.devices[].conditions[].status", H, binding + ": only True counts"},
        {"status.devices[].conditions[].reason", H, binding + ": in the failure's message"},
        {"status.devices[].conditions[].message", H, binding + ": in the failure's message"},
        {"status.reservedFor", H, alloc + ": the claim's consumers (in use, shared)"},
    };
    rows.insert(rows.end(), status.begin(), status.end());
    kinds.push_back({rc, "resource.k8s.io.v1.ResourceClaim.json",
                     DraFingerprint(Type(rc, "resourceclaims")), rows,
                     [=](json& j) { prepare_claim(j["spec"]); }});
  }
  const GroupVersionKind rct{"resource.k8s.io", "v1", "ResourceClaimTemplate"};
  {
    std::vector<Row> rows =
        claim_rows("spec.spec", [](json& j) -> json& { return j["spec"]["spec"]; });
    const std::string gen = "copied into the claim the resourceclaim controller makes (simulate)";
    rows.push_back({"spec.metadata", X,
                    "upstream's resourceclaim controller copies labels and annotations only"});
    rows.push_back({"spec.metadata.labels", H, gen});
    rows.push_back({"spec.metadata.annotations", H, gen});
    kinds.push_back({rct, "resource.k8s.io.v1.ResourceClaimTemplate.json",
                     DraFingerprint(Type(rct, "resourceclaimtemplates")), rows,
                     [=](json& j) { prepare_claim(j["spec"]["spec"]); }});
  }
  const GroupVersionKind rs{"resource.k8s.io", "v1", "ResourceSlice"};
  {
    const std::string dev = "spec.devices[]";
    const std::string pdns =
        alloc + ": per-device node selection (the pools a node sees, the allocation's nodes)";
    // Per-device node selection instead of the baseline's slice-level nodeSelector, with
    // `set` giving device 0 its node selection.
    auto per_device = [](std::function<void(json&)> set) {
      return [set](json& j) {
        j["spec"].erase("nodeSelector");
        j["spec"]["perDeviceNodeSelection"] = true;
        set(j["spec"]["devices"][0]);
      };
    };
    auto device_node = [](const char* name) { return [name](json& d) { d["nodeName"] = name; }; };
    const std::string binding =
        "(KEP-5007) copied into the allocation result; PreBind waits for them "
        "(DraBindingConditionsTest.*, DynamicResourcesBindingTest.*)";
    auto no_selector = [](const char* field, json value) {
      return [field, value](json& j) {
        j["spec"].erase("nodeSelector");
        j["spec"][field] = value;
      };
    };
    std::vector<Row> rows = {
        {"spec.allNodes", H, alloc + ": the pool's nodes", no_selector("allNodes", false),
         no_selector("allNodes", true)},
        {"spec.driver", H, alloc},
        {"spec.nodeName", H, alloc + ": the pool's nodes", no_selector("nodeName", "node-b"),
         no_selector("nodeName", "node-a")},
        {"spec.nodeSelector", H, alloc + ": the pool's nodes"},
        {"spec.perDeviceNodeSelection", H, pdns, per_device(device_node("node-a"))},
        {"spec.pool.generation", H, alloc + ": only the newest generation of a pool counts"},
        {"spec.pool.name", H, alloc},
        {"spec.pool.resourceSliceCount", H,
         alloc + ": an incomplete pool (fewer slices than this) gives no devices and fails "
                 "allocationMode All"},
        // The baseline's slice holds devices; a slice of counter sets holds nothing else.
        {"spec.sharedCounters", H, alloc + ": counters of partitionable devices (KEP-4815)",
         [](json& j) {
           j["spec"].erase("devices");
           j["spec"]["sharedCounters"] = json::parse(
               R"([{"name": "counterSetValue", "counters": {"countersKey": {"value": "1"}}}])");
         }},
        {dev + ".name", H, alloc},
        {dev + ".attributes", H, alloc + ": what CEL selectors and matchAttribute see"},
        {dev + ".attributes{}.ints", N, "(DRAListTypeAttributes, alpha) refused by name"},
        {dev + ".attributes{}.bools", N, "(DRAListTypeAttributes, alpha) refused by name"},
        {dev + ".attributes{}.strings", N, "(DRAListTypeAttributes, alpha) refused by name"},
        {dev + ".attributes{}.versions", N, "(DRAListTypeAttributes, alpha) refused by name"},
        {dev + ".capacity{}.value", H, alloc + ": what CEL selectors see"},
        {dev + ".capacity{}.requestPolicy", H,
         alloc + ": how much of a shared device's capacity a share consumes (KEP-5075)"},
        // The baseline's policy has a validRange without a step (validValues and a step of 0
        // together are refused): these set them.
        {dev + ".capacity{}.requestPolicy.validRange.step", H,
         alloc + ": how much of a shared device's capacity a share consumes (KEP-5075)",
         [](json& j) {
           j["spec"]["devices"][0]["capacity"]["capacityKey"]["requestPolicy"]["validRange"]
            ["step"] = "1";
         }},
        {dev + ".capacity{}.requestPolicy.validValues", H,
         alloc + ": how much of a shared device's capacity a share consumes (KEP-5075)",
         [](json& j) {
           json& p = j["spec"]["devices"][0]["capacity"]["capacityKey"]["requestPolicy"];
           p.erase("validRange");
           p["validValues"] = json::array({"0"});
         }},
        {dev + ".allowMultipleAllocations", H,
         alloc + ": a shared device (KEP-5075); CEL device.allowMultipleAllocations"},
        {dev + ".consumesCounters", H, alloc + ": counters of partitionable devices (KEP-4815)"},
        {dev + ".nodeName", H, pdns, per_device(device_node("node-b")),
         per_device(device_node("node-a"))},
        {dev + ".nodeSelector", H, pdns, per_device([](json& d) {
           d["nodeSelector"] = json::parse(
               R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In",
                   "values": ["a"]}]}]})");
         }),
         per_device(device_node("node-a"))},
        {dev + ".allNodes", H, pdns, per_device([](json& d) { d["allNodes"] = true; }),
         per_device(device_node("node-a"))},
        {dev + ".taints", H, alloc + ": device taints (KEP-5055)"},
        {dev + ".bindsToNode", H,
         alloc + ": the allocation's nodeSelector names the node "
                 "(DraBindingConditionsTest.ConditionSetTrueLaterLetsThePodBind)"},
        {dev + ".bindingConditions", H, binding},
        {dev + ".bindingFailureConditions", H, binding},
        {dev + ".nodeAllocatableResourceMappings", Audit::kGap,
         "node resources (cpu, memory, ...) a device's allocation takes from its node; Phalanx "
         "does not count them against the node"},
    };
    kinds.push_back({rs, "resource.k8s.io.v1.ResourceSlice.json",
                     DraFingerprint(Type(rs, "resourceslices")), rows, [](json& j) {
                       // One of nodeName / nodeSelector / allNodes / perDeviceNodeSelection
                       // (the slice's nodeSelector; the devices name no nodes); devices or
                       // sharedCounters (devices); one value per attribute.
                       j["spec"].erase("nodeName");
                       j["spec"].erase("allNodes");
                       j["spec"].erase("perDeviceNodeSelection");
                       j["spec"].erase("sharedCounters");
                       for (const char* f : {"nodeName", "nodeSelector", "allNodes"}) {
                         j["spec"]["devices"][0].erase(f);
                       }
                       json& policy =
                           j["spec"]["devices"][0]["capacity"]["capacityKey"]["requestPolicy"];
                       policy.erase("validValues");
                       policy["validRange"].erase("step");
                       j["spec"]["devices"][0]["attributes"] = {
                           {"attributesKey", {{"int", 2}}},
                           {"dra.example.com/bool", {{"bool", true}}},
                           {"dra.example.com/string", {{"string", "stringValue"}}},
                           {"dra.example.com/version", {{"version", "1.2.3"}}}};
                     }});
  }
  const GroupVersionKind dcl{"resource.k8s.io", "v1", "DeviceClass"};
  kinds.push_back(
      {dcl,
       "resource.k8s.io.v1.DeviceClass.json",
       DraFingerprint(Type(dcl, "deviceclasses")),
       {{"spec.selectors", H, alloc + ": the class's CEL selectors"},
        {"spec.config", Audit::kGap, config_gap + " (source FromClass)"},
        {"spec.extendedResourceName", H,
         "NodeResourcesFit and DynamicResources: a container's request of this extended "
         "resource is served by the class's devices on nodes without it in allocatable"}},
       [](json& j) { j["spec"]["extendedResourceName"] = "example.com/gpu"; }});
  const GroupVersionKind dtr{"resource.k8s.io", "v1alpha3", "DeviceTaintRule"};
  kinds.push_back(
      {dtr,
       "resource.k8s.io.v1alpha3.DeviceTaintRule.json",
       DraFingerprint(Type(dtr, "devicetaintrules")),
       {{"spec.deviceSelector", H, "dra::DefaultDRAManager: the devices the taint applies to"},
        {"spec.taint", H, "dra::DefaultDRAManager: added to the matching devices' taints"},
        {"status.conditions", X, "written by the device taint eviction controller"}}});
  return kinds;
}

TEST(ConformanceAudit, EveryFieldOfTheNewKindsIsHonouredNamedOrNotRead) {
  int audited = 0, elsewhere = 0;
  std::map<std::string, int> per_kind;
  std::vector<std::string> gaps;
  for (const auto& k : AuditKinds()) {
    const int before = audited;
    RunAudit(k, &audited, &elsewhere, &gaps);
    per_kind[k.gvk.String()] = audited - before;
  }
  for (const auto& [k, n] : per_kind) std::cout << "  " << n << " fields audited: " << k << "\n";
  std::cout << audited << " fields audited in " << per_kind.size() << " kinds (" << elsewhere
            << " honoured fields checked by the tests their rows name)\n";
  // Known gaps: read by kube-scheduler, dropped by Phalanx (each checked to be dropped, so
  // the list shrinks when a decoder learns one).
  std::cout << gaps.size() << " known gaps (read upstream, not by Phalanx):\n";
  for (const auto& g : gaps) std::cout << "  known gap: " << g << "\n";
}

TEST(ConformanceAudit, PathHelpers) {
  json j = json::parse(R"({"a": {"b": [{"c": 1, "d": 2}, {"c": 3}]}, "m": {"x": {"v": 1}}})");
  EXPECT_TRUE(HasPath(j, "a.b[].c"));
  EXPECT_FALSE(HasPath(j, "a.b[].e"));
  RemovePath(j, "a.b[].c");
  EXPECT_FALSE(HasPath(j, "a.b[].c"));
  EXPECT_TRUE(HasPath(j, "a.b[].d"));
  EXPECT_TRUE(HasPath(j, "m{}.v"));
  json d = json::parse(R"({"a": {"b": [{}, {}]}})");
  CopyPath(d, json::parse(R"({"a": {"b": [{"c": 1}, {"c": 3}]}})"), "a.b[].c");
  EXPECT_EQ(d["a"]["b"][1]["c"], 3);
  EXPECT_EQ(LastName("spec.devices.requests[].exactly.count"), "count");
}

}  // namespace
}  // namespace phalanx::conformance
