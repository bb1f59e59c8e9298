#include "replay/openb.h"

#include <algorithm>
#include <sstream>

#include "api/resource.h"
#include "replay/csv.h"

namespace phalanx::replay {

using sim::TimedPod;

namespace {

api::Quantity Qty(int64_t value) { return api::Quantity::FromValue(value); }

// The pod of one line of the pod list (namespace default, one container "main").
api::Status OpenbPod(const CsvRow& row, const OpenbOptions& opts, api::Pod* out) {
  int64_t cpu = 0, mem = 0, num_gpu = 0, gpu_milli = 0;
  for (auto [col, v] : {std::pair{"cpu_milli", &cpu},
                        {"memory_mib", &mem},
                        {"num_gpu", &num_gpu},
                        {"gpu_milli", &gpu_milli}}) {
    if (auto s = row.Int(col, v, false); !s.ok()) return s;
  }
  api::Pod& p = *out;
  p.metadata.name = row.Get("name");
  p.metadata.namespace_ = "default";
  if (row.csv.col.count("qos")) p.metadata.labels["alibabacloud.com/qos"] = row.Get("qos");
  api::Container c;
  c.name = "main";
  c.resources.requests["cpu"] = api::Quantity::FromMilli(cpu);
  c.resources.requests["memory"] = Qty(mem * 1024 * 1024);
  int64_t gpus = num_gpu;
  if (gpus == 0 && gpu_milli > 0) gpus = 1;
  const bool share = gpus == 1 && gpu_milli > 0 && gpu_milli < 1000;
  if (gpus > 0 && !(share && opts.gpu_sharing)) {
    c.resources.requests[std::string(api::kResourceNvidiaGPU)] = Qty(gpus);
  }
  if (gpu_milli > 0)
    p.metadata.annotations["alibabacloud.com/gpu-milli"] = std::to_string(gpu_milli);
  if (gpus > 0) p.metadata.annotations["alibabacloud.com/gpu-count"] = std::to_string(gpus);
  p.spec.containers.push_back(std::move(c));
  if (row.csv.col.count("gpu_spec") && !row.Get("gpu_spec").empty()) {
    std::vector<std::string> models;
    std::stringstream ss(row.Get("gpu_spec"));
    std::string m;
    while (std::getline(ss, m, '|')) {
      if (!m.empty()) models.push_back(m);
    }
    api::NodeSelector sel;
    sel.node_selector_terms.push_back({{{kGpuModelLabel, "In", models}}, {}});
    p.spec.affinity.emplace();
    p.spec.affinity->node_affinity.emplace();
    p.spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution = sel;
    p.metadata.annotations["alibabacloud.com/gpu-card-model"] = row.Get("gpu_spec");
  }
  return absl::OkStatus();
}

}  // namespace

api::Status LoadOpenbNodes(const std::string& path, std::vector<api::Node>* out) {
  Csv csv;
  if (auto s = ReadCsv(path, {"sn", "cpu_milli", "memory_mib", "gpu", "model"}, &csv); !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    const CsvRow row{csv, i, path};
    int64_t cpu = 0, mem = 0, gpu = 0;
    for (auto [col, v] : {std::pair{"cpu_milli", &cpu}, {"memory_mib", &mem}, {"gpu", &gpu}}) {
      if (auto s = row.Int(col, v, false); !s.ok()) return s;
    }
    api::Node n;
    n.metadata.name = row.Get("sn");
    if (n.metadata.name.empty())
      return absl::InvalidArgumentError(row.Where("sn") + "empty node name");
    n.metadata.labels["kubernetes.io/hostname"] = n.metadata.name;
    const std::string& model = row.Get("model");
    if (!model.empty()) n.metadata.labels[kGpuModelLabel] = model;
    n.status.capacity["cpu"] = api::Quantity::FromMilli(cpu);
    n.status.capacity["memory"] = Qty(mem * 1024 * 1024);
    n.status.capacity["pods"] = Qty(110);
    if (gpu > 0) n.status.capacity[std::string(api::kResourceNvidiaGPU)] = Qty(gpu);
    n.status.allocatable = n.status.capacity;
    n.status.conditions.push_back({"Ready", "True"});
    out->push_back(std::move(n));
  }
  return absl::OkStatus();
}

api::Status LoadOpenbPods(const std::string& path, const OpenbOptions& opts,
                          std::vector<TimedPod>* out) {
  Csv csv;
  if (auto s = ReadCsv(path, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}, &csv);
      !s.ok()) {
    return s;
  }
  const bool has_times = csv.col.count("creation_time") && csv.col.count("deletion_time");
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    if (opts.max_pods && out->size() >= opts.max_pods) break;
    const CsvRow row{csv, i, path};
    TimedPod tp;
    if (auto s = OpenbPod(row, opts, &tp.pod); !s.ok()) return s;
    if (opts.timed && has_times) {
      int64_t created = 0, deleted = 0;
      if (auto s = row.Int("creation_time", &created, false); !s.ok()) return s;
      if (auto s = row.Int("deletion_time", &deleted, true); !s.ok()) return s;
      tp.arrival = created * api::kNanosPerSecond;
      if (deleted >= 0) {
        if (deleted < created) {
          return absl::InvalidArgumentError(row.Where("deletion_time") +
                                            "deletion before creation");
        }
        tp.deletion = deleted * api::kNanosPerSecond;
      }
    }
    out->push_back(std::move(tp));
  }
  std::stable_sort(out->begin(), out->end(),
                   [](const TimedPod& a, const TimedPod& b) { return a.arrival < b.arrival; });
  return absl::OkStatus();
}

}  // namespace phalanx::replay
