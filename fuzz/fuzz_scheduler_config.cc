// Fuzz target: KubeSchedulerConfiguration decoding, defaulting and validation
// (config::DecodeConfiguration). Input: the configuration file's text (YAML or JSON).
// A rejection must carry a message naming the source.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  phalanx::config::KubeSchedulerConfiguration cfg;
  std::string error;
  if (!phalanx::api::MoveOrMessage(phalanx::config::DecodeConfiguration(text, "fuzz.yaml"), &cfg,
                                   &error)) {
    if (error.find("fuzz.yaml") == std::string::npos) std::abort();
  }
  return 0;
}
