// Prometheus metrics in the text exposition format (version 0.0.4): counters, gauges
// (set directly or computed at scrape time) and histograms, each a family with label
// names. Thread-safe; values are doubles.
//
//   metrics::Registry reg;
//   auto& attempts = reg.Counter("scheduler_schedule_attempts_total",
//                                "Number of attempts to schedule pods", {"result", "profile"});
//   attempts.With({"scheduled", "default-scheduler"}).Inc();
//   std::string text = reg.Render();
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace phalanx::metrics {

using Labels = std::vector<std::string>;  // values, in the family's label-name order

class CounterValue {
 public:
  void Inc(double v = 1);
  double Value() const;

 private:
  mutable absl::Mutex mu_;
  double v_ ABSL_GUARDED_BY(mu_) = 0;
};

class GaugeValue {
 public:
  void Set(double v);
  void Add(double v);
  double Value() const;

 private:
  mutable absl::Mutex mu_;
  double v_ ABSL_GUARDED_BY(mu_) = 0;
};

class HistogramValue {
 public:
  explicit HistogramValue(const std::vector<double>* bounds);
  void Observe(double v);
  // Cumulative counts per upper bound (+Inf last), sum and count.
  void Snapshot(std::vector<uint64_t>* cumulative, double* sum, uint64_t* count) const;

 private:
  const std::vector<double>* bounds_;
  mutable absl::Mutex mu_;
  std::vector<uint64_t> counts_ ABSL_GUARDED_BY(mu_);  // per bucket, non-cumulative; +Inf last
  double sum_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t count_ ABSL_GUARDED_BY(mu_) = 0;
};

// A metric family: one value per distinct label set.
template <typename V>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::vector<double> bounds = {})
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        bounds_(std::move(bounds)) {}
  // The value for `labels` (created at zero); `labels` must have one value per label name.
  V& With(const Labels& labels);
  const std::string& name() const { return name_; }

 private:
  friend class Registry;
  std::string name_, help_;
  std::vector<std::string> label_names_;
  std::vector<double> bounds_;
  mutable absl::Mutex mu_;
  std::map<Labels, std::unique_ptr<V>> values_ ABSL_GUARDED_BY(mu_);
};

// Exponential bucket bounds: start, start*factor, ... (count bounds).
std::vector<double> ExponentialBuckets(double start, double factor, int count);

class Registry {
 public:
  Family<CounterValue>& Counter(const std::string& name, const std::string& help,
                                std::vector<std::string> label_names = {});
  Family<GaugeValue>& Gauge(const std::string& name, const std::string& help,
                            std::vector<std::string> label_names = {});
  Family<HistogramValue>& Histogram(const std::string& name, const std::string& help,
                                    std::vector<std::string> label_names,
                                    std::vector<double> bounds);
  // A gauge computed at scrape time: `fn` returns (label values, value) pairs.
  void GaugeFunc(const std::string& name, const std::string& help,
                 std::vector<std::string> label_names,
                 std::function<std::vector<std::pair<Labels, double>>()> fn);
  // The text exposition of every family, in registration order.
  std::string Render() const;

 private:
  struct FuncGauge {
    std::string name, help;
    std::vector<std::string> label_names;
    std::function<std::vector<std::pair<Labels, double>>()> fn;
  };
  struct Entry {
    int kind = 0;  // 0 counter, 1 gauge, 2 histogram, 3 func gauge
    size_t index = 0;
  };
  mutable absl::Mutex mu_;
  std::vector<Entry> order_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Family<CounterValue>>> counters_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Family<GaugeValue>>> gauges_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Family<HistogramValue>>> histograms_ ABSL_GUARDED_BY(mu_);
  std::vector<FuncGauge> funcs_ ABSL_GUARDED_BY(mu_);
};

// Escapes a label value for the exposition format (backslash, quote, newline).
std::string EscapeLabelValue(const std::string& v);
// Formats a sample value: integers without a fraction, +Inf/-Inf/NaN as Prometheus spells them.
std::string FormatValue(double v);

}  // namespace phalanx::metrics
