// Default plugin sets of KubeSchedulerConfiguration profiles, per API version.
//
// Upstream sources: pkg/scheduler/apis/config/v1/default_plugins.go (getDefaultPlugins,
// mergePlugins, mergePluginSet) and the removed v1beta3/v1beta2 counterparts.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "config/types.h"

namespace phalanx::config {

// Names of the upstream in-tree plugins this build implements (and registers in
// NewInTreeRegistry). The default plugin sets of every API version are upstream's lists
// filtered by this set, so a plugin that has not landed yet is silently left out of the
// defaults instead of failing framework construction. Add a name here when its plugin
// lands. Never fails.
const std::set<std::string>& ImplementedInTreePlugins();

namespace internal {

enum class ApiVersion { kV1, kV1beta3, kV1beta2 };

// Upstream's unfiltered default plugin set of `version` (the feature gates as they stood
// by default in the last release that served the version). v1 and v1beta3 fill only
// multi_point; v1beta2 fills the per-extension-point sets.
Plugins UpstreamDefaultPlugins(ApiVersion version);

// UpstreamDefaultPlugins(version) restricted to ImplementedInTreePlugins(), order kept.
Plugins DefaultPlugins(ApiVersion version);

// Upstream mergePluginSet: disabled "*" drops every default of the point; a default
// disabled by name is dropped; a custom enabled plugin with a default's name replaces the
// default in place (custom weight wins; with repeated names the last one replaces and
// the earlier ones are appended); the other custom enabled plugins are appended in
// order. keep_disabled: v1/v1beta3 carry the custom (then the default) disabled names
// into the result, v1beta2 returned only the enabled list.
PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom, bool keep_disabled);

// MergePluginSet applied to every extension point (upstream mergePlugins).
Plugins MergePlugins(const Plugins& defaults, const Plugins& custom, bool keep_disabled);

}  // namespace internal
}  // namespace phalanx::config
