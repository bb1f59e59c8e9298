#include "volume/objects.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "api/labels.h"
#include "api/quantity.h"
#include "api/volume_source.h"

namespace phalanx::volume {

namespace {

bool Present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

// n[key], or an undefined node (never yaml-cpp's invalid "zombie" node, whose type
// queries throw) when n is not a map or has no such key.
YAML::Node At(const YAML::Node& n, const char* key) {
  if (!n.IsDefined() || !n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node v = n[key];
  return v.IsDefined() ? v : YAML::Node(YAML::NodeType::Undefined);
}

// Reads fields of one object, keeping the first error as "<field path>: <cause>".
class Reader {
 public:
  bool ok() const { return err_.empty(); }
  const std::string& error() const { return err_; }
  void Fail(const std::string& path, const std::string& cause) {
    if (err_.empty()) err_ = path + ": " + cause;
  }

  // A string field; absent leaves *out unchanged. False when present and not a scalar.
  bool Str(const YAML::Node& n, const std::string& path, std::string* out) {
    if (!Present(n)) return false;
    if (!n.IsScalar()) {
      Fail(path, "Invalid value: must be a string");
      return false;
    }
    *out = n.Scalar();
    return true;
  }
  bool Bool(const YAML::Node& n, const std::string& path, bool* out) {
    std::string s;
    if (!Str(n, path, &s)) return false;
    if (s == "true") {
      *out = true;
    } else if (s == "false") {
      *out = false;
    } else {
      Fail(path, "Invalid value: \"" + s + "\": must be true or false");
      return false;
    }
    return true;
  }
  std::vector<std::string> StrList(const YAML::Node& n, const std::string& path) {
    std::vector<std::string> out;
    if (!Present(n)) return out;
    if (!n.IsSequence()) {
      Fail(path, "Invalid value: must be a list of strings");
      return out;
    }
    for (size_t i = 0; i < n.size(); ++i) {
      std::string s;
      if (Str(n[i], path + "[" + std::to_string(i) + "]", &s)) out.push_back(s);
    }
    return out;
  }
  // A storage quantity in bytes: must parse and be >= 0 (> 0 when `positive`).
  std::optional<int64_t> Bytes(const YAML::Node& n, const std::string& path, bool positive) {
    std::string s;
    if (!Str(n, path, &s)) return std::nullopt;
    auto q = api::Quantity::Parse(s);
    if (!q.ok()) {
      Fail(path, "Invalid value: \"" + s + "\": " + std::string(q.status().message()));
      return std::nullopt;
    }
    if (q->IsNegative() || (positive && q->IsZero())) {
      Fail(path, "Invalid value: \"" + s + "\": must be greater than " +
                     (positive ? "zero" : "or equal to 0"));
      return std::nullopt;
    }
    return q->Value();
  }
  void AccessModes(const YAML::Node& n, const std::string& path, std::vector<std::string>* out) {
    static const std::set<std::string> kModes = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
                                                 "ReadWriteOncePod"};
    *out = StrList(n, path);
    for (size_t i = 0; i < out->size(); ++i) {
      if (!kModes.count((*out)[i])) {
        Fail(path + "[" + std::to_string(i) + "]",
             "Unsupported value: \"" + (*out)[i] +
                 "\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", "
                 "\"ReadWriteOncePod\"");
      }
    }
  }
  void VolumeMode(const YAML::Node& n, const std::string& path, std::string* out) {
    if (Str(n, path, out) && *out != "Filesystem" && *out != "Block") {
      Fail(path,
           "Unsupported value: \"" + *out + "\": supported values: \"Block\", \"Filesystem\"");
    }
  }
  std::vector<api::NodeSelectorRequirement> Requirements(const YAML::Node& n,
                                                         const std::string& path) {
    std::vector<api::NodeSelectorRequirement> out;
    if (!Present(n)) return out;
    if (!n.IsSequence()) {
      Fail(path, "Invalid value: must be a list");
      return out;
    }
    for (size_t i = 0; i < n.size(); ++i) {
      const std::string p = path + "[" + std::to_string(i) + "]";
      api::NodeSelectorRequirement r;
      if (!n[i].IsMap()) {
        Fail(p, "Invalid value: must be an object");
        continue;
      }
      if (!Str(At(n[i], "key"), p + ".key", &r.key)) Fail(p + ".key", "Required value");
      if (!Str(At(n[i], "operator"), p + ".operator", &r.op))
        Fail(p + ".operator", "Required value");
      r.values = StrList(At(n[i], "values"), p + ".values");
      out.push_back(std::move(r));
    }
    return out;
  }
  // v1.NodeSelector with its terms validated as the API server does.
  std::optional<api::NodeSelector> NodeSelector(const YAML::Node& n, const std::string& path) {
    if (!n.IsMap()) {
      Fail(path, "Invalid value: must be an object");
      return std::nullopt;
    }
    const YAML::Node terms = At(n, "nodeSelectorTerms");
    const std::string tp = path + ".nodeSelectorTerms";
    if (!Present(terms) || !terms.IsSequence() || terms.size() == 0) {
      Fail(tp, "Required value: must have at least one node selector term");
      return std::nullopt;
    }
    api::NodeSelector sel;
    for (size_t i = 0; i < terms.size(); ++i) {
      const std::string p = tp + "[" + std::to_string(i) + "]";
      api::NodeSelectorTerm t;
      t.match_expressions = Requirements(At(terms[i], "matchExpressions"), p + ".matchExpressions");
      t.match_fields = Requirements(At(terms[i], "matchFields"), p + ".matchFields");
      if (!ok()) return std::nullopt;
      if (api::Status s = api::ValidateNodeSelectorTerm(t); !s.ok()) {
        Fail(p, std::string(s.message()));
        return std::nullopt;
      }
      sel.node_selector_terms.push_back(std::move(t));
    }
    return sel;
  }
  std::optional<api::LabelSelector> LabelSelector(const YAML::Node& n, const std::string& path) {
    if (!Present(n)) return std::nullopt;
    if (!n.IsMap()) {
      Fail(path, "Invalid value: must be an object");
      return std::nullopt;
    }
    api::LabelSelector sel;
    const YAML::Node ml = At(n, "matchLabels");
    if (Present(ml)) {
      if (!ml.IsMap()) {
        Fail(path + ".matchLabels", "Invalid value: must be a map of strings");
        return std::nullopt;
      }
      for (const auto& kv : ml) {
        std::string v;
        const std::string k = kv.first.Scalar();
        if (Str(kv.second, path + ".matchLabels." + k, &v)) sel.match_labels[k] = v;
      }
    }
    for (const auto& r : Requirements(At(n, "matchExpressions"), path + ".matchExpressions")) {
      sel.match_expressions.push_back({r.key, r.op, r.values});
    }
    if (!ok()) return std::nullopt;
    if (api::Status s = api::ValidateLabelSelector(sel); !s.ok()) {
      Fail(path, std::string(s.message()));
      return std::nullopt;
    }
    return sel;
  }

 private:
  std::string err_;
};

std::string Label(const char* kind, const std::string& ns, const std::string& name) {
  return std::string(kind) + " \"" + (ns.empty() ? name : ns + "/" + name) + "\": ";
}

const YAML::Node& Doc(const api::Unstructured& obj) {
  static const YAML::Node kEmpty;
  return obj.object ? *obj.object : kEmpty;
}

}  // namespace

Kind KindOf(const api::Unstructured& obj) {
  const std::string group = obj.Group();
  if (group.empty()) {
    if (obj.kind == "PersistentVolume") return Kind::kPV;
    if (obj.kind == "PersistentVolumeClaim") return Kind::kPVC;
    return Kind::kNone;
  }
  if (group != "storage.k8s.io") return Kind::kNone;
  if (obj.kind == "StorageClass") return Kind::kStorageClass;
  if (obj.kind == "CSINode") return Kind::kCSINode;
  if (obj.kind == "CSIDriver") return Kind::kCSIDriver;
  if (obj.kind == "CSIStorageCapacity") return Kind::kCSIStorageCapacity;
  return Kind::kNone;
}

PersistentVolume DecodePersistentVolume(const api::UnstructuredPtr& obj) {
  PersistentVolume pv;
  pv.object = obj;
  pv.name = obj->metadata.name;
  pv.labels = obj->metadata.labels;
  pv.deleting = obj->metadata.deletion_timestamp.has_value();
  Reader r;
  const YAML::Node spec = At(Doc(*obj), "spec");
  r.Str(At(spec, "storageClassName"), "spec.storageClassName", &pv.storage_class);
  const YAML::Node storage = At(At(spec, "capacity"), "storage");
  if (!Present(storage)) r.Fail("spec.capacity[storage]", "Required value");
  if (auto b = r.Bytes(storage, "spec.capacity[storage]", /*positive=*/true)) pv.capacity = *b;
  r.AccessModes(At(spec, "accessModes"), "spec.accessModes", &pv.access_modes);
  r.VolumeMode(At(spec, "volumeMode"), "spec.volumeMode", &pv.volume_mode);
  r.Str(At(spec, "volumeAttributesClassName"), "spec.volumeAttributesClassName",
        &pv.volume_attributes_class);
  const YAML::Node na = At(spec, "nodeAffinity");
  if (Present(na)) {
    const YAML::Node req = At(na, "required");
    if (!Present(req)) {
      r.Fail("spec.nodeAffinity.required",
             "Required value: must specify required node constraints");
    } else {
      pv.node_affinity = r.NodeSelector(req, "spec.nodeAffinity.required");
    }
  }
  const YAML::Node cr = At(spec, "claimRef");
  if (Present(cr)) {
    ClaimRef ref;
    r.Str(At(cr, "namespace"), "spec.claimRef.namespace", &ref.namespace_);
    r.Str(At(cr, "name"), "spec.claimRef.name", &ref.name);
    r.Str(At(cr, "uid"), "spec.claimRef.uid", &ref.uid);
    if (ref.name.empty()) r.Fail("spec.claimRef.name", "Required value");
    if (ref.namespace_.empty()) ref.namespace_ = "default";
    pv.claim_ref = ref;
  }
  if (api::Status s = api::DecodeVolumeSource(spec, "spec", /*persistent=*/true, &pv.source);
      !s.ok()) {
    const std::string err(s.message());
    r.Fail(err.substr(0, err.find(": ")), err.substr(err.find(": ") + 2));
  }
  if (pv.source.type == api::VolumeSource::Type::kCSI) pv.csi_driver = pv.source.driver;
  r.Str(At(At(Doc(*obj), "status"), "phase"), "status.phase", &pv.phase);
  if (!r.ok()) pv.error = Label("PersistentVolume", "", pv.name) + r.error();
  return pv;
}

PersistentVolumeClaim DecodePersistentVolumeClaim(const api::UnstructuredPtr& obj) {
  PersistentVolumeClaim c;
  c.object = obj;
  c.namespace_ = obj->metadata.namespace_.empty() ? "default" : obj->metadata.namespace_;
  c.name = obj->metadata.name;
  c.uid = obj->metadata.uid;
  c.annotations = obj->metadata.annotations;
  c.owner_references = obj->metadata.owner_references;
  c.deleting = obj->metadata.deletion_timestamp.has_value();
  Reader r;
  const YAML::Node spec = At(Doc(*obj), "spec");
  std::string cls;
  if (r.Str(At(spec, "storageClassName"), "spec.storageClassName", &cls)) c.storage_class = cls;
  r.Str(At(spec, "volumeName"), "spec.volumeName", &c.volume_name);
  r.AccessModes(At(spec, "accessModes"), "spec.accessModes", &c.access_modes);
  r.VolumeMode(At(spec, "volumeMode"), "spec.volumeMode", &c.volume_mode);
  r.Str(At(spec, "volumeAttributesClassName"), "spec.volumeAttributesClassName",
        &c.volume_attributes_class);
  const YAML::Node storage = At(At(At(spec, "resources"), "requests"), "storage");
  if (!Present(storage)) r.Fail("spec.resources.requests[storage]", "Required value");
  if (auto b = r.Bytes(storage, "spec.resources.requests[storage]", /*positive=*/true)) {
    c.request = *b;
  }
  c.selector = r.LabelSelector(At(spec, "selector"), "spec.selector");
  r.Str(At(At(Doc(*obj), "status"), "phase"), "status.phase", &c.phase);
  if (!r.ok()) c.error = Label("PersistentVolumeClaim", c.namespace_, c.name) + r.error();
  return c;
}

StorageClass DecodeStorageClass(const api::Unstructured& obj) {
  StorageClass sc;
  sc.name = obj.metadata.name;
  auto d = obj.metadata.annotations.find(kAnnDefaultClass);
  sc.is_default = d != obj.metadata.annotations.end() && d->second == "true";
  Reader r;
  const YAML::Node& doc = Doc(obj);
  if (!r.Str(At(doc, "provisioner"), "provisioner", &sc.provisioner)) {
    r.Fail("provisioner", "Required value");
  }
  if (r.Str(At(doc, "volumeBindingMode"), "volumeBindingMode", &sc.volume_binding_mode) &&
      sc.volume_binding_mode != "Immediate" && sc.volume_binding_mode != "WaitForFirstConsumer") {
    r.Fail("volumeBindingMode",
           "Unsupported value: \"" + sc.volume_binding_mode +
               "\": supported values: \"Immediate\", \"WaitForFirstConsumer\"");
  }
  const YAML::Node at = At(doc, "allowedTopologies");
  if (Present(at)) {
    if (!at.IsSequence()) r.Fail("allowedTopologies", "Invalid value: must be a list");
    for (size_t i = 0; r.ok() && i < at.size(); ++i) {
      const std::string p = "allowedTopologies[" + std::to_string(i) + "].matchLabelExpressions";
      const YAML::Node exprs = At(at[i], "matchLabelExpressions");
      api::NodeSelectorTerm term;
      if (!Present(exprs) || !exprs.IsSequence() || exprs.size() == 0) {
        r.Fail(p, "Required value: must have at least one label match expression");
        break;
      }
      for (size_t j = 0; j < exprs.size(); ++j) {
        const std::string ep = p + "[" + std::to_string(j) + "]";
        api::NodeSelectorRequirement req;
        req.op = "In";
        if (!r.Str(At(exprs[j], "key"), ep + ".key", &req.key))
          r.Fail(ep + ".key", "Required value");
        req.values = r.StrList(At(exprs[j], "values"), ep + ".values");
        if (r.ok() && req.values.empty()) {
          r.Fail(ep + ".values", "Required value: must specify as least one value");
        }
        term.match_expressions.push_back(std::move(req));
      }
      sc.allowed_topologies.push_back(std::move(term));
    }
  }
  if (!r.ok()) sc.error = Label("StorageClass", "", sc.name) + r.error();
  return sc;
}

CSINode DecodeCSINode(const api::Unstructured& obj) {
  CSINode n;
  n.name = obj.metadata.name;
  Reader r;
  const YAML::Node drivers = At(At(Doc(obj), "spec"), "drivers");
  if (Present(drivers) && !drivers.IsSequence())
    r.Fail("spec.drivers", "Invalid value: must be a list");
  for (size_t i = 0; r.ok() && Present(drivers) && i < drivers.size(); ++i) {
    const std::string p = "spec.drivers[" + std::to_string(i) + "]";
    CSINodeDriver d;
    if (!r.Str(At(drivers[i], "name"), p + ".name", &d.name)) r.Fail(p + ".name", "Required value");
    d.topology_keys = r.StrList(At(drivers[i], "topologyKeys"), p + ".topologyKeys");
    const YAML::Node count = At(At(drivers[i], "allocatable"), "count");
    std::string s;
    if (r.Str(count, p + ".allocatable.count", &s)) {
      char* end = nullptr;
      const long v = std::strtol(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0' || v < 0 || v > INT32_MAX) {
        r.Fail(p + ".allocatable.count",
               "Invalid value: \"" + s + "\": must be greater than or equal to 0");
      } else {
        d.allocatable_count = static_cast<int32_t>(v);
      }
    }
    n.drivers.push_back(std::move(d));
  }
  if (!r.ok()) n.error = Label("CSINode", "", n.name) + r.error();
  return n;
}

CSIDriver DecodeCSIDriver(const api::Unstructured& obj) {
  CSIDriver d;
  d.name = obj.metadata.name;
  Reader r;
  const YAML::Node spec = At(Doc(obj), "spec");
  r.Bool(At(spec, "storageCapacity"), "spec.storageCapacity", &d.storage_capacity);
  r.Bool(At(spec, "attachRequired"), "spec.attachRequired", &d.attach_required);
  if (!r.ok()) d.error = Label("CSIDriver", "", d.name) + r.error();
  return d;
}

CSIStorageCapacity DecodeCSIStorageCapacity(const api::Unstructured& obj) {
  CSIStorageCapacity c;
  c.namespace_ = obj.metadata.namespace_.empty() ? "default" : obj.metadata.namespace_;
  c.name = obj.metadata.name;
  Reader r;
  const YAML::Node& doc = Doc(obj);
  if (!r.Str(At(doc, "storageClassName"), "storageClassName", &c.storage_class)) {
    r.Fail("storageClassName", "Required value");
  }
  c.node_topology = r.LabelSelector(At(doc, "nodeTopology"), "nodeTopology");
  c.capacity = r.Bytes(At(doc, "capacity"), "capacity", /*positive=*/false);
  c.maximum_volume_size = r.Bytes(At(doc, "maximumVolumeSize"), "maximumVolumeSize", false);
  if (!r.ok()) c.error = Label("CSIStorageCapacity", c.namespace_, c.name) + r.error();
  return c;
}

bool HasAccessModes(const std::vector<std::string>& have, const std::vector<std::string>& want) {
  for (const auto& m : want) {
    if (std::find(have.begin(), have.end(), m) == have.end()) return false;
  }
  return true;
}

bool NodeAffinityAdmits(const PersistentVolume& pv, const api::Node& node) {
  if (!pv.node_affinity) return true;
  return api::NodeSelectorMatches(*pv.node_affinity, node.metadata.labels, node.metadata.name);
}

}  // namespace phalanx::volume

namespace phalanx::volume {

namespace {

std::shared_ptr<YAML::Node> CloneTree(const api::Unstructured& obj) {
  return std::make_shared<YAML::Node>(obj.object ? YAML::Clone(*obj.object)
                                                 : YAML::Node(YAML::NodeType::Map));
}

}  // namespace

api::Unstructured WithAnnotation(const api::Unstructured& obj, const std::string& key,
                                 const std::string& value) {
  api::Unstructured out = obj;
  out.metadata.annotations[key] = value;
  auto tree = CloneTree(obj);
  (*tree)["metadata"]["annotations"][key] = value;
  out.object = std::move(tree);
  return out;
}

api::Unstructured WithClaimRef(const api::Unstructured& pv, const PersistentVolumeClaim& claim) {
  api::Unstructured out = WithAnnotation(pv, "pv.kubernetes.io/bound-by-controller", "yes");
  auto tree = CloneTree(out);
  YAML::Node ref;
  ref["apiVersion"] = "v1";
  ref["kind"] = "PersistentVolumeClaim";
  ref["namespace"] = claim.namespace_;
  ref["name"] = claim.name;
  ref["uid"] = claim.uid;
  (*tree)["spec"]["claimRef"] = ref;
  out.object = std::move(tree);
  return out;
}

api::Unstructured WithField(const api::Unstructured& obj, const std::vector<std::string>& path,
                            const std::string& value) {
  api::Unstructured out = obj;
  auto tree = CloneTree(obj);
  YAML::Node cur = *tree;  // refers to the tree's root
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (!cur[path[i]].IsMap()) cur[path[i]] = YAML::Node(YAML::NodeType::Map);
    YAML::Node next = cur[path[i]];
    cur.reset(next);  // (assignment would copy the child's content into the parent)
  }
  cur[path.back()] = value;
  out.object = std::move(tree);
  return out;
}

}  // namespace phalanx::volume
