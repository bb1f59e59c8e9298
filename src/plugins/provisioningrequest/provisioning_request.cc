#include "plugins/provisioningrequest/provisioning_request.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <utility>

#include "plugins/helper/args.h"

namespace phalanx::plugins::provisioningrequest {

using framework::Status;

namespace {

std::string QuantityText(const api::Quantity& q) {
  int64_t whole = 0;
  if (q.AsInt64(&whole)) return std::to_string(whole);
  return std::to_string(q.MilliValue()) + "m";
}

YAML::Node ResourceListNode(const api::ResourceList& list) {
  YAML::Node n(YAML::NodeType::Map);
  for (const auto& [name, q] : list) n[name] = QuantityText(q);
  return n;
}

YAML::Node ContainersNode(const std::vector<api::Container>& cs) {
  YAML::Node out(YAML::NodeType::Sequence);
  for (const auto& c : cs) {
    YAML::Node n;
    n["name"] = c.name;
    n["image"] = c.image.empty() ? std::string("placeholder") : c.image;
    if (!c.resources.requests.empty())
      n["resources"]["requests"] = ResourceListNode(c.resources.requests);
    if (!c.resources.limits.empty())
      n["resources"]["limits"] = ResourceListNode(c.resources.limits);
    if (!c.restart_policy.empty()) n["restartPolicy"] = c.restart_policy;
    out.push_back(n);
  }
  return out;
}

YAML::Node RequirementsNode(const std::vector<api::NodeSelectorRequirement>& reqs) {
  YAML::Node out(YAML::NodeType::Sequence);
  for (const auto& r : reqs) {
    YAML::Node n;
    n["key"] = r.key;
    n["operator"] = r.op;
    if (!r.values.empty()) {
      YAML::Node vs(YAML::NodeType::Sequence);
      for (const auto& v : r.values) vs.push_back(v);
      n["values"] = vs;
    }
    out.push_back(n);
  }
  return out;
}

// n[key] when n is a map, else an undefined node (yaml-cpp throws on a key of a missing key).
YAML::Node Child(const YAML::Node& n, const char* key) {
  if (!n || !n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node c = n[key];
  return c ? c : YAML::Node(YAML::NodeType::Undefined);
}

// The condition of `type` in status.conditions; an undefined node when there is none (a
// default-constructed YAML::Node is a defined null node, true in a test).
YAML::Node Condition(const YAML::Node& conditions, const std::string& type) {
  if (!conditions || !conditions.IsSequence()) return YAML::Node(YAML::NodeType::Undefined);
  for (const auto& c : conditions) {
    if (c.IsMap() && c["type"] && c["type"].IsScalar() && c["type"].Scalar() == type) return c;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string Field(const YAML::Node& c, const char* name) {
  return c && c[name] && c[name].IsScalar() ? c[name].Scalar() : std::string();
}

std::string Describe(const YAML::Node& c) {
  std::string s = Field(c, "type") + "=" + Field(c, "status");
  if (!Field(c, "reason").empty()) s += " (" + Field(c, "reason") + ")";
  if (!Field(c, "message").empty()) s += ": " + Field(c, "message");
  return s;
}

std::string NameOf(const std::string& key) {
  const auto slash = key.find('/');
  return slash == std::string::npos ? key : key.substr(slash + 1);
}

std::string NamespaceOf(const std::string& key) {
  const auto slash = key.find('/');
  return slash == std::string::npos ? std::string() : key.substr(0, slash);
}

api::Unstructured Ref(std::string api_version, std::string kind, const std::string& ns,
                      const std::string& name) {
  api::Unstructured u;
  u.api_version = std::move(api_version);
  u.kind = std::move(kind);
  u.metadata.namespace_ = ns;
  u.metadata.name = name;
  return u;
}

}  // namespace

RequestState ReadRequestState(const api::Unstructured& request) {
  RequestState st;
  if (!request.object) return st;
  const YAML::Node conditions = Child(Child(*request.object, "status"), "conditions");
  for (const char* ended : {"Failed", "BookingExpired", "CapacityRevoked"}) {
    const YAML::Node c = Condition(conditions, ended);
    if (Field(c, "status") == "True") {
      st.phase = RequestState::kEnded;
      st.condition = Describe(c);
      return st;
    }
  }
  if (const YAML::Node c = Condition(conditions, "Provisioned"); c) {
    st.phase =
        Field(c, "status") == "True" ? RequestState::kProvisioned : RequestState::kNotProvisioned;
    st.condition = Describe(c);
    return st;
  }
  if (const YAML::Node c = Condition(conditions, "Accepted"); Field(c, "status") == "True") {
    st.phase = RequestState::kAccepted;
    st.condition = Describe(c);
  }
  return st;
}

api::Unstructured PodTemplateFor(const api::Pod& pod, const std::string& name,
                                 std::vector<std::string>* not_carried) {
  const api::PodSpec& spec = pod.spec;
  YAML::Node doc;
  doc["apiVersion"] = "v1";
  doc["kind"] = "PodTemplate";
  doc["metadata"]["name"] = name;
  doc["metadata"]["namespace"] = pod.metadata.namespace_;
  YAML::Node tmpl;
  if (!pod.metadata.labels.empty()) {
    for (const auto& [k, v] : pod.metadata.labels) tmpl["metadata"]["labels"][k] = v;
  }
  YAML::Node s;
  if (!spec.scheduler_name.empty()) s["schedulerName"] = spec.scheduler_name;
  if (!spec.priority_class_name.empty()) s["priorityClassName"] = spec.priority_class_name;
  if (spec.priority) s["priority"] = *spec.priority;
  for (const auto& [k, v] : spec.node_selector) s["nodeSelector"][k] = v;
  if (spec.affinity && spec.affinity->node_affinity &&
      spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution) {
    YAML::Node terms(YAML::NodeType::Sequence);
    for (const auto& t :
         spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution
             ->node_selector_terms) {
      YAML::Node term(YAML::NodeType::Map);
      if (!t.match_expressions.empty())
        term["matchExpressions"] = RequirementsNode(t.match_expressions);
      if (!t.match_fields.empty()) term["matchFields"] = RequirementsNode(t.match_fields);
      terms.push_back(term);
    }
    s["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
     ["nodeSelectorTerms"] = terms;
  }
  if (!spec.tolerations.empty()) {
    YAML::Node ts(YAML::NodeType::Sequence);
    for (const auto& t : spec.tolerations) {
      YAML::Node n;
      if (!t.key.empty()) n["key"] = t.key;
      n["operator"] = t.op.empty() ? std::string("Equal") : t.op;
      if (!t.value.empty()) n["value"] = t.value;
      if (!t.effect.empty()) n["effect"] = t.effect;
      if (t.toleration_seconds) n["tolerationSeconds"] = *t.toleration_seconds;
      ts.push_back(n);
    }
    s["tolerations"] = ts;
  }
  if (!spec.init_containers.empty()) s["initContainers"] = ContainersNode(spec.init_containers);
  s["containers"] = ContainersNode(spec.containers);
  if (!spec.overhead.empty()) s["overhead"] = ResourceListNode(spec.overhead);
  tmpl["spec"] = s;
  doc["template"] = tmpl;
  if (not_carried) {
    not_carried->clear();
    if (spec.affinity && spec.affinity->pod_affinity) not_carried->push_back("podAffinity");
    if (spec.affinity && spec.affinity->pod_anti_affinity)
      not_carried->push_back("podAntiAffinity");
    if (!spec.topology_spread_constraints.empty())
      not_carried->push_back("topologySpreadConstraints");
    if (!spec.volumes.empty()) not_carried->push_back("volumes");
    if (!spec.resource_claims.empty()) not_carried->push_back("resourceClaims");
  }
  api::Unstructured u = Ref("v1", "PodTemplate", pod.metadata.namespace_, name);
  u.object = std::make_shared<const YAML::Node>(doc);
  return u;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> ProvisioningRequest::New(
    framework::PluginArgs args, framework::Handle& h) {
  Args a;
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, "ProvisioningRequestArgs",
                            {"provisioningClassName", "maxActiveRequests", "maxRequestsPerGang",
                             "retryBackoffSeconds", "minMembers"},
                            &errs, &has_content)) {
    return helper::ArgsError(errs, "ProvisioningRequestArgs");
  }
  if (has_content) {
    try {
      for (const auto& kv : *args) {
        const std::string key = kv.first.as<std::string>();
        int64_t v = 0;
        Status st;
        if (key == "provisioningClassName") {
          a.class_name = kv.second.as<std::string>();
          if (a.class_name.empty() || a.class_name.size() > 253) {
            st = Status::Error("ProvisioningRequestArgs: provisioningClassName: Invalid value: \"" +
                               a.class_name + "\": must be 1 to 253 characters");
          }
        } else if (key == "maxActiveRequests") {
          st = helper::ReadIntAtLeast("ProvisioningRequestArgs", kv.second, key, 1, &v);
          a.max_active_requests = static_cast<int32_t>(std::min<int64_t>(v, 1 << 20));
        } else if (key == "maxRequestsPerGang") {
          st = helper::ReadIntAtLeast("ProvisioningRequestArgs", kv.second, key, 1, &v);
          a.max_requests_per_gang = static_cast<int32_t>(std::min<int64_t>(v, 1 << 20));
        } else if (key == "retryBackoffSeconds") {
          st = helper::ReadIntAtLeast("ProvisioningRequestArgs", kv.second, key, 0, &v);
          a.retry_backoff_ns = std::min<int64_t>(v, int64_t{1} << 32) * api::kNanosPerSecond;
        } else if (key == "minMembers") {
          st = helper::ReadIntAtLeast("ProvisioningRequestArgs", kv.second, key, 1, &v);
          a.min_members = static_cast<int32_t>(std::min<int64_t>(v, 1 << 20));
        }
        if (!st.IsSuccess()) return st;
      }
    } catch (const YAML::Exception& e) {
      return Status::Error(std::string("ProvisioningRequestArgs: ") + e.what());
    }
  }
  return std::unique_ptr<framework::Plugin>(new ProvisioningRequest(h, std::move(a)));
}

ProvisioningRequest::ProvisioningRequest(framework::Handle& h, Args args)
    : handle_(h),
      args_(std::move(args)),
      events_(h.Service<gang::PodGroupEventRecorder>()),
      activator_(h.Service<framework::PodActivator>()) {
  if (auto* src = h.Service<framework::ObjectEventSource>()) {
    src->Watch("autoscaling.x-k8s.io", "ProvisioningRequest",
               [this](const api::Unstructured*, const api::Unstructured& obj, bool deleted) {
                 OnRequest(obj, deleted);
               });
    // The PodTemplates this plugin writes concern no other part of the scheduler.
    src->Watch("", "PodTemplate", [](const api::Unstructured*, const api::Unstructured&, bool) {});
  }
}

void ProvisioningRequest::OnRequest(const api::Unstructured& obj, bool deleted) {
  std::vector<std::string> wake;
  {
    absl::MutexLock l(&mu_);
    auto it = request_gang_.find(obj.metadata.namespace_ + "/" + obj.metadata.name);
    if (it == request_gang_.end()) return;
    Gang& g = gangs_[it->second];
    RequestState st = ReadRequestState(obj);
    if (deleted && st.phase != RequestState::kEnded) {
      st.phase = RequestState::kEnded;
      st.condition = "deleted by another client";
    }
    if (st.phase == g.state.phase && st.condition == g.state.condition) return;
    if (st.phase == RequestState::kNotProvisioned) g.last_failure = st.condition;
    g.state = std::move(st);
    wake = g.members;
  }
  // The members try again now: onto the new nodes, or to report the new state.
  if (activator_) activator_->Activate(wake);
}

int32_t ProvisioningRequest::ActiveLocked() const {
  int32_t n = 0;
  for (const auto& [key, g] : gangs_) n += g.request.empty() ? 0 : 1;
  return n;
}

std::string ProvisioningRequest::DeleteObjects(const std::string& request,
                                               const std::vector<std::string>& templates) {
  std::string errors;
  auto del = [&](const api::Unstructured& u) {
    api::Status s = handle_.Client().DeleteObject(u);
    if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
      errors += (errors.empty() ? "" : "; ") + std::string(s.message());
    }
  };
  const std::string ns = NamespaceOf(request);
  del(Ref(std::string(kApiVersion), "ProvisioningRequest", ns, NameOf(request)));
  for (const auto& t : templates) del(Ref("v1", "PodTemplate", ns, t));
  return errors;
}

std::string ProvisioningRequest::Create(const std::string& gang_key, Gang& g,
                                        const framework::PodGroupAttempt& attempt) {
  const std::string ns = NamespaceOf(gang_key);
  const std::string request = NameOf(gang_key) + "-phalanx-" + std::to_string(g.created + 1);
  // One podSet per distinct member shape (their templates' text), in member order.
  std::vector<std::pair<std::string, int32_t>> shapes;  // template text, count
  std::vector<api::Unstructured> templates;
  std::set<std::string> not_carried;
  for (const auto& p : attempt.pods) {
    std::vector<std::string> missing;
    api::Unstructured t = PodTemplateFor(p->Pod(), "", &missing);
    not_carried.insert(missing.begin(), missing.end());
    YAML::Emitter e;
    e << (*t.object)["template"];
    const std::string text = e.c_str();
    auto it =
        std::find_if(shapes.begin(), shapes.end(), [&](const auto& s) { return s.first == text; });
    if (it != shapes.end()) {
      ++it->second;
      continue;
    }
    if (shapes.size() == 32) {
      return "scale-up: no ProvisioningRequest: the members have more than 32 distinct pod "
             "templates (spec.podSets: maxItems 32)";
    }
    shapes.emplace_back(text, 1);
    templates.push_back(PodTemplateFor(
        p->Pod(), "ppt-" + request + "-" + std::to_string(shapes.size() - 1), nullptr));
  }
  std::vector<std::string> created;
  auto undo = [&] {
    for (const auto& n : created)
      (void)handle_.Client().DeleteObject(Ref("v1", "PodTemplate", ns, n));
  };
  for (const auto& t : templates) {
    auto r = handle_.Client().PostObject(t);
    if (!r.ok()) {
      undo();
      g.retry_at = handle_.GetClock().Now() + args_.retry_backoff_ns;
      return "scale-up: cannot create PodTemplate " + ns + "/" + t.metadata.name + ": " +
             std::string(r.status().message());
    }
    created.push_back(t.metadata.name);
  }
  YAML::Node doc;
  doc["apiVersion"] = std::string(kApiVersion);
  doc["kind"] = "ProvisioningRequest";
  doc["metadata"]["name"] = request;
  doc["metadata"]["namespace"] = ns;
  doc["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "phalanx";
  doc["metadata"]["annotations"]["scheduling.phalanx.dev/pod-group"] = gang_key;
  doc["spec"]["provisioningClassName"] = args_.class_name;
  YAML::Node sets(YAML::NodeType::Sequence);
  for (size_t i = 0; i < shapes.size(); ++i) {
    YAML::Node set;
    set["count"] = shapes[i].second;
    set["podTemplateRef"]["name"] = created[i];
    sets.push_back(set);
  }
  doc["spec"]["podSets"] = sets;
  api::Unstructured req = Ref(std::string(kApiVersion), "ProvisioningRequest", ns, request);
  req.object = std::make_shared<const YAML::Node>(doc);
  // Known before the create, so that an answer delivered during it finds the gang.
  const std::string key = ns + "/" + request;
  {
    absl::MutexLock l(&mu_);
    request_gang_[key] = gang_key;
  }
  auto r = handle_.Client().PostObject(req);
  if (!r.ok()) {
    {
      absl::MutexLock l(&mu_);
      request_gang_.erase(key);
    }
    undo();
    g.retry_at = handle_.GetClock().Now() + args_.retry_backoff_ns;
    std::string why(r.status().message());
    if (r.status().code() == absl::StatusCode::kNotFound) {
      why =
          "the API server does not serve autoscaling.x-k8s.io/v1 provisioningrequests (is "
          "cluster-autoscaler's CRD installed?): " +
          why;
    }
    return "scale-up: cannot create ProvisioningRequest " + key + ": " + why;
  }
  {
    absl::MutexLock l(&mu_);
    ++g.created;
    g.request = key;
    g.templates = created;
    g.members.clear();
    for (const auto& p : attempt.pods) g.members.push_back(p->Pod().Key());
  }
  const std::map<std::string, std::string> ann = {
      {std::string(kConsumeAnnotation), request},
      {std::string(kClassAnnotation), args_.class_name}};
  for (const auto& p : attempt.pods) (void)handle_.Client().PatchPodAnnotations(p->Pod(), ann);
  std::string msg = "scale-up: ProvisioningRequest " + key + " created for " +
                    std::to_string(attempt.pods.size()) + " pods (" + args_.class_name + ")";
  if (!not_carried.empty()) {
    std::string fields;
    for (const auto& f : not_carried) fields += (fields.empty() ? "" : ", ") + f;
    msg += "; its pod templates leave out " + fields;
  }
  if (events_) events_->RecordPodGroupEvent(gang_key, true, "ProvisioningRequestCreated", msg);
  return msg;
}

Status ProvisioningRequest::PodGroupPostFilter(framework::CycleState&,
                                               const framework::QueuedPodGroupInfo& group,
                                               const framework::PodGroupAttempt& attempt,
                                               framework::PodGroupFeasibility&,
                                               framework::PodGroupPostFilterResult*) {
  if (!attempt.placement_failed || group.empty() || attempt.pods.empty()) {
    return Status(framework::Code::kSkip);
  }
  if (static_cast<int32_t>(attempt.pods.size()) < args_.min_members) {
    return Status(framework::Code::kSkip);
  }
  const std::string& gang_key = group.pod_groups[0].key;
  const api::Timestamp now = handle_.GetClock().Now();
  // Client calls run without mu_: the store delivers the events of our own writes on this
  // thread, to OnRequest. Only this (the scheduling) thread adds, ends or erases requests.
  std::string ended_request;
  std::vector<std::string> ended_templates;
  Gang* gp = nullptr;
  {
    absl::MutexLock l(&mu_);
    Gang& g = gangs_[gang_key];
    gp = &g;
    if (!g.request.empty()) {
      switch (g.state.phase) {
        case RequestState::kPending:
          return Status::Unschedulable("scale-up: ProvisioningRequest " + g.request +
                                       ": waiting for the autoscaler to accept it");
        case RequestState::kNotProvisioned:
          return Status::Unschedulable("scale-up: ProvisioningRequest " + g.request + ": " +
                                       g.state.condition);
        case RequestState::kAccepted:
        case RequestState::kProvisioned:
          return Status::Unschedulable(
              "scale-up: ProvisioningRequest " + g.request + ": " + g.state.condition +
              (g.state.phase == RequestState::kProvisioned ? "; waiting for the new nodes" : "") +
              (g.last_failure.empty() ? "" : " (before: " + g.last_failure + ")"));
        case RequestState::kEnded:
          g.last_end = "ProvisioningRequest " + g.request + " ended: " + g.state.condition +
                       (g.last_failure.empty() ? "" : " (before: " + g.last_failure + ")");
          ended_request = g.request;
          ended_templates = g.templates;
          request_gang_.erase(g.request);
          g.request.clear();
          g.templates.clear();
          g.state = RequestState();
          g.last_failure.clear();
          g.retry_at = now + args_.retry_backoff_ns;
          break;
      }
    }
  }
  Gang& g = *gp;
  if (!ended_request.empty()) {
    const std::string errors = DeleteObjects(ended_request, ended_templates);
    if (events_) {
      events_->RecordPodGroupEvent(gang_key, false, "ProvisioningRequestEnded",
                                   g.last_end + (errors.empty() ? "" : "; " + errors));
    }
  }
  const std::string last = g.last_end.empty() ? "" : " (" + g.last_end + ")";
  if (g.created >= args_.max_requests_per_gang) {
    return Status::Unschedulable("scale-up: no more ProvisioningRequests for this gang: " +
                                 std::to_string(g.created) + " made (maxRequestsPerGang)" + last);
  }
  if (now < g.retry_at) {
    return Status::Unschedulable(
        "scale-up: next ProvisioningRequest not before " +
        std::to_string((g.retry_at - now + api::kNanosPerSecond - 1) / api::kNanosPerSecond) +
        "s (retryBackoffSeconds)" + last);
  }
  int32_t active = 0;
  {
    absl::MutexLock l(&mu_);
    active = ActiveLocked();
  }
  if (active >= args_.max_active_requests) {
    return Status::Unschedulable("scale-up: " + std::to_string(active) +
                                 " ProvisioningRequests in flight (maxActiveRequests)" + last);
  }
  return Status::Unschedulable(Create(gang_key, g, attempt) + last);
}

void ProvisioningRequest::PodGroupCycleDone(const framework::QueuedPodGroupInfo& group,
                                            bool committed, const std::string&) {
  if (!committed || group.empty()) return;
  for (const auto& pg : group.pod_groups) {
    std::string request;
    std::vector<std::string> templates;
    {
      absl::MutexLock l(&mu_);
      auto it = gangs_.find(pg.key);
      if (it == gangs_.end()) continue;
      request = it->second.request;
      templates = it->second.templates;
      request_gang_.erase(request);
      gangs_.erase(it);
    }
    if (!request.empty()) (void)DeleteObjects(request, templates);
  }
}

}  // namespace phalanx::plugins::provisioningrequest
