// Permission check of credential files named by a kubeconfig (client key, token file, and
// the kubeconfig itself when it embeds a token or key).
//
// Policy (docs/security.md): warn, do not refuse, when such a file can be read by its group
// or by others (mode & 077 != 0). OpenSSH refuses private keys like that; kubectl does not
// check at all and Helm warns ("Kubernetes configuration file is group-readable"). Phalanx
// warns because Kubernetes mounts Secret volumes with mode 0644 by default and a scheduler
// that refuses to start there would be switched off rather than fixed. In-cluster
// configuration (service account token and CA written by the kubelet) is not checked.
#pragma once

#include <string>
#include <vector>

#include "client/rest_config.h"

namespace phalanx::client {

// One message per file whose permissions let group or others read it, e.g.
//   "client-key /home/u/.kube/admin.key is readable by group and others (mode 0644);
//    run: chmod 600 /home/u/.kube/admin.key"
// Files that cannot be stat()ed are skipped (the loader reports missing files). Never
// contains the token or key itself.
std::vector<std::string> CredentialFileWarnings(const RestConfig& c);

}  // namespace phalanx::client
