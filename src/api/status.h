// The general error vocabulary of Phalanx: absl::Status and absl::StatusOr<T>
// from Debian's libabsl-dev, for every fallible call outside the scheduling framework —
// decoding manifests and configs, loading traces, API calls, the object store, the CLI.
//
// framework::Status (src/framework/status.h) stays the result of plugin and framework
// calls: it carries Kubernetes' scheduling codes (Unschedulable, Wait, Skip, Pending …),
// reasons and the plugin name, which absl's canonical codes cannot.
//
// Messages name what failed as the user wrote it: the file, the object and the field
// ("pods.yaml: Pod shop/web-0: spec.containers[0].resources.requests.cpu: …"), as the
// README promises.
#pragma once

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace phalanx::api {

using Status = absl::Status;
template <typename T>
using StatusOr = absl::StatusOr<T>;

// Test conveniences (EXPECT_TRUE(OkOrMessage(s, &err)) << err): true when `s` is OK;
// otherwise sets *error (when not null) to the message, unchanged, and returns false.
inline bool OkOrMessage(const Status& s, std::string* error) {
  if (s.ok()) return true;
  if (error != nullptr) *error = std::string(s.message());
  return false;
}
// As OkOrMessage; on success moves the value into *out (when not null).
template <typename T>
bool MoveOrMessage(StatusOr<T>&& v, T* out, std::string* error) {
  if (!v.ok()) return OkOrMessage(v.status(), error);
  if (out != nullptr) *out = *std::move(v);
  return true;
}

}  // namespace phalanx::api
