// Status of a plugin or framework call (upstream pkg/scheduler/framework/interface.go).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phalanx::framework {

// Exactly Kubernetes' codes, same order and meaning.
enum class Code : int {
  kSuccess = 0,
  // Internal error, unexpected: the pod is retried with backoff.
  kError,
  // The plugin finds the pod unschedulable; preemption might help.
  kUnschedulable,
  // Unschedulable and preemption would not help (e.g. node affinity mismatch).
  kUnschedulableAndUnresolvable,
  // Permit: the pod waits.
  kWait,
  // PreFilter/PreScore: skip the plugin's Filter/Score for this pod; Bind: not handled.
  kSkip,
  // The pod waits for something external (e.g. a gang's other pods); requeue on events.
  kPending,
};

std::string_view CodeName(Code c);

// A status with a code, zero or more reasons (user-facing strings, upstream wording),
// the name of the plugin that produced it, and for kError the error text in reasons[0].
// The success status is the default-constructed value and does not allocate.
//
// Reasons and plugin name live in one shared, immutable-once-shared block: copying a
// Status is a reference-count increment, not a copy of its strings (a failing Filter pass
// copies one Status per node into the Diagnosis and again into PostFilter's NodeToStatus).
// The mutators (WithPlugin, AppendReason) copy the block first when it is shared
// (copy-on-write), so copies never observe each other's changes. A plugin may therefore
// return one prebuilt Status for a frequent rejection (e.g. NodeResourcesFit's
// "Insufficient cpu") without allocating per node; WithPlugin with the name it already
// carries does not copy.
class [[nodiscard]] Status {
 public:
  Status() = default;
  explicit Status(Code code) : code_(code) {}
  Status(Code code, std::string reason) : code_(code) {
    Mutable().reasons.push_back(std::move(reason));
  }
  Status(Code code, std::vector<std::string> reasons) : code_(code) {
    if (!reasons.empty()) Mutable().reasons = std::move(reasons);
  }

  static Status Success() { return Status(); }
  static Status Error(std::string msg) { return Status(Code::kError, std::move(msg)); }
  static Status Unschedulable(std::string reason) {
    return Status(Code::kUnschedulable, std::move(reason));
  }
  static Status UnschedulableAndUnresolvable(std::string reason) {
    return Status(Code::kUnschedulableAndUnresolvable, std::move(reason));
  }

  Code code() const { return code_; }
  bool IsSuccess() const { return code_ == Code::kSuccess; }
  bool IsWait() const { return code_ == Code::kWait; }
  bool IsSkip() const { return code_ == Code::kSkip; }
  // Unschedulable or UnschedulableAndUnresolvable (upstream IsRejected also counts Pending).
  bool IsRejected() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable ||
           code_ == Code::kPending;
  }
  bool IsError() const { return code_ == Code::kError; }

  const std::vector<std::string>& reasons() const { return rep_ ? rep_->reasons : EmptyReasons(); }
  // Reasons joined with ", " (upstream Status.Message()).
  std::string Message() const;
  const std::string& plugin() const { return rep_ ? rep_->plugin : EmptyString(); }
  Status& WithPlugin(std::string_view plugin) {
    if (rep_ ? rep_->plugin == plugin : plugin.empty()) return *this;
    Mutable().plugin = std::string(plugin);
    return *this;
  }
  Status& AppendReason(std::string r) {
    Mutable().reasons.push_back(std::move(r));
    return *this;
  }
  // "Code: message" for logs.
  std::string ToString() const;

 private:
  struct Rep {
    std::vector<std::string> reasons;
    std::string plugin;
  };
  // The block, unshared (copied first when another Status refers to it).
  Rep& Mutable();
  static const std::vector<std::string>& EmptyReasons();
  static const std::string& EmptyString();

  Code code_ = Code::kSuccess;
  std::shared_ptr<Rep> rep_;  // null: no reasons and no plugin
};

// A value or an error Status (Abseil StatusOr-style). `status()` is Success iff ok().
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)), ok_(true) {}  // NOLINT(google-explicit-constructor)
  StatusOr(Status s) : status_(std::move(s)), ok_(false) {}   // NOLINT(google-explicit-constructor)
  bool ok() const { return ok_; }
  const Status& status() const { return status_; }
  T& value() & { return value_; }
  const T& value() const& { return value_; }
  T&& value() && { return std::move(value_); }
  T* operator->() { return &value_; }
  const T* operator->() const { return &value_; }
  T& operator*() { return value_; }

 private:
  T value_{};
  Status status_;
  bool ok_;
};

// upstream FitError.Error(): "0/N nodes are available: 3 Insufficient cpu, 2 node(s) had
// untolerated taint {a: b}." — `node_reasons` counts the nodes per reason; the parts are
// sorted as strings, as upstream sorts them. With no reasons: "0/N nodes are available:".
std::string NodesAvailableMessage(size_t num_all_nodes,
                                  const std::map<std::string, size_t>& node_reasons);

}  // namespace phalanx::framework
