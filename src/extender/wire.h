// The extender wire format (k8s.io/kube-scheduler/extender/v1 types, encoded as Go's
// encoding/json does: struct field names as written, e.g. "Pod", "NodeNames",
// "FailedNodes"; decoding matches them case-insensitively, as encoding/json does).
// Pods and Nodes are encoded as core/v1 JSON from the typed model of src/api: the fields
// the model keeps (metadata, the scheduling-relevant spec, status), not the whole object
// the API server holds.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "api/types.h"

namespace phalanx::extender {

// core/v1 Pod JSON: metadata (name, namespace, uid, resourceVersion, labels, annotations,
// ownerReferences, creationTimestamp), spec (nodeName, schedulerName, nodeSelector,
// affinity (node, pod and pod anti-affinity), topologySpreadConstraints, tolerations,
// containers and initContainers with resources (and their DRA claims) and ports,
// pod-level resources, volumes, resourceClaims, schedulingGates, hostNetwork, overhead,
// priority, priorityClassName, preemptionPolicy, restartPolicy, activeDeadlineSeconds),
// status (phase, nominatedNodeName, conditions). Volumes carry their name and the source
// the model keeps: persistentVolumeClaim, ephemeral (the claim template), the in-tree block
// devices and csi of api/volume_source.h; other sources (configMap, secret, emptyDir, ...)
// are sent by name only. Quantities are rendered in whole units
// when exact, else in milli-units ("1500m"); sub-milli values are rounded up to a milli.
nlohmann::json PodJson(const api::Pod& pod);
// core/v1 Node JSON: metadata, spec (unschedulable, taints), status (capacity,
// allocatable, conditions).
nlohmann::json NodeJson(const api::Node& node);

// The member of object `obj` named `name` compared case-insensitively (encoding/json's
// rule); nullptr when absent or when `obj` is not an object.
const nlohmann::json* Field(const nlohmann::json& obj, std::string_view name);

}  // namespace phalanx::extender
