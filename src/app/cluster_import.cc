#include "app/cluster_import.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "api/decode.h"
#include "client/informer.h"
#include "client/objects.h"
#include "client/rest_config.h"
#include "sim/scenario.h"

namespace phalanx::app {
namespace {

// One listed object as a manifest, with what the ordering needs.
struct Doc {
  std::string yaml;
  bool bound = false;
  std::string created;  // metadata.creationTimestamp (RFC 3339 sorts as text)
  std::string key;
};

int Rank(client::Target t) {
  switch (t) {
    case client::Target::kNamespace:
      return 0;
    case client::Target::kPriorityClass:
      return 1;
    case client::Target::kNode:
      return 2;
    case client::Target::kPodDisruptionBudget:
      return 3;
    case client::Target::kObject:
      return 4;
    case client::Target::kPod:
      return 5;
    case client::Target::kTerminalPod:
      return 6;
  }
  return 6;
}

// The object as one manifest document: its JSON (quoted strings stay strings when the
// file is read back as YAML), kind and apiVersion filled in (list items lack them),
// metadata.managedFields dropped; pods get the arrival annotation.
std::string Manifest(const simdjson::dom::element& item, const client::ResourceType& t) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(simdjson::minify(item));
  nlohmann::ordered_json out;
  out["apiVersion"] =
      j.contains("apiVersion") ? j["apiVersion"] : nlohmann::ordered_json(t.ApiVersion());
  out["kind"] = j.contains("kind") ? j["kind"] : nlohmann::ordered_json(t.kind);
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "apiVersion" && it.key() != "kind") out[it.key()] = it.value();
  }
  if (out.contains("metadata") && out["metadata"].is_object()) {
    out["metadata"].erase("managedFields");
    if (t.target == client::Target::kPod) {
      out["metadata"]["annotations"][sim::kArrivalAnnotation] = "0";
    }
  }
  return out.dump(2);
}

// Lists one resource type (all pages) into *docs; errors go to out->skipped.
void ListType(client::RestClient& client, const client::ResourceType& t, std::vector<Doc>* docs,
              ClusterSnapshot* out) {
  std::string cont;
  size_t n = 0;
  simdjson::dom::parser parser;
  for (;;) {
    const std::string path = t.ListPath(500, cont);
    client::Response r = client.Do("GET", path);
    if (r.status == 410 && !cont.empty()) {  // continue token expired: start over
      docs->erase(docs->end() - static_cast<std::ptrdiff_t>(n), docs->end());
      n = 0;
      cont.clear();
      continue;
    }
    if (!r.ok()) {
      out->skipped.push_back(t.Name() + ": not listed: " + client.Describe("GET", path, r));
      return;
    }
    simdjson::dom::element doc;
    simdjson::dom::array items;
    if (parser.parse(r.body).get(doc) || doc["items"].get(items)) {
      out->skipped.push_back(t.Name() + ": not listed: malformed list response");
      return;
    }
    for (simdjson::dom::element item : items) {
      // The same decoder `phalanx run` and manifests use: what does not decode is named.
      api::StatusOr<client::Object> decoded = client::DecodeObjectElement(item, t);
      if (!decoded.ok()) {
        out->skipped.push_back(std::string(decoded.status().message()));
        continue;
      }
      Doc d;
      d.key = decoded->key;
      std::string_view s;
      if (!item["metadata"]["creationTimestamp"].get(s)) d.created = std::string(s);
      if (t.target == client::Target::kPod)
        d.bound = !item["spec"]["nodeName"].get(s) && !s.empty();
      d.yaml = Manifest(item, t);
      docs->push_back(std::move(d));
      ++n;
    }
    std::string_view c;
    cont = doc["metadata"]["continue"].get(c) ? std::string() : std::string(c);
    if (cont.empty()) break;
  }
  out->counts.push_back(t.Name() + ": " + std::to_string(n));
}

}  // namespace

api::Status SnapshotCluster(client::RestClient& client, ClusterSnapshot* out) {
  *out = ClusterSnapshot{};
  client::LiveInformerFactory factory(client);
  if (api::Status s = factory.Discover(); !s.ok()) return s;
  std::vector<client::ResourceType> types = factory.Types();
  std::stable_sort(types.begin(), types.end(),
                   [](const auto& a, const auto& b) { return Rank(a.target) < Rank(b.target); });
  for (const client::ResourceType& t : types) {
    if (t.target == client::Target::kTerminalPod) continue;  // ended pods hold no room
    std::vector<Doc> docs;
    ListType(client, t, &docs, out);
    if (t.target == client::Target::kPod) {
      std::stable_sort(docs.begin(), docs.end(), [](const Doc& a, const Doc& b) {
        if (a.bound != b.bound) return a.bound;
        if (a.created != b.created) return a.created < b.created;
        return a.key < b.key;
      });
    }
    for (const Doc& d : docs) {
      out->yaml += "---\n";
      out->yaml += d.yaml;
      out->yaml += "\n";
      ++out->objects;
    }
  }
  return absl::OkStatus();
}

api::Status SnapshotClusterFromKubeconfig(const std::string& kubeconfig, const std::string& context,
                                          ClusterSnapshot* out) {
  client::RestConfig cfg;
  cfg.qps = 50;
  cfg.burst = 100;
  cfg.user_agent = "phalanx-snapshot";
  if (api::Status s = client::ResolveRestConfig(kubeconfig, "", context, &cfg); !s.ok()) return s;
  client::RestClient client(std::move(cfg));
  return SnapshotCluster(client, out);
}

api::Status LoadClusterScenario(const std::string& kubeconfig, const std::string& context,
                                sim::Scenario* sc) {
  ClusterSnapshot snap;
  if (api::Status s = SnapshotClusterFromKubeconfig(kubeconfig, context, &snap); !s.ok()) {
    return s;
  }
  std::string counts;
  for (const auto& c : snap.counts) counts += (counts.empty() ? "" : ", ") + c;
  std::fprintf(stderr, "from cluster: %zu objects (%s)\n", snap.objects, counts.c_str());
  for (const auto& w : snap.skipped) std::fprintf(stderr, "from cluster: skipped %s\n", w.c_str());
  api::Manifests m;
  if (api::Status s = api::DecodeManifests(snap.yaml, "cluster", &m); !s.ok()) return s;
  return sim::ScenarioFromManifests(std::move(m), "cluster", sc);
}

}  // namespace phalanx::app
