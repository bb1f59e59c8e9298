#include "app/command.h"

#include <cstdio>
#include <fstream>

#include "config/config.h"

namespace phalanx::app {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "phalanx: error: %s\n", msg.c_str());
  return 1;
}

api::Status LoadConfigOrDefault(const std::string& path, config::KubeSchedulerConfiguration* cfg) {
  auto loaded = config::LoadConfigurationOrDefault(path);
  if (!loaded.ok()) return loaded.status();
  *cfg = *std::move(loaded);
  return absl::OkStatus();
}

api::Status WriteTextFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::InvalidArgumentError(path + ": cannot open for writing");
  out << content;
  if (!out) return absl::InternalError(path + ": write failed");
  return absl::OkStatus();
}

}  // namespace phalanx::app
