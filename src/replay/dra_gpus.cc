#include "replay/dra_gpus.h"

#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "dra/model.h"
#include "gpu/device.h"

namespace phalanx::replay {

namespace {

constexpr const char* kExtendedGpu = "nvidia.com/gpu";

api::Unstructured Object(const std::string& kind, const std::string& ns, const std::string& name,
                         YAML::Node doc) {
  api::Unstructured u;
  u.api_version = "resource.k8s.io/v1";
  u.kind = kind;
  u.metadata.name = name;
  u.metadata.namespace_ = ns;
  u.metadata.uid = "dra-gpus-" + kind + "-" + ns + "-" + name;
  doc["apiVersion"] = u.api_version;
  doc["kind"] = kind;
  doc["metadata"]["name"] = name;
  if (!ns.empty()) doc["metadata"]["namespace"] = ns;
  u.object = std::make_shared<const YAML::Node>(doc);
  return u;
}

api::Unstructured DeviceClassObject() {
  YAML::Node doc;
  YAML::Node sel;
  sel["cel"]["expression"] = std::string("device.driver == '") + kDraGpuDriver + "'";
  doc["spec"]["selectors"].push_back(sel);
  return Object("DeviceClass", "", kDraGpuClass, doc);
}

api::Unstructured SliceObject(const api::Node& node, int64_t gpus) {
  const gpu::NodeGpus info = gpu::ParseNodeGpus(node);
  YAML::Node doc;
  YAML::Node spec;
  spec["driver"] = kDraGpuDriver;
  spec["nodeName"] = node.metadata.name;
  spec["pool"]["name"] = node.metadata.name;
  spec["pool"]["generation"] = 1;
  spec["pool"]["resourceSliceCount"] = 1;
  const int64_t mem_mib = info.memory_mib ? info.memory_mib : gpu::ModelMemoryMiB(info.model);
  for (int64_t g = 0; g < gpus; ++g) {
    YAML::Node d;
    d["name"] = "gpu-" + std::to_string(g);
    d["attributes"]["index"]["int"] = g;
    if (!info.model.empty()) d["attributes"]["productName"]["string"] = info.model;
    if (mem_mib > 0) d["capacity"]["memory"]["value"] = std::to_string(mem_mib) + "Mi";
    spec["devices"].push_back(d);
  }
  doc["spec"] = spec;
  return Object("ResourceSlice", "", node.metadata.name + "-gpus", doc);
}

api::Unstructured TemplateObject(const std::string& ns, int32_t count) {
  YAML::Node doc;
  YAML::Node req;
  req["name"] = "gpu";
  req["exactly"]["deviceClassName"] = kDraGpuClass;
  req["exactly"]["count"] = count;
  doc["spec"]["spec"]["devices"]["requests"].push_back(req);
  return Object("ResourceClaimTemplate", ns, "gpu-" + std::to_string(count), doc);
}

// The node's GPUs as a slice; false when it has none.
api::StatusOr<bool> ConvertNode(api::Node* node, DraGpuStats* st,
                                std::vector<api::Unstructured>* out) {
  auto& cap = node->status.capacity;
  auto& alloc = node->status.allocatable;
  const api::ResourceList* from = alloc.count(kExtendedGpu) ? &alloc : &cap;
  auto it = from->find(kExtendedGpu);
  if (it == from->end()) return false;
  const int64_t milli = it->second.MilliValue();
  if (milli % 1000 != 0 || milli < 0) {
    return absl::InvalidArgumentError("Node " + node->metadata.name + ": status.capacity[" +
                                      kExtendedGpu + "]: Invalid value: \"" +
                                      std::to_string(milli) + "m\": must be a whole number");
  }
  const int64_t gpus = milli / 1000;
  cap.erase(kExtendedGpu);
  alloc.erase(kExtendedGpu);
  if (gpus == 0) return false;
  node->metadata.labels[gpu::kGpuCountAnnotation] = std::to_string(gpus);
  out->push_back(SliceObject(*node, gpus));
  ++st->nodes;
  st->devices += static_cast<size_t>(gpus);
  return true;
}

// The pod's GPU ask as a claim from template gpu-<N>; 0 when it has none.
api::StatusOr<int32_t> ConvertPod(api::Pod* pod, DraGpuStats* st) {
  const gpu::GpuAsk ask = gpu::ParseGpuAsk(*pod);
  if (!ask.has_gpu()) return 0;
  if (ask.count > dra::kAllocationResultsMaxSize) {
    return absl::InvalidArgumentError("Pod " + pod->Key() + ": asks for " +
                                      std::to_string(ask.count) + " GPUs, more than a claim's " +
                                      std::to_string(dra::kAllocationResultsMaxSize) + " devices");
  }
  for (auto* cs : {&pod->spec.containers, &pod->spec.init_containers}) {
    for (auto& c : *cs) {
      c.resources.requests.erase(kExtendedGpu);
      c.resources.limits.erase(kExtendedGpu);
    }
  }
  if (!ask.is_whole()) {  // a share (or shares of several devices): whole devices
    pod->metadata.annotations[gpu::kGpuMilliAnnotation] = "1000";
    pod->metadata.annotations[gpu::kGpuCountAnnotation] = std::to_string(ask.count);
    ++st->shares_as_whole;
  }
  pod->spec.resource_claims.push_back(
      api::PodResourceClaim{"gpu", "", "gpu-" + std::to_string(ask.count)});
  if (!pod->spec.containers.empty()) pod->spec.containers[0].resource_claims.push_back("gpu");
  ++st->pods;
  return ask.count;
}

}  // namespace

api::Status ToDraGpus(sim::Scenario* sc, DraGpuStats* stats) {
  DraGpuStats st;
  std::vector<api::Unstructured> objects;
  objects.push_back(DeviceClassObject());
  for (auto& n : sc->nodes) {
    if (auto r = ConvertNode(&n, &st, &objects); !r.ok()) return r.status();
  }
  for (auto& tn : sc->later_nodes) {
    if (auto r = ConvertNode(&tn.node, &st, &objects); !r.ok()) return r.status();
  }
  std::set<std::pair<std::string, int32_t>> templates;
  for (auto& tp : sc->pods) {
    auto r = ConvertPod(&tp.pod, &st);
    if (!r.ok()) return r.status();
    if (*r > 0) templates.emplace(tp.pod.metadata.namespace_, *r);
  }
  for (const auto& [ns, count] : templates) objects.push_back(TemplateObject(ns, count));
  // DRA objects first: the simulator creates sc->objects before any pod.
  objects.insert(objects.end(), std::make_move_iterator(sc->objects.begin()),
                 std::make_move_iterator(sc->objects.end()));
  sc->objects = std::move(objects);
  if (stats) *stats = st;
  return absl::OkStatus();
}

}  // namespace phalanx::replay
