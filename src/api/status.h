// The general error vocabulary of Phalanx (issue 17): absl::Status and absl::StatusOr<T>
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

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace phalanx::api {

using Status = absl::Status;
template <typename T>
using StatusOr = absl::StatusOr<T>;

}  // namespace phalanx::api
