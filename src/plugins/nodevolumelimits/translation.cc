#include "plugins/nodevolumelimits/translation.h"

#include <array>
#include <cstdint>
#include <set>

namespace phalanx::plugins::nodevolumelimits {

namespace {

using Type = api::VolumeSource::Type;

std::string Trim(const std::string& s, char c) {
  const size_t b = s.find_first_not_of(c);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(c) - b + 1);
}

std::optional<std::string> EBSVolumeID(const std::string& id, std::string* error) {
  static const std::string kScheme = "aws://";
  if (id.rfind(kScheme, 0) != 0) return id;  // a bare volume id
  const std::string rest = id.substr(kScheme.size());
  const size_t slash = rest.find('/');
  const std::string aws_id = slash == std::string::npos ? "" : Trim(rest.substr(slash), '/');
  if (aws_id.rfind("vol-", 0) != 0 || aws_id.find('/') != std::string::npos) {
    *error = "Invalid format for AWS volume (" + id + ")";
    return std::nullopt;
  }
  return aws_id;
}

std::optional<std::string> GCEHandle(const std::string& pd, const api::Labels* labels,
                                     std::string* error) {
  std::string zone;
  if (labels) {
    for (const char* key :
         {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}) {
      if (auto it = labels->find(key); it != labels->end()) {
        zone = it->second;
        break;
      }
    }
  }
  if (zone.empty()) return "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/" + pd;
  if (zone.find("__") == std::string::npos)
    return "projects/UNSPECIFIED/zones/" + zone + "/disks/" + pd;
  // Regional disk: every zone must be of one region (getRegionFromZones).
  std::set<std::string> regions;
  size_t start = 0;
  while (true) {
    const size_t end = zone.find("__", start);
    const std::string z = zone.substr(start, end == std::string::npos ? end : end - start);
    const size_t dash = z.rfind('-');
    if (dash == std::string::npos || dash == 0) {
      *error = "zone \"" + z + "\" has no region";
      return std::nullopt;
    }
    regions.insert(z.substr(0, dash));
    if (end == std::string::npos) break;
    start = end + 2;
  }
  if (regions.size() != 1) {
    *error = "multiple or no regions gotten from zones \"" + zone + "\"";
    return std::nullopt;
  }
  return "projects/UNSPECIFIED/regions/" + *regions.begin() + "/disks/" + pd;
}

}  // namespace

std::string InTreePluginName(Type t) {
  switch (t) {
    case Type::kAWSElasticBlockStore:
      return kAWSEBSInTree;
    case Type::kGCEPersistentDisk:
      return kGCEPDInTree;
    case Type::kAzureDisk:
      return kAzureDiskInTree;
    case Type::kCinder:
      return kCinderInTree;
    default:
      return "";
  }
}

std::optional<std::string> CSIDriverForInTree(const std::string& plugin) {
  if (plugin == kAWSEBSInTree) return "ebs.csi.aws.com";
  if (plugin == kGCEPDInTree) return "pd.csi.storage.gke.io";
  if (plugin == kAzureDiskInTree) return "disk.csi.azure.com";
  if (plugin == kCinderInTree) return "cinder.csi.openstack.org";
  return std::nullopt;
}

bool IsMigratableInTreePlugin(const std::string& plugin) {
  static const std::set<std::string> kMigratable = {kAWSEBSInTree,
                                                    kGCEPDInTree,
                                                    kAzureDiskInTree,
                                                    kCinderInTree,
                                                    "kubernetes.io/azure-file",
                                                    "kubernetes.io/vsphere-volume",
                                                    "kubernetes.io/portworx-volume",
                                                    "kubernetes.io/rbd"};
  return kMigratable.count(plugin) != 0;
}

bool IsCSIMigrationOn(bool has_csi_node, const std::string& plugin) {
  return has_csi_node && CSIDriverForInTree(plugin).has_value();
}

std::optional<std::string> TranslatedVolumeHandle(const api::VolumeSource& src,
                                                  const api::Labels* pv_labels,
                                                  std::string* error) {
  switch (src.type) {
    case Type::kAWSElasticBlockStore:
      return EBSVolumeID(src.id, error);
    case Type::kGCEPersistentDisk:
      return GCEHandle(src.id, pv_labels, error);
    case Type::kAzureDisk:
    case Type::kCinder:
      return src.id;
    default:
      *error = "volume source is not a migratable in-tree volume";
      return std::nullopt;
  }
}

std::string InTreeAttachLimitKey(const std::string& plugin) {
  if (plugin == kAWSEBSInTree) return "attachable-volumes-aws-ebs";
  if (plugin == kGCEPDInTree) return "attachable-volumes-gce-pd";
  if (plugin == kAzureDiskInTree) return "attachable-volumes-azure-disk";
  if (plugin == kCinderInTree) return "attachable-volumes-cinder";
  return "";
}

std::string CSIAttachLimitKey(const std::string& driver) {
  static const std::string kPrefix = "attachable-volumes-csi-";
  constexpr size_t kResourceNameLengthLimit = 63;
  if (kPrefix.size() + driver.size() >= kResourceNameLengthLimit) {
    return kPrefix + driver.substr(0, 23) + Sha1Hex(driver).substr(0, 16);
  }
  return kPrefix + driver;
}

std::string Sha1Hex(const std::string& data) {
  std::array<uint32_t, 5> h = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
  std::string msg = data;
  const uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56) msg.push_back('\0');
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>((bits >> (i * 8)) & 0xff));
  auto rotl = [](uint32_t x, int n) { return (x << n) | (x >> (32 - n)); };
  for (size_t off = 0; off < msg.size(); off += 64) {
    std::array<uint32_t, 80> w{};
    for (int i = 0; i < 16; ++i) {
      w[i] = 0;
      for (int j = 0; j < 4; ++j) {
        w[i] = (w[i] << 8) | static_cast<uint8_t>(msg[off + i * 4 + j]);
      }
    }
    for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f = 0, k = 0;
      if (i < 20) {
        f = (b & c) | (~b & d), k = 0x5A827999u;
      } else if (i < 40) {
        f = b ^ c ^ d, k = 0x6ED9EBA1u;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDCu;
      } else {
        f = b ^ c ^ d, k = 0xCA62C1D6u;
      }
      const uint32_t t = rotl(a, 5) + f + e + k + w[i];
      e = d, d = c, c = rotl(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (uint32_t v : h) {
    for (int i = 28; i >= 0; i -= 4) out.push_back(kHex[(v >> i) & 0xf]);
  }
  return out;
}

}  // namespace phalanx::plugins::nodevolumelimits
