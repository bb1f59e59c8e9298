#include "api/field_audit.h"

#include <yaml-cpp/yaml.h>

namespace phalanx::api {

const std::vector<std::string_view>& UnsupportedVolumeSources() {
  static const std::vector<std::string_view> kSources = {"portworxVolume"};
  return kSources;
}

std::vector<std::string> UnsupportedPodFields(const YAML::Node& spec, const std::string& path) {
  std::vector<std::string> out;
  if (!spec.IsDefined() || !spec.IsMap()) return out;
  const YAML::Node volumes = spec["volumes"];
  if (!volumes.IsDefined() || !volumes.IsSequence()) return out;
  for (size_t i = 0; i < volumes.size(); ++i) {
    const YAML::Node v = volumes[i];
    if (!v.IsMap()) continue;
    for (const auto& kv : v) {
      if (!kv.first.IsScalar() || !kv.second.IsDefined() || kv.second.IsNull()) continue;
      const std::string& key = kv.first.Scalar();
      for (std::string_view source : UnsupportedVolumeSources()) {
        if (key == source) {
          out.push_back(path + ".volumes[" + std::to_string(i) + "]." + key);
          break;
        }
      }
    }
  }
  return out;
}

std::string UnsupportedFieldsReason(const std::vector<std::string>& fields) {
  std::string out;
  for (const auto& f : fields) {
    if (!out.empty()) out += "; ";
    out += f + ": not supported by this scheduler";
  }
  return out;
}

}  // namespace phalanx::api
