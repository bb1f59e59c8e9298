// Fuzz target: kubeconfig parsing (client::LoadKubeconfig).
//
// Input: the kubeconfig's text, written to a private temporary directory (LoadKubeconfig
// reads a path, and resolves relative file names against the file's directory). Loaded
// with the current-context and with an explicit context "ctx". A rejection must name the
// kubeconfig; an accepted config must have an http(s) server. Nothing may throw.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "client/rest_config.h"

namespace {

const std::string& Dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/phalanx-fuzz-kubeconfig-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (d == nullptr) std::abort();
    return std::string(d);
  }();
  return dir;
}

void Check(const std::string& path, const std::string& context) {
  phalanx::client::RestConfig rc;
  std::string err;
  if (phalanx::api::OkOrMessage(phalanx::client::LoadKubeconfig(path, context, &rc), &err)) {
    if (rc.server.rfind("https://", 0) != 0 && rc.server.rfind("http://", 0) != 0) std::abort();
  } else if (err.find(path) == std::string::npos) {
    std::abort();  // every error names the kubeconfig
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = Dir() + "/config";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  Check(path, "");
  Check(path, "ctx");
  return 0;
}
