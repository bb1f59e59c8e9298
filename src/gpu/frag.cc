#include "gpu/frag.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

namespace phalanx::gpu {

bool PodShape::operator<(const PodShape& o) const {
  if (milli_cpu != o.milli_cpu) return milli_cpu < o.milli_cpu;
  if (milli_gpu != o.milli_gpu) return milli_gpu < o.milli_gpu;
  if (gpu_count != o.gpu_count) return gpu_count < o.gpu_count;
  return models < o.models;
}

int64_t NodeShape::total_free_milli() const {
  int64_t t = 0;
  for (int32_t f : free_milli) t += f;
  return t;
}

int32_t NodeShape::fully_free_devices() const {
  int32_t n = 0;
  for (int32_t f : free_milli) n += f == 1000 ? 1 : 0;
  return n;
}

TargetWorkload::TargetWorkload(std::vector<TargetPod> pods) : pods_(std::move(pods)) {}

TargetWorkload TargetWorkload::FromShapes(const std::vector<PodShape>& shapes, double popularity) {
  std::map<PodShape, double> count;
  for (const auto& s : shapes) count[s] += 1;
  const double total = static_cast<double>(shapes.size());
  std::vector<TargetPod> list;
  list.reserve(count.size());
  for (const auto& [shape, n] : count) list.push_back({shape, n});
  // sort.Sort(sort.Reverse(TargetPodList)): most frequent first, ties: larger shape first.
  std::sort(list.begin(), list.end(), [](const TargetPod& a, const TargetPod& b) {
    if (a.freq != b.freq) return a.freq > b.freq;
    return b.shape < a.shape;
  });
  const double expected = std::round(popularity * 100.0) * total / 100.0;
  size_t i = 0, limit = 0;
  double cum = 0;
  while (cum < expected) {
    limit += 1;  // podIncreaseStep = 1
    for (; i < limit && i < list.size(); ++i) {
      cum += list[i].freq;
      list[i].freq /= total;
    }
    if (i >= list.size()) break;
  }
  if (i >= list.size()) return TargetWorkload(std::move(list));
  list.resize(i);
  for (auto& t : list) t.freq /= cum / total;
  return TargetWorkload(std::move(list));
}

void LearnedWorkload::Observe(const PodShape& shape) {
  shapes_.push_back(shape);
  const size_t n = shapes_.size();
  if ((n & (n - 1)) == 0 || n % 1024 == 0) {
    current_ =
        std::make_shared<const TargetWorkload>(TargetWorkload::FromShapes(shapes_, popularity_));
  }
}

bool ModelAccessible(std::string_view node_model, std::string_view models) {
  if (models.empty()) return true;
  if (node_model.empty()) return false;
  int named = 0;
  size_t pos = 0;
  while (pos <= models.size()) {
    size_t bar = models.find('|', pos);
    if (bar == std::string_view::npos) bar = models.size();
    std::string_view m = models.substr(pos, bar - pos);
    if (!m.empty()) {
      ++named;
      if (m == node_model) return true;
    }
    pos = bar + 1;
  }
  return named == 0;
}

namespace {

bool CanHostOnGpus(const NodeShape& node, const PodShape& pod) {
  int32_t need = pod.gpu_count;
  for (int32_t f : node.free_milli) {
    if (f >= pod.milli_gpu) {
      if (--need <= 0) return true;
    }
  }
  return false;
}

}  // namespace

FragClass Classify(const NodeShape& node, const PodShape& pod) {
  const bool cpu_ok = node.milli_cpu_left >= pod.milli_cpu;
  if (pod.milli_gpu == 0) return cpu_ok ? FragClass::kXLSatisfied : FragClass::kXRLackCpu;
  if (!ModelAccessible(node.model, pod.models)) return FragClass::kNoAccess;
  if (CanHostOnGpus(node, pod)) return cpu_ok ? FragClass::kQ3Satisfied : FragClass::kQ4LackCpu;
  return cpu_ok ? FragClass::kQ2LackGpu : FragClass::kQ1LackBoth;
}

double NodeFragMilli(const NodeShape& node, const TargetWorkload& workload) {
  // Accumulate per class like upstream's FragAmount.Data, then sum every class but Q3 in
  // index order, so the floating-point result is the same.
  std::array<double, 7> amount{};
  const double left = static_cast<double>(node.total_free_milli());
  for (const auto& t : workload.pods()) {
    const FragClass c = Classify(node, t.shape);
    if (c == FragClass::kQ3Satisfied) {
      int64_t frag = 0;
      for (int32_t f : node.free_milli) {
        if (f < t.shape.milli_gpu) frag += f;
      }
      amount[static_cast<size_t>(FragClass::kQ2LackGpu)] += t.freq * static_cast<double>(frag);
      amount[static_cast<size_t>(FragClass::kQ3Satisfied)] +=
          t.freq * (left - static_cast<double>(frag));
    } else {
      amount[static_cast<size_t>(c)] += t.freq * left;
    }
  }
  double out = 0;
  for (size_t i = 0; i < amount.size(); ++i) {
    if (i != static_cast<size_t>(FragClass::kQ3Satisfied)) out += amount[i];
  }
  return out;
}

bool SubtractPod(const NodeShape& node, const PodShape& pod, NodeShape* out) {
  *out = node;
  if (out->milli_cpu_left < pod.milli_cpu ||
      static_cast<int32_t>(out->free_milli.size()) < pod.gpu_count) {
    return false;
  }
  out->milli_cpu_left -= pod.milli_cpu;
  int32_t need = pod.gpu_count;
  if (need == 0) return true;
  std::vector<size_t> idx(out->free_milli.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return out->free_milli[a] < out->free_milli[b]; });
  for (size_t i : idx) {
    if (pod.milli_gpu <= out->free_milli[i]) {
      out->free_milli[i] -= pod.milli_gpu;
      if (--need <= 0) return true;
    }
  }
  return false;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

FragMemo::FragMemo(std::shared_ptr<const TargetWorkload> workload)
    : workload_(std::move(workload)) {}

std::string FragMemo::Key(const NodeShape& node) {
  std::string key;
  key.reserve(node.model.size() + 9 + 2 * node.free_milli.size());
  key.append(node.model);
  key.push_back('\0');
  char buf[8];
  std::memcpy(buf, &node.milli_cpu_left, 8);
  key.append(buf, 8);
  auto append = [&key](const int32_t* b, const int32_t* e) {
    for (; b != e; ++b) {
      const auto v = static_cast<uint16_t>(std::clamp(*b, 0, 65535));
      key.push_back(static_cast<char>(v & 0xff));
      key.push_back(static_cast<char>(v >> 8));
    }
  };
  const size_t n = node.free_milli.size();
  if (n <= 16) {  // the common case, without a heap copy
    std::array<int32_t, 16> sorted;
    std::copy(node.free_milli.begin(), node.free_milli.end(), sorted.begin());
    std::sort(sorted.begin(), sorted.begin() + n);
    append(sorted.data(), sorted.data() + n);
    return key;
  }
  std::vector<int32_t> sorted = node.free_milli;
  std::sort(sorted.begin(), sorted.end());
  append(sorted.data(), sorted.data() + n);
  return key;
}

double FragMemo::Get(const NodeShape& node) {
  std::string key = Key(node);
  {
    absl::MutexLock l(&mu_);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
  }
  const double v = workload_ ? NodeFragMilli(node, *workload_) : 0.0;
  absl::MutexLock l(&mu_);
  if (memo_.size() > (1u << 21)) memo_.clear();
  memo_.emplace(std::move(key), v);
  return v;
}

}  // namespace phalanx::gpu
