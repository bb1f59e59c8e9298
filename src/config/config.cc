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

bool DecodeConfiguration(std::string_view text, const std::string& source,
                         KubeSchedulerConfiguration* out, std::string* error) {
  try {
    internal::Decoded d;
    std::vector<internal::FieldError> errors;
    if (!internal::Decode(text, &d, &errors)) {
      if (error != nullptr) *error = internal::JoinErrors(errors, source);
      return false;
    }
    internal::SetDefaults(&d);
    errors = internal::Validate(d.cfg);
    if (!errors.empty()) {
      if (error != nullptr) *error = internal::JoinErrors(errors, source);
      return false;
    }
    if (out != nullptr) *out = std::move(d.cfg);
    return true;
  } catch (const std::exception& e) {
    if (error != nullptr) *error = source + ": internal error: " + e.what();
    return false;
  } catch (...) {
    if (error != nullptr) *error = source + ": internal error";
    return false;
  }
}

bool LoadConfiguration(const std::string& path, KubeSchedulerConfiguration* out,
                       std::string* error) {
  try {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      if (error != nullptr) *error = path + ": cannot read file: is a directory";
      return false;
    }
    std::ifstream in(path, std::ios::in | std::ios::binary);
    if (!in) {
      const int err = errno;
      if (error != nullptr) {
        *error = path + ": cannot open file: " + (err != 0 ? std::strerror(err) : "unknown error");
      }
      return false;
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    if (in.bad()) {
      if (error != nullptr) *error = path + ": read error";
      return false;
    }
    return DecodeConfiguration(buf.str(), path, out, error);
  } catch (const std::exception& e) {
    if (error != nullptr) *error = path + ": internal error: " + e.what();
    return false;
  } catch (...) {
    if (error != nullptr) *error = path + ": internal error";
    return false;
  }
}

}  // namespace phalanx::config
