#include "sim/scenario.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "api/decode.h"
#include "api/resource.h"

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

bool ParseInt(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

api::Quantity Qty(int64_t value) { return api::Quantity::FromValue(value); }

struct Csv {
  std::map<std::string, size_t> col;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> line_no;
};

bool ReadCsv(const std::string& path, const std::vector<std::string>& required, Csv* csv,
             std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot read file";
    return false;
  }
  std::string line;
  if (!std::getline(in, line)) {
    *error = path + ": empty file";
    return false;
  }
  auto header = SplitCsv(line);
  for (size_t i = 0; i < header.size(); ++i) csv->col[header[i]] = i;
  for (const auto& r : required) {
    if (!csv->col.count(r)) {
      *error = path + ":1: missing column \"" + r + "\"";
      return false;
    }
  }
  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line == "\r") continue;
    auto f = SplitCsv(line);
    if (f.size() != header.size()) {
      *error = path + ":" + std::to_string(n) + ": expected " + std::to_string(header.size()) +
               " columns, got " + std::to_string(f.size());
      return false;
    }
    csv->rows.push_back(std::move(f));
    csv->line_no.push_back(n);
  }
  return true;
}

}  // namespace

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}


bool LoadManifestScenario(const std::string& path, Scenario* out, std::string* error) {
  api::Manifests m;
  std::string err;
  if (!api::OkOrMessage(api::LoadManifests(path, &m), &err)) {
    *error = err;
    return false;
  }
  out->name = path;
  out->nodes = std::move(m.nodes);
  out->namespaces = std::move(m.namespaces);
  out->priority_classes = std::move(m.priority_classes);
  out->objects = std::move(m.objects);
  std::vector<api::Pod> pods = std::move(m.pods);
  for (const auto& c : m.controllers) {
    auto expanded = api::ExpandController(c);
    for (auto& p : expanded) {
      // Controller-level simulation annotations apply to every pod.
      for (const char* k : {kArrivalAnnotation, kDurationAnnotation}) {
        auto it = c.metadata.annotations.find(k);
        if (it != c.metadata.annotations.end() && !p.metadata.annotations.count(k)) {
          p.metadata.annotations[k] = it->second;
        }
      }
      pods.push_back(std::move(p));
    }
  }
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
        *error = path + ": Pod " + p.Key() + ": metadata.annotations[" + kArrivalAnnotation +
                 "]: Invalid value: \"" + a->second + "\": must be a non-negative number of seconds";
        return false;
      }
    } else if (p.metadata.creation_timestamp != 0) {
      tp.arrival = p.metadata.creation_timestamp - earliest;
    }
    auto d = p.metadata.annotations.find(kDurationAnnotation);
    if (d != p.metadata.annotations.end()) {
      int64_t ns = 0;
      if (!ParseSeconds(d->second, &ns)) {
        *error = path + ": Pod " + p.Key() + ": metadata.annotations[" + kDurationAnnotation +
                 "]: Invalid value: \"" + d->second + "\": must be a non-negative number of seconds";
        return false;
      }
      tp.run_duration_ns = ns;
    }
    p.metadata.creation_timestamp = 0;  // the store stamps the virtual arrival time
    tp.pod = std::move(p);
    out->pods.push_back(std::move(tp));
  }
  std::stable_sort(out->pods.begin(), out->pods.end(),
                   [](const TimedPod& a, const TimedPod& b) { return a.arrival < b.arrival; });
  return true;
}

bool LoadOpenbNodes(const std::string& path, std::vector<api::Node>* out, std::string* error) {
  Csv csv;
  if (!ReadCsv(path, {"sn", "cpu_milli", "memory_mib", "gpu", "model"}, &csv, error)) return false;
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    const auto& r = csv.rows[i];
    auto where = [&](const char* c) {
      return path + ":" + std::to_string(csv.line_no[i]) + ": column " + c + ": ";
    };
    int64_t cpu = 0, mem = 0, gpu = 0;
    if (!ParseInt(r[csv.col["cpu_milli"]], &cpu) || cpu < 0) {
      *error = where("cpu_milli") + "invalid value \"" + r[csv.col["cpu_milli"]] + "\"";
      return false;
    }
    if (!ParseInt(r[csv.col["memory_mib"]], &mem) || mem < 0) {
      *error = where("memory_mib") + "invalid value \"" + r[csv.col["memory_mib"]] + "\"";
      return false;
    }
    if (!ParseInt(r[csv.col["gpu"]], &gpu) || gpu < 0) {
      *error = where("gpu") + "invalid value \"" + r[csv.col["gpu"]] + "\"";
      return false;
    }
    api::Node n;
    n.metadata.name = r[csv.col["sn"]];
    if (n.metadata.name.empty()) {
      *error = where("sn") + "empty node name";
      return false;
    }
    n.metadata.labels["kubernetes.io/hostname"] = n.metadata.name;
    const std::string& model = r[csv.col["model"]];
    if (!model.empty()) n.metadata.labels[kGpuModelLabel] = model;
    n.status.capacity["cpu"] = api::Quantity::FromMilli(cpu);
    n.status.capacity["memory"] = Qty(mem * 1024 * 1024);
    n.status.capacity["pods"] = Qty(110);
    if (gpu > 0) n.status.capacity[std::string(api::kResourceNvidiaGPU)] = Qty(gpu);
    n.status.allocatable = n.status.capacity;
    n.status.conditions.push_back({"Ready", "True"});
    out->push_back(std::move(n));
  }
  return true;
}

bool LoadOpenbPods(const std::string& path, const OpenbOptions& opts, std::vector<TimedPod>* out,
                   std::string* error) {
  Csv csv;
  if (!ReadCsv(path, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}, &csv, error)) {
    return false;
  }
  const bool has_times = csv.col.count("creation_time") && csv.col.count("deletion_time");
  const bool has_spec = csv.col.count("gpu_spec") > 0;
  const bool has_qos = csv.col.count("qos") > 0;
  for (size_t i = 0; i < csv.rows.size(); ++i) {
    if (opts.max_pods && out->size() >= opts.max_pods) break;
    const auto& r = csv.rows[i];
    auto where = [&](const std::string& c) {
      return path + ":" + std::to_string(csv.line_no[i]) + ": column " + c + ": ";
    };
    auto get = [&](const char* c, int64_t* v, bool allow_empty) -> bool {
      const std::string& s = r[csv.col[c]];
      if (s.empty() && allow_empty) {
        *v = -1;
        return true;
      }
      if (!ParseInt(s, v) || *v < 0) {
        *error = where(c) + "invalid value \"" + s + "\"";
        return false;
      }
      return true;
    };
    int64_t cpu, mem, num_gpu, gpu_milli;
    if (!get("cpu_milli", &cpu, false) || !get("memory_mib", &mem, false) ||
        !get("num_gpu", &num_gpu, false) || !get("gpu_milli", &gpu_milli, false)) {
      return false;
    }
    TimedPod tp;
    api::Pod& p = tp.pod;
    p.metadata.name = r[csv.col["name"]];
    p.metadata.namespace_ = "default";
    if (has_qos) p.metadata.labels["alibabacloud.com/qos"] = r[csv.col["qos"]];
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
    if (gpu_milli > 0) p.metadata.annotations["alibabacloud.com/gpu-milli"] = std::to_string(gpu_milli);
    if (gpus > 0) p.metadata.annotations["alibabacloud.com/gpu-count"] = std::to_string(gpus);
    p.spec.containers.push_back(std::move(c));
    if (has_spec && !r[csv.col["gpu_spec"]].empty()) {
      std::vector<std::string> models;
      std::stringstream ss(r[csv.col["gpu_spec"]]);
      std::string m;
      while (std::getline(ss, m, '|')) {
        if (!m.empty()) models.push_back(m);
      }
      api::NodeSelector sel;
      sel.node_selector_terms.push_back({{{kGpuModelLabel, "In", models}}, {}});
      p.spec.affinity.emplace();
      p.spec.affinity->node_affinity.emplace();
      p.spec.affinity->node_affinity->required_during_scheduling_ignored_during_execution = sel;
      p.metadata.annotations["alibabacloud.com/gpu-card-model"] = r[csv.col["gpu_spec"]];
    }
    if (opts.timed && has_times) {
      int64_t created, deleted;
      if (!get("creation_time", &created, false) || !get("deletion_time", &deleted, true)) {
        return false;
      }
      tp.arrival = created * api::kNanosPerSecond;
      if (deleted >= 0) {
        if (deleted < created) {
          *error = where("deletion_time") + "deletion before creation";
          return false;
        }
        tp.deletion = deleted * api::kNanosPerSecond;
      }
    }
    out->push_back(std::move(tp));
  }
  std::stable_sort(out->begin(), out->end(),
                   [](const TimedPod& a, const TimedPod& b) { return a.arrival < b.arrival; });
  return true;
}

}  // namespace phalanx::sim
