#include "client/credential_files.h"

#include <sys/stat.h>

#include <cstdio>

namespace phalanx::client {

namespace {

void Check(const std::string& what, const std::string& path, std::vector<std::string>* out) {
  if (path.empty()) return;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  const unsigned mode = st.st_mode & 07777;
  if ((mode & 077) == 0) return;
  const bool group = (mode & 070) != 0;
  const bool others = (mode & 07) != 0;
  char octal[8];
  std::snprintf(octal, sizeof octal, "%04o", mode);
  const char* who = group && others ? "group and others" : group ? "group" : "others";
  out->push_back(what + " " + path + " is readable by " + who + " (mode " + octal +
                 "); run: chmod 600 " + path);
}

}  // namespace

std::vector<std::string> CredentialFileWarnings(const RestConfig& c) {
  std::vector<std::string> out;
  if (c.source_file.empty()) return out;  // in-cluster: the kubelet owns these files
  if (!c.client_key_pem.empty() || (!c.token.empty() && c.token_file.empty())) {
    Check("kubeconfig (with embedded credentials)", c.source_file, &out);
  }
  Check("client-key", c.client_key_file, &out);
  Check("tokenFile", c.token_file, &out);
  return out;
}

}  // namespace phalanx::client
