// Fuzz target: decoding of live API objects (client/objects.h: simdjson envelope, object
// re-serialization, api::DecodeManifests), as the reflectors do on LIST pages and WATCH
// lines from the API server.
//
// Input: first byte selects the resource type (pods, nodes, namespaces, priorityclasses,
// podgroups.scheduling.x-k8s.io) and the entry point (object, LIST page, WATCH line); the
// rest is the JSON text. A rejection must say which resource it was decoding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "client/objects.h"

namespace {

using phalanx::client::ResourceType;
using phalanx::client::Target;

const ResourceType kTypes[] = {
    {"", "v1", "pods", "Pod", Target::kPod, ""},
    {"", "v1", "nodes", "Node", Target::kNode, ""},
    {"", "v1", "namespaces", "Namespace", Target::kNamespace, ""},
    {"scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", Target::kPriorityClass, ""},
    {"scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", Target::kObject, ""},
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const ResourceType& rt = kTypes[(data[0] & 0x0f) % 5];
  const int mode = (data[0] >> 4) % 3;
  const std::string_view json(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string err;
  bool ok = false;
  switch (mode) {
    case 0: {
      phalanx::client::Object o;
      ok = phalanx::api::MoveOrMessage(phalanx::client::DecodeObjectJson(json, rt), &o, &err);
      if (ok && !o.ptr) std::abort();
      break;
    }
    case 1: {
      phalanx::client::ListPage page;
      ok = phalanx::api::OkOrMessage(phalanx::client::DecodeList(json, rt, &page), &err);
      for (const auto& o : page.items) {
        if (!o.ptr) std::abort();
      }
      for (const auto& s : page.skipped) {
        if (s.empty()) std::abort();
      }
      break;
    }
    default: {
      phalanx::client::WatchEvent ev;
      ok = phalanx::api::OkOrMessage(phalanx::client::DecodeWatchEvent(json, rt, &ev), &err);
      break;
    }
  }
  if (!ok && err.find(rt.Name()) == std::string::npos && err.find(rt.kind) == std::string::npos) {
    std::abort();
  }
  return 0;
}
