// Loading, defaulting and validating KubeSchedulerConfiguration.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/status.h"
#include "config/types.h"

namespace phalanx::config {

// The default plugin set of a profile (upstream v1 getDefaultPlugins: one multiPoint list
// with weights), restricted to the plugins this build registers. Order matters.
std::vector<PluginRef> DefaultMultiPointPlugins();

// Returns the configuration a scheduler runs with when no file is given: one profile
// "default-scheduler", upstream defaults.
KubeSchedulerConfiguration DefaultConfiguration();

// Decodes `text` (YAML/JSON) with apiVersion kubescheduler.config.k8s.io/v1, v1beta3 or
// v1beta2 and kind KubeSchedulerConfiguration, converts older versions to v1 as upstream
// did (v1beta2: the per-point default sets; v1beta3: weights and multiPoint as in v1),
// applies defaults (SetDefaults_KubeSchedulerConfiguration: a missing profile list gets
// one default profile; every profile's plugins are the defaults merged with the user's
// enabled/disabled sets) and validates (ranges of parallelism, percentageOfNodesToScore
// 0..100, backoff initial <= max, unique non-empty schedulerNames, one pluginConfig per
// plugin, known plugin arg kinds). Errors name the source and the field, e.g.
//   "sched.yaml: profiles[0].plugins.score.enabled[1].weight: Invalid value: -1: ...".
// Whether plugin names exist is checked later against the Registry (framework runtime).
// Errors: InvalidArgumentError with every decode or validation error, one per line
// ("<source>[:<line>:<column>]: <path>: <body>"); InternalError "<source>: internal
// error: ...".
api::StatusOr<KubeSchedulerConfiguration> DecodeConfiguration(std::string_view text,
                                                              const std::string& source);
// Reads `path` and decodes it as above. Read errors name the file: "<path>: cannot open
// file: <strerror>" (code from errno, e.g. NotFound), "<path>: cannot read file: is a
// directory" (FailedPrecondition).
api::StatusOr<KubeSchedulerConfiguration> LoadConfiguration(const std::string& path);

// LoadConfiguration(path), or DefaultConfiguration() when `path` is empty (a command run
// without --config). Errors as LoadConfiguration.
api::StatusOr<KubeSchedulerConfiguration> LoadConfigurationOrDefault(const std::string& path);

}  // namespace phalanx::config
