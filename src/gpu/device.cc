#include "gpu/device.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <optional>
#include <sstream>

#include "api/resource.h"

namespace phalanx::gpu {

namespace {

const std::string* Find(const std::map<std::string, std::string>& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

bool ParseInt64(std::string_view s, int64_t* v) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::vector<std::string> SplitModels(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string m;
  while (std::getline(ss, m, '|')) {
    if (!m.empty()) out.push_back(m);
  }
  return out;
}

std::string Invalid(const char* key, const std::string& value, const char* why) {
  return std::string(key) + ": Invalid value: \"" + value + "\": " + why;
}

// Indices of devices with >= milli free, in the order of `better` (strict weak order on
// free milli), ties by index.
template <typename Better>
std::vector<int32_t> ChooseOrdered(const std::vector<int32_t>& free_milli, int32_t count,
                                   int32_t milli, Better better) {
  if (count <= 0) return {};
  std::vector<int32_t> idx;
  for (int32_t i = 0; i < static_cast<int32_t>(free_milli.size()); ++i) {
    if (free_milli[i] >= milli) idx.push_back(i);
  }
  if (static_cast<int32_t>(idx.size()) < count) return {};
  if (milli >= kMilliPerGpu) {
    idx.resize(count);  // whole devices: lowest indices (AllocateExclusiveGpuId)
    return idx;
  }
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int32_t a, int32_t b) { return better(free_milli[a], free_milli[b]); });
  idx.resize(count);
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace

GpuAsk ParseGpuAsk(const api::Pod& pod) {
  GpuAsk a;
  const auto& ann = pod.metadata.annotations;
  if (const std::string* m = Find(ann, kGpuModelAnnotation)) a.models = SplitModels(*m);
  const std::string* milli = Find(ann, kGpuMilliAnnotation);
  const std::string* count = Find(ann, kGpuCountAnnotation);
  if (milli || count) {
    a.source = AskSource::kAlibaba;
    int64_t mv = kMilliPerGpu, cv = 1;
    if (milli && (!ParseInt64(*milli, &mv) || mv < 0 || mv > kMilliPerGpu)) {
      a.error = Invalid(kGpuMilliAnnotation, *milli, "must be an integer in 0..1000");
      return a;
    }
    if (count && (!ParseInt64(*count, &cv) || cv < 0 || cv > 1024)) {
      a.error = Invalid(kGpuCountAnnotation, *count, "must be an integer in 0..1024");
      return a;
    }
    if (mv == 0 || cv == 0) {  // upstream: gpu-milli <= 0 or gpu-count <= 0 means no GPU
      a.source = AskSource::kNone;
      return a;
    }
    a.milli = static_cast<int32_t>(mv);
    a.count = static_cast<int32_t>(cv);
    return a;
  }
  const std::string* frac = Find(ann, kKaiFractionAnnotation);
  const std::string* mem = Find(ann, kKaiMemoryAnnotation);
  const std::string* ndev = Find(ann, kKaiNumDevicesAnnotation);
  if (frac || mem) {
    int64_t n = 1;
    if (ndev && (!ParseInt64(*ndev, &n) || n < 1 || n > 1024)) {
      a.error = Invalid(kKaiNumDevicesAnnotation, *ndev, "must be an integer >= 1");
      return a;
    }
    a.count = static_cast<int32_t>(n);
    if (frac) {
      a.source = AskSource::kKaiFraction;
      char* end = nullptr;
      const double f = std::strtod(frac->c_str(), &end);
      if (frac->empty() || end != frac->c_str() + frac->size() || !std::isfinite(f) || f <= 0 ||
          f > 1) {
        a.error = Invalid(kKaiFractionAnnotation, *frac, "must be a number in (0, 1]");
        a.count = 0;
        return a;
      }
      a.milli = std::max<int32_t>(1, static_cast<int32_t>(std::llround(f * kMilliPerGpu)));
      return a;
    }
    a.source = AskSource::kKaiMemory;
    api::Quantity q;
    std::string err;
    int64_t mib = 0;
    if (ParseInt64(*mem, &mib)) {
      // KAI: a bare number is MiB.
    } else if (api::MoveOrMessage(api::Quantity::Parse(*mem), &q, &err) && !q.IsNegative()) {
      mib = (q.Value() + (1 << 20) - 1) >> 20;
    } else {
      mib = -1;
    }
    if (mib <= 0) {
      a.error = Invalid(kKaiMemoryAnnotation, *mem, "must be a positive amount of MiB");
      a.count = 0;
      return a;
    }
    a.memory_mib = mib;
    return a;
  }
  // aliyun.com/gpu-mem: the sum of the containers' limits (gpushare-scheduler-extender
  // GetGPUMemoryFromPodResource), one device.
  static const std::string kAliyunMem(kAliyunGpuMemResource);
  int64_t aliyun = 0;
  for (const auto& c : pod.spec.containers) {
    auto it = c.resources.limits.find(kAliyunMem);
    if (it != c.resources.limits.end()) {
      aliyun += it->second.Value();
      continue;
    }
    auto r = c.resources.requests.find(kAliyunMem);
    if (r != c.resources.requests.end()) aliyun += r->second.Value();
  }
  if (aliyun > 0) {
    a.source = AskSource::kAliyunMemory;
    a.count = 1;
    a.aliyun_mem = aliyun;
    return a;
  }
  // nvidia.com/gpu: max over init containers and sum over containers, as requests go.
  static const std::string kGpu(api::kResourceNvidiaGPU);
  // Extended resources: a limit without a request implies the request.
  auto gpus_of = [](const api::Container& c) -> int64_t {
    auto it = c.resources.requests.find(kGpu);
    if (it != c.resources.requests.end()) return it->second.Value();
    it = c.resources.limits.find(kGpu);
    return it != c.resources.limits.end() ? it->second.Value() : 0;
  };
  int64_t sum = 0, init_max = 0;
  for (const auto& c : pod.spec.containers) sum += gpus_of(c);
  for (const auto& c : pod.spec.init_containers) init_max = std::max(init_max, gpus_of(c));
  const int64_t n = std::max(sum, init_max);
  if (n > 0) {
    a.source = AskSource::kExtendedResource;
    a.count = static_cast<int32_t>(n);
    a.milli = kMilliPerGpu;
  }
  return a;
}

int64_t ModelMemoryMiB(std::string_view model) {
  // open-gpu-share MapGpuTypeMemoryMiB (bytes / 2^20, truncated).
  static const std::pair<std::string_view, int64_t> kTable[] = {
      {"P4", 7611},    {"2080", 11019},    {"1080", 11178}, {"M40", 11448},
      {"T4", 15109},   {"V100M16", 16160}, {"P100", 16280}, {"A10", 22731},
      {"3090", 24268}, {"V100M32", 32510}, {"A100", 81251},
  };
  for (const auto& [name, mib] : kTable) {
    if (name == model) return mib;
  }
  return 0;
}

NodeGpus ParseNodeGpus(const api::Node& node) {
  NodeGpus g;
  static const std::string kGpu(api::kResourceNvidiaGPU);
  static const std::string kAliyunCount(kAliyunGpuCountResource);
  static const std::string kAliyunMem(kAliyunGpuMemResource);
  auto status_value = [&](const std::string& name) -> std::optional<int64_t> {
    auto c = node.status.capacity.find(name);
    if (c != node.status.capacity.end()) return c->second.Value();
    auto a = node.status.allocatable.find(name);
    if (a != node.status.allocatable.end()) return a->second.Value();
    return std::nullopt;
  };
  auto it = node.status.allocatable.find(kGpu);
  if (it != node.status.allocatable.end()) {
    g.count = static_cast<int32_t>(std::max<int64_t>(0, it->second.Value()));
  } else if (auto ac = status_value(kAliyunCount)) {
    g.count = static_cast<int32_t>(std::clamp<int64_t>(*ac, 0, 1024));
  } else {
    const std::string* c = Find(node.metadata.labels, kGpuCountAnnotation);
    if (!c) c = Find(node.metadata.annotations, kGpuCountAnnotation);
    int64_t v = 0;
    if (c && ParseInt64(*c, &v) && v > 0 && v <= 1024) g.count = static_cast<int32_t>(v);
  }
  if (const std::string* m = Find(node.metadata.labels, kGpuModelLabel)) {
    g.model = *m;
  } else if (const std::string* p = Find(node.metadata.labels, kGfdProductLabel)) {
    g.model = *p;
  }
  int64_t mib = 0;
  if (const std::string* m = Find(node.metadata.labels, kGfdMemoryLabel)) {
    if (!ParseInt64(*m, &mib) || mib < 0) mib = 0;
  }
  g.memory_mib = mib > 0 ? mib : ModelMemoryMiB(g.model);
  if (auto total = status_value(kAliyunMem); total && *total > 0 && g.count > 0) {
    g.aliyun_mem_per_device = *total / g.count;
  }
  return g;
}

int32_t MilliOnNode(const GpuAsk& ask, const NodeGpus& gpus) {
  if (ask.source == AskSource::kAliyunMemory) {
    if (gpus.aliyun_mem_per_device <= 0) return 0;
    const int64_t m = (ask.aliyun_mem * kMilliPerGpu + gpus.aliyun_mem_per_device - 1) /
                      gpus.aliyun_mem_per_device;
    return static_cast<int32_t>(std::clamp<int64_t>(m, 1, kMilliPerGpu));
  }
  if (ask.source != AskSource::kKaiMemory) return ask.milli;
  if (gpus.memory_mib <= 0) return 0;
  const int64_t m = (ask.memory_mib * kMilliPerGpu + gpus.memory_mib - 1) / gpus.memory_mib;
  return static_cast<int32_t>(std::clamp<int64_t>(m, 1, kMilliPerGpu));
}

bool ModelAllowed(const std::vector<std::string>& models, std::string_view node_model) {
  if (models.empty()) return true;
  for (const auto& m : models) {
    if (m == node_model) return true;
  }
  return false;
}

bool ParseGpuIndex(std::string_view text, std::vector<int32_t>* out) {
  out->clear();
  if (text.empty()) return false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t dash = text.find('-', pos);
    if (dash == std::string_view::npos) dash = text.size();
    int64_t v = 0;
    if (!ParseInt64(text.substr(pos, dash - pos), &v) || v < 0 || v > 1023) return false;
    out->push_back(static_cast<int32_t>(v));
    pos = dash + 1;
  }
  return !out->empty();
}

std::map<std::string, std::string> AssignmentAnnotations(const GpuAsk& ask, const NodeGpus& gpus,
                                                         const std::string& node,
                                                         const std::vector<int32_t>& devices,
                                                         int64_t now_ns) {
  std::map<std::string, std::string> a;
  const std::string now = std::to_string(now_ns);
  a[kGpuIndexAnnotation] = FormatGpuIndex(devices);
  a[kAssumeTimeAnnotation] = now;
  a[kGpuNodeAnnotation] = node;
  if (ask.source == AskSource::kAliyunMemory && devices.size() == 1) {
    a[kAliyunMemIdxAnnotation] = std::to_string(devices.front());
    a[kAliyunMemPodAnnotation] = std::to_string(ask.aliyun_mem);
    a[kAliyunMemDevAnnotation] = std::to_string(gpus.aliyun_mem_per_device);
    a[kAliyunAssignedAnnotation] = "false";
    a[kAliyunAssumeTimeAnnotation] = now;
  }
  return a;
}

bool HasAssignmentAnnotations(const api::Pod& pod, const std::map<std::string, std::string>& want) {
  const auto& have = pod.metadata.annotations;
  for (const auto& [k, v] : want) {
    auto it = have.find(k);
    if (it == have.end()) return false;
    if (k == kAssumeTimeAnnotation || k == kAliyunAssumeTimeAnnotation) continue;
    if (it->second != v) return false;
  }
  return true;
}

bool RecordedDevices(const api::Pod& pod, std::string_view node, std::vector<int32_t>* out) {
  const auto& ann = pod.metadata.annotations;
  const std::string* idx = Find(ann, kGpuIndexAnnotation);
  const std::string* on = Find(ann, kGpuNodeAnnotation);
  if (idx && (!on || *on == node) && ParseGpuIndex(*idx, out)) return true;
  const std::string* aliyun = Find(ann, kAliyunMemIdxAnnotation);
  int64_t v = 0;
  if (aliyun && (!on || *on == node) && ParseInt64(*aliyun, &v) && v >= 0 && v <= 1023) {
    out->assign(1, static_cast<int32_t>(v));
    return true;
  }
  out->clear();
  return false;
}

bool HasPredefinedGpuIndex(const api::Pod& pod) {
  return Find(pod.metadata.annotations, kGpuIndexAnnotation) != nullptr &&
         Find(pod.metadata.annotations, kGpuNodeAnnotation) == nullptr;
}

std::string FormatGpuIndex(const std::vector<int32_t>& devices) {
  std::string s;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i) s += '-';
    s += std::to_string(devices[i]);
  }
  return s;
}

int32_t DevicesWithFree(const std::vector<int32_t>& free_milli, int32_t milli) {
  int32_t n = 0;
  for (int32_t f : free_milli) n += f >= milli ? 1 : 0;
  return n;
}

bool Fits(const std::vector<int32_t>& free_milli, int32_t count, int32_t milli) {
  return count <= 0 || DevicesWithFree(free_milli, milli) >= count;
}

std::vector<int32_t> ChooseBestFit(const std::vector<int32_t>& free_milli, int32_t count,
                                   int32_t milli) {
  return ChooseOrdered(free_milli, count, milli, [](int32_t a, int32_t b) { return a < b; });
}

std::vector<int32_t> ChooseWorstFit(const std::vector<int32_t>& free_milli, int32_t count,
                                    int32_t milli) {
  return ChooseOrdered(free_milli, count, milli, [](int32_t a, int32_t b) { return a > b; });
}

std::vector<int32_t> ChooseFirstFit(const std::vector<int32_t>& free_milli, int32_t count,
                                    int32_t milli) {
  return ChooseOrdered(free_milli, count, milli, [](int32_t, int32_t) { return false; });
}

std::string DraGpuDeviceName(int32_t index) { return "gpu-" + std::to_string(index); }

int32_t DraGpuIndex(std::string_view device) {
  constexpr std::string_view kPrefix = "gpu-";
  if (device.size() <= kPrefix.size() || device.substr(0, kPrefix.size()) != kPrefix) return -1;
  if (device.size() > kPrefix.size() + 1 && device[kPrefix.size()] == '0') return -1;  // "gpu-01"
  int64_t v = 0;
  for (char ch : device.substr(kPrefix.size())) {
    if (ch < '0' || ch > '9' || v > 1000000) return -1;
    v = v * 10 + (ch - '0');
  }
  return static_cast<int32_t>(v);
}

}  // namespace phalanx::gpu
