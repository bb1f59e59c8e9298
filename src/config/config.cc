// Public entry points of the config module: decode + convert + default + validate
// (upstream cmd/kube-scheduler/app/options loadConfigFromFile and the scheme's
// UniversalDecoder, followed by ValidateKubeSchedulerConfiguration).
#include "config/config.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/internal.h"

namespace phalanx::config {

const YAML::Node* Profile::ArgsFor(const std::string& plugin) const {
  for (const PluginConfig& pc : plugin_config) {
    if (pc.name == plugin) return pc.args.get();
  }
  return nullptr;
}

KubeSchedulerConfiguration DefaultConfiguration() {
  try {
    internal::Decoded d;
    d.cfg.api_version = std::string(internal::kV1);
    d.version = internal::ApiVersion::kV1;
    internal::SetDefaults(&d);
    return d.cfg;
  } catch (...) {
    // Allocation failure only; return the struct defaults with the lone default profile.
    KubeSchedulerConfiguration cfg;
    cfg.profiles.resize(1);
    return cfg;
  }
}

api::StatusOr<KubeSchedulerConfiguration> DecodeConfiguration(std::string_view text,
                                                              const std::string& source) {
  try {
    internal::Decoded d;
    internal::FieldErrors errors;
    if (!internal::Decode(text, &d, &errors)) {
      return absl::InvalidArgumentError(errors.FormatAll(source));
    }
    internal::SetDefaults(&d);
    errors = internal::Validate(d.cfg);
    if (!errors.empty()) return absl::InvalidArgumentError(errors.FormatAll(source));
    return std::move(d.cfg);
  } catch (const std::exception& e) {
    return absl::InternalError(source + ": internal error: " + e.what());
  } catch (...) {
    return absl::InternalError(source + ": internal error");
  }
}

api::StatusOr<KubeSchedulerConfiguration> LoadConfigurationOrDefault(const std::string& path) {
  if (path.empty()) return DefaultConfiguration();
  return LoadConfiguration(path);
}

api::StatusOr<KubeSchedulerConfiguration> LoadConfiguration(const std::string& path) {
  try {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      return absl::FailedPreconditionError(path + ": cannot read file: is a directory");
    }
    std::ifstream in(path, std::ios::in | std::ios::binary);
    if (!in) {
      const int err = errno;
      return api::Status(
          absl::ErrnoToStatusCode(err),
          path + ": cannot open file: " + (err != 0 ? std::strerror(err) : "unknown error"));
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    if (in.bad()) return absl::DataLossError(path + ": read error");
    return DecodeConfiguration(buf.str(), path);
  } catch (const std::exception& e) {
    return absl::InternalError(path + ": internal error: " + e.what());
  } catch (...) {
    return absl::InternalError(path + ": internal error");
  }
}

}  // namespace phalanx::config
