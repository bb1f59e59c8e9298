#include "replay/dra_gpus.h"

#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
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
  sel["cel"]["expression"] = std::string("device.driver == '") + gpu::kDraGpuDriver + "'";
  doc["spec"]["selectors"].push_back(sel);
  return Object("DeviceClass", "", kDraGpuClass, doc);
}

api::Unstructured SliceObject(const api::Node& node, int64_t gpus) {
  const gpu::NodeGpus info = gpu::ParseNodeGpus(node);
  YAML::Node doc;
  YAML::Node spec;
  spec["driver"] = gpu::kDraGpuDriver;
  spec["nodeName"] = node.metadata.name;
  spec["pool"]["name"] = node.metadata.name;
  spec["pool"]["generation"] = 1;
  spec["pool"]["resourceSliceCount"] = 1;
  const int64_t mem_mib = info.memory_mib ? info.memory_mib : gpu::ModelMemoryMiB(info.model);
  for (int64_t g = 0; g < gpus; ++g) {
    YAML::Node d;
    d["name"] = gpu::DraGpuDeviceName(static_cast<int32_t>(g));
    d["attributes"]["index"]["int"] = g;
    if (!info.model.empty()) d["attributes"]["productName"]["string"] = info.model;
    if (mem_mib > 0) d["attributes"]["memoryMiB"]["int"] = mem_mib;
    d["allowMultipleAllocations"] = true;
    d["capacity"][gpu::kDraGpuCompute]["value"] = std::to_string(gpu::kMilliPerGpu);
    spec["devices"].push_back(d);
  }
  doc["spec"] = spec;
  return Object("ResourceSlice", "", node.metadata.name + "-gpus", doc);
}

// A claim template's name: "gpu-<count>" for whole devices, "gpu-<count>-<milli>m" for shares.
std::string TemplateName(int32_t count, int32_t milli) {
  std::string name = "gpu-" + std::to_string(count);
  if (milli < gpu::kMilliPerGpu) name += "-" + std::to_string(milli) + "m";
  return name;
}

api::Unstructured TemplateObject(const std::string& ns, int32_t count, int32_t milli) {
  YAML::Node doc;
  YAML::Node req;
  req["name"] = "gpu";
  req["exactly"]["deviceClassName"] = kDraGpuClass;
  req["exactly"]["count"] = count;
  if (milli < gpu::kMilliPerGpu) {
    req["exactly"]["capacity"]["requests"][gpu::kDraGpuCompute] = std::to_string(milli);
  }
  doc["spec"]["spec"]["devices"]["requests"].push_back(req);
  return Object("ResourceClaimTemplate", ns, TemplateName(count, milli), doc);
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

// The pod's GPU ask as a claim from a template (count, milli per device); nullopt when it
// has none.
api::StatusOr<std::optional<std::pair<int32_t, int32_t>>> ConvertPod(api::Pod* pod,
                                                                     DraGpuStats* st) {
  const gpu::GpuAsk ask = gpu::ParseGpuAsk(*pod);
  if (!ask.has_gpu()) return std::optional<std::pair<int32_t, int32_t>>();
  if (ask.count > dra::kAllocationResultsMaxSize) {
    return absl::InvalidArgumentError("Pod " + pod->Key() + ": asks for " +
                                      std::to_string(ask.count) + " GPUs, more than a claim's " +
                                      std::to_string(dra::kAllocationResultsMaxSize) + " devices");
  }
  if (ask.milli <= 0 || ask.milli > gpu::kMilliPerGpu) {
    // KAI memory asks and aliyun.com/gpu-mem depend on the node's model; openb has neither.
    return absl::InvalidArgumentError("Pod " + pod->Key() +
                                      ": a GPU ask by device memory cannot be a claim template "
                                      "(--gpu-model dra maps milli-GPU asks only)");
  }
  for (auto* cs : {&pod->spec.containers, &pod->spec.init_containers}) {
    for (auto& c : *cs) {
      c.resources.requests.erase(kExtendedGpu);
      c.resources.limits.erase(kExtendedGpu);
    }
  }
  if (!ask.is_whole()) ++st->shares;
  pod->spec.resource_claims.push_back(
      api::PodResourceClaim{"gpu", "", TemplateName(ask.count, ask.milli)});
  if (!pod->spec.containers.empty()) pod->spec.containers[0].resource_claims.push_back("gpu");
  ++st->pods;
  return std::optional<std::pair<int32_t, int32_t>>(std::make_pair(ask.count, ask.milli));
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
  std::set<std::tuple<std::string, int32_t, int32_t>> templates;
  for (auto& tp : sc->pods) {
    auto r = ConvertPod(&tp.pod, &st);
    if (!r.ok()) return r.status();
    if (*r) templates.emplace(tp.pod.metadata.namespace_, (*r)->first, (*r)->second);
  }
  for (const auto& [ns, count, milli] : templates) {
    objects.push_back(TemplateObject(ns, count, milli));
  }
  // DRA objects first: the simulator creates sc->objects before any pod.
  objects.insert(objects.end(), std::make_move_iterator(sc->objects.begin()),
                 std::make_move_iterator(sc->objects.end()));
  sc->objects = std::move(objects);
  if (stats) *stats = st;
  return absl::OkStatus();
}

}  // namespace phalanx::replay
