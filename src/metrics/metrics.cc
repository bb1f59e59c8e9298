#include "metrics/metrics.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace phalanx::metrics {

void CounterValue::Inc(double v) {
  absl::MutexLock l(&mu_);
  v_ += v;
}
double CounterValue::Value() const {
  absl::MutexLock l(&mu_);
  return v_;
}

void GaugeValue::Set(double v) {
  absl::MutexLock l(&mu_);
  v_ = v;
}
void GaugeValue::Add(double v) {
  absl::MutexLock l(&mu_);
  v_ += v;
}
double GaugeValue::Value() const {
  absl::MutexLock l(&mu_);
  return v_;
}

HistogramValue::HistogramValue(const std::vector<double>* bounds)
    : bounds_(bounds), counts_(bounds->size() + 1, 0) {}

void HistogramValue::Observe(double v) {
  size_t i = 0;
  while (i < bounds_->size() && v > (*bounds_)[i]) ++i;
  absl::MutexLock l(&mu_);
  ++counts_[i];
  sum_ += v;
  ++count_;
}

void HistogramValue::Snapshot(std::vector<uint64_t>* cumulative, double* sum,
                              uint64_t* count) const {
  absl::MutexLock l(&mu_);
  cumulative->assign(counts_.size(), 0);
  uint64_t acc = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    acc += counts_[i];
    (*cumulative)[i] = acc;
  }
  *sum = sum_;
  *count = count_;
}

template <typename V>
V& Family<V>::With(const Labels& labels) {
  if (labels.size() != label_names_.size()) {
    throw std::invalid_argument("metric " + name_ + ": expected " +
                                std::to_string(label_names_.size()) + " label values, got " +
                                std::to_string(labels.size()));
  }
  absl::MutexLock l(&mu_);
  auto it = values_.find(labels);
  if (it != values_.end()) return *it->second;
  std::unique_ptr<V> v;
  if constexpr (std::is_same_v<V, HistogramValue>) {
    v = std::make_unique<V>(&bounds_);
  } else {
    v = std::make_unique<V>();
  }
  V& ref = *v;
  values_.emplace(labels, std::move(v));
  return ref;
}

template class Family<CounterValue>;
template class Family<GaugeValue>;
template class Family<HistogramValue>;

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> b;
  double v = start;
  for (int i = 0; i < count; ++i) {
    b.push_back(v);
    v *= factor;
  }
  return b;
}

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.9g", v);
  }
  return buf;
}

namespace {

std::string LabelSet(const std::vector<std::string>& names, const Labels& values,
                     const std::string& extra_name = "", const std::string& extra_value = "") {
  if (names.empty() && extra_name.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ",";
    out += names[i] + "=\"" + EscapeLabelValue(values[i]) + "\"";
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ",";
    out += extra_name + "=\"" + extra_value + "\"";
  }
  return out + "}";
}

void Header(std::string* out, const std::string& name, const std::string& help, const char* type) {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

Family<CounterValue>& Registry::Counter(const std::string& name, const std::string& help,
                                        std::vector<std::string> label_names) {
  absl::MutexLock l(&mu_);
  counters_.push_back(std::make_unique<Family<CounterValue>>(name, help, std::move(label_names)));
  order_.push_back({0, counters_.size() - 1});
  return *counters_.back();
}

Family<GaugeValue>& Registry::Gauge(const std::string& name, const std::string& help,
                                    std::vector<std::string> label_names) {
  absl::MutexLock l(&mu_);
  gauges_.push_back(std::make_unique<Family<GaugeValue>>(name, help, std::move(label_names)));
  order_.push_back({1, gauges_.size() - 1});
  return *gauges_.back();
}

Family<HistogramValue>& Registry::Histogram(const std::string& name, const std::string& help,
                                            std::vector<std::string> label_names,
                                            std::vector<double> bounds) {
  absl::MutexLock l(&mu_);
  histograms_.push_back(std::make_unique<Family<HistogramValue>>(name, help, std::move(label_names),
                                                                 std::move(bounds)));
  order_.push_back({2, histograms_.size() - 1});
  return *histograms_.back();
}

void Registry::GaugeFunc(const std::string& name, const std::string& help,
                         std::vector<std::string> label_names,
                         std::function<std::vector<std::pair<Labels, double>>()> fn) {
  absl::MutexLock l(&mu_);
  funcs_.push_back({name, help, std::move(label_names), std::move(fn)});
  order_.push_back({3, funcs_.size() - 1});
}

std::string Registry::Render() const {
  absl::MutexLock l(&mu_);
  std::string out;
  for (const Entry& e : order_) {
    if (e.kind == 0) {
      const auto& f = *counters_[e.index];
      Header(&out, f.name_, f.help_, "counter");
      absl::MutexLock fl(&f.mu_);
      for (const auto& [labels, v] : f.values_) {
        out += f.name_ + LabelSet(f.label_names_, labels) + " " + FormatValue(v->Value()) + "\n";
      }
    } else if (e.kind == 1) {
      const auto& f = *gauges_[e.index];
      Header(&out, f.name_, f.help_, "gauge");
      absl::MutexLock fl(&f.mu_);
      for (const auto& [labels, v] : f.values_) {
        out += f.name_ + LabelSet(f.label_names_, labels) + " " + FormatValue(v->Value()) + "\n";
      }
    } else if (e.kind == 2) {
      const auto& f = *histograms_[e.index];
      Header(&out, f.name_, f.help_, "histogram");
      absl::MutexLock fl(&f.mu_);
      for (const auto& [labels, v] : f.values_) {
        std::vector<uint64_t> cum;
        double sum = 0;
        uint64_t count = 0;
        v->Snapshot(&cum, &sum, &count);
        for (size_t i = 0; i < cum.size(); ++i) {
          const std::string le = i < f.bounds_.size() ? FormatValue(f.bounds_[i]) : "+Inf";
          out += f.name_ + "_bucket" + LabelSet(f.label_names_, labels, "le", le) + " " +
                 std::to_string(cum[i]) + "\n";
        }
        out += f.name_ + "_sum" + LabelSet(f.label_names_, labels) + " " + FormatValue(sum) + "\n";
        out += f.name_ + "_count" + LabelSet(f.label_names_, labels) + " " + std::to_string(count) +
               "\n";
      }
    } else {
      const auto& g = funcs_[e.index];
      Header(&out, g.name, g.help, "gauge");
      for (const auto& [labels, v] : g.fn()) {
        if (labels.size() != g.label_names.size()) continue;
        out += g.name + LabelSet(g.label_names, labels) + " " + FormatValue(v) + "\n";
      }
    }
  }
  return out;
}

}  // namespace phalanx::metrics
