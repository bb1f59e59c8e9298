#include "plugins/dynamicresources/extended_resources.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace phalanx::plugins::dynamicresources {

namespace {

// A request made for one container, or none.
struct Made {
  bool present = false;
  dra::DeviceRequest request;
  int64_t Count() const { return request.exactly ? request.exactly->count : 0; }
};

// upstream createResourceRequestAndMappings for container `index`: reuses `reusable`
// (requests of later long-lived containers) first, then asks for the rest.
Made ContainerRequest(size_t index, const api::Container& c, const std::string& resource,
                      const std::string& device_class, const std::vector<Made>& reusable,
                      std::vector<api::ContainerExtendedResourceRequest>* mappings) {
  Made out;
  auto it = c.resources.requests.find(resource);
  if (it == c.resources.requests.end()) return out;
  int64_t want = 0;
  if (!it->second.AsInt64(&want) || want == 0) return out;
  int64_t sum = 0;
  for (const Made& r : reusable) {
    if (!r.present) continue;
    sum += r.Count();
    mappings->push_back({c.name, resource, r.request.name});
    if (sum >= want) return out;
  }
  // The resource's position among the container's requests, sorted by name (a
  // ResourceList is a sorted map).
  size_t ridx = 0;
  for (const auto& [name, q] : c.resources.requests) {
    if (name == resource) break;
    ++ridx;
  }
  const std::string name =
      "container-" + std::to_string(index) + "-request-" + std::to_string(ridx);
  out.present = true;
  out.request.name = name;
  dra::RequestSpec spec;
  spec.name = name;
  spec.device_class_name = device_class;
  spec.count = want - sum;
  out.request.exactly = std::move(spec);
  mappings->push_back({c.name, resource, name});
  return out;
}

}  // namespace

void ExtendedResourceRequests(const api::Pod& pod,
                              const std::vector<ExtendedResourceClass>& resources,
                              std::vector<dra::DeviceRequest>* requests,
                              std::vector<api::ContainerExtendedResourceRequest>* mappings) {
  requests->clear();
  mappings->clear();
  std::vector<const api::Container*> containers;
  for (const auto& c : pod.spec.init_containers) containers.push_back(&c);
  for (const auto& c : pod.spec.containers) containers.push_back(&c);
  const size_t num_init = pod.spec.init_containers.size();
  std::vector<size_t> long_lived, short_lived;
  for (size_t i = 0; i < containers.size(); ++i) {
    const bool sidecar = containers[i]->restart_policy == "Always";
    (i < num_init && !sidecar ? short_lived : long_lived).push_back(i);
  }
  std::vector<ExtendedResourceClass> sorted = resources;
  std::sort(sorted.begin(), sorted.end(),
            [](const ExtendedResourceClass& a, const ExtendedResourceClass& b) {
              return a.resource < b.resource;
            });
  for (const auto& [resource, device_class] : sorted) {
    std::vector<api::ContainerExtendedResourceRequest> long_maps, short_maps;
    std::vector<Made> long_reqs(containers.size());
    for (size_t i : long_lived) {
      long_reqs[i] = ContainerRequest(i, *containers[i], resource, device_class, {}, &long_maps);
    }
    const Made* max_short = nullptr;
    std::vector<Made> short_reqs(containers.size());
    std::set<std::string> short_names;
    for (size_t i : short_lived) {
      const std::vector<Made> reusable(long_reqs.begin() + static_cast<std::ptrdiff_t>(i),
                                       long_reqs.end());
      short_reqs[i] =
          ContainerRequest(i, *containers[i], resource, device_class, reusable, &short_maps);
      if (!short_reqs[i].present) continue;
      short_names.insert(short_reqs[i].request.name);
      if (!max_short || max_short->Count() < short_reqs[i].Count()) max_short = &short_reqs[i];
    }
    if (max_short && short_names.size() > 1) {
      short_names.erase(max_short->request.name);
      for (auto& m : short_maps) {
        if (short_names.count(m.request_name)) m.request_name = max_short->request.name;
      }
    }
    if (max_short) requests->push_back(max_short->request);
    for (const Made& r : long_reqs) {
      if (r.present) requests->push_back(r.request);
    }
    mappings->insert(mappings->end(), long_maps.begin(), long_maps.end());
    mappings->insert(mappings->end(), short_maps.begin(), short_maps.end());
  }
  std::sort(
      requests->begin(), requests->end(),
      [](const dra::DeviceRequest& a, const dra::DeviceRequest& b) { return a.name < b.name; });
}

api::Unstructured ExtendedResourceClaimObject(const api::Pod& pod,
                                              const std::vector<dra::DeviceRequest>& requests) {
  api::Unstructured obj;
  obj.api_version = "resource.k8s.io/v1";
  obj.kind = "ResourceClaim";
  obj.metadata.namespace_ = pod.metadata.namespace_;
  obj.metadata.generate_name = pod.metadata.name + "-extended-resources-";
  obj.metadata.annotations[dra::kExtendedResourceClaimAnnotation] = "true";
  obj.metadata.owner_references.push_back(
      api::OwnerReference{"v1", "Pod", pod.metadata.name, pod.metadata.uid, true});
  // Strings are tagged "!" so that the JSON written for the API server keeps them strings
  // (client/objects.h YamlToJson), e.g. the annotation's "true".
  auto str = [](const std::string& v) {
    YAML::Node n(v);
    n.SetTag("!");
    return n;
  };
  YAML::Node doc;
  doc["apiVersion"] = str(obj.api_version);
  doc["kind"] = str(obj.kind);
  doc["metadata"]["namespace"] = str(obj.metadata.namespace_);
  doc["metadata"]["generateName"] = str(obj.metadata.generate_name);
  doc["metadata"]["annotations"][dra::kExtendedResourceClaimAnnotation] = str("true");
  YAML::Node owner;
  owner["apiVersion"] = str("v1");
  owner["kind"] = str("Pod");
  owner["name"] = str(pod.metadata.name);
  owner["uid"] = str(pod.metadata.uid);
  owner["controller"] = true;
  doc["metadata"]["ownerReferences"].push_back(owner);
  YAML::Node reqs(YAML::NodeType::Sequence);
  for (const auto& r : requests) {
    YAML::Node n;
    n["name"] = str(r.name);
    n["exactly"]["deviceClassName"] = str(r.exactly->device_class_name);
    n["exactly"]["allocationMode"] = str("ExactCount");
    n["exactly"]["count"] = r.exactly->count;
    reqs.push_back(n);
  }
  doc["spec"]["devices"]["requests"] = reqs;
  obj.object = std::make_shared<const YAML::Node>(doc);
  return obj;
}

}  // namespace phalanx::plugins::dynamicresources
