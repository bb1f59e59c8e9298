// Fuzz target: manifest decoding (api::DecodeManifests: multi-document YAML, JSON,
// `kind: List`), then controller expansion of what decoded.
//
// Input: a manifest file's text. A rejection must name the source; an accepted set must
// have expandable controllers. Replicas are capped here at 10,000 so that a fuzzer-made
// `replicas: 2147483647` measures the decoder, not the allocator (the simulator bounds
// scenario sizes separately).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  phalanx::api::Manifests m;
  std::string err;
  if (!phalanx::api::OkOrMessage(phalanx::api::DecodeManifests(text, "fuzz.yaml", &m), &err)) {
    if (err.rfind("fuzz.yaml", 0) != 0) std::abort();
    return 0;
  }
  for (const auto& c : m.controllers) {
    if (c.replicas < 0) std::abort();  // validation rejects negative replicas
    if (c.replicas > 10000) continue;
    const auto pods = phalanx::api::ExpandController(c);
    if (pods.size() != static_cast<size_t>(c.replicas)) std::abort();
  }
  return 0;
}
