#include "api/volume_source.h"

#include <yaml-cpp/yaml.h>

#include <limits>
#include <string>
#include <utility>

namespace phalanx::api {

namespace {

bool IsPresent(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

// n[key], or an undefined node when n is not a map or has no such key (never yaml-cpp's
// invalid "zombie" node, whose type queries throw).
YAML::Node Field(const YAML::Node& n, const char* key) {
  if (!n.IsDefined() || !n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node& m = n;
  const YAML::Node v = m[key];
  return v.IsDefined() ? v : YAML::Node(YAML::NodeType::Undefined);
}

// Reads the fields of one source object, keeping the first error.
class SourceReader {
 public:
  SourceReader(const YAML::Node& src, std::string path) : src_(src), path_(std::move(path)) {}
  const std::string& error() const { return err_; }
  bool ok() const { return err_.empty(); }

  bool Map() {
    if (src_.IsMap()) return true;
    return Fail(path_, "Invalid value: must be an object");
  }
  // A string field; `required` makes absence (or "") an error.
  void Str(const char* key, bool required, std::string* out) {
    const YAML::Node n = Field(src_, key);
    if (IsPresent(n)) {
      if (!n.IsScalar()) {
        Fail(path_ + "." + key, "Invalid value: must be a string");
        return;
      }
      *out = n.Scalar();
    }
    if (required && out->empty()) Fail(path_ + "." + key, "Required value");
  }
  void Bool(const char* key, bool* out) {
    const YAML::Node n = Field(src_, key);
    if (!IsPresent(n)) return;
    if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false")) {
      Fail(path_ + "." + key,
           "Invalid value: " + (n.IsScalar() ? "\"" + n.Scalar() + "\"" : std::string("object")) +
               ": must be true or false");
      return;
    }
    *out = n.Scalar() == "true";
  }
  void Int32(const char* key, int32_t lo, int32_t hi, int32_t* out) {
    const YAML::Node n = Field(src_, key);
    if (!IsPresent(n)) return;
    long long v = 0;
    size_t used = 0;
    bool parsed = false;
    if (n.IsScalar() && !n.Scalar().empty()) {
      try {
        v = std::stoll(n.Scalar(), &used, 10);
        parsed = used == n.Scalar().size();
      } catch (...) {
        parsed = false;
      }
    }
    if (!parsed) {
      Fail(path_ + "." + key, "Invalid value: must be an integer");
      return;
    }
    if (v < lo || v > hi) {
      Fail(path_ + "." + key, "Invalid value: " + n.Scalar() + ": must be between " +
                                  std::to_string(lo) + " and " + std::to_string(hi) +
                                  ", inclusive");
      return;
    }
    *out = static_cast<int32_t>(v);
  }
  void StrList(const char* key, bool required, std::vector<std::string>* out) {
    const YAML::Node n = Field(src_, key);
    if (IsPresent(n)) {
      if (!n.IsSequence()) {
        Fail(path_ + "." + key, "Invalid value: must be a list of strings");
        return;
      }
      for (size_t i = 0; i < n.size(); ++i) {
        if (!n[i].IsScalar()) {
          Fail(path_ + "." + key + "[" + std::to_string(i) + "]",
               "Invalid value: must be a string");
          return;
        }
        out->push_back(n[i].Scalar());
      }
    }
    if (required && out->empty()) Fail(path_ + "." + key, "Required value");
  }

 private:
  bool Fail(const std::string& field, const std::string& cause) {
    if (err_.empty()) err_ = field + ": " + cause;
    return false;
  }
  const YAML::Node& src_;
  std::string path_;
  std::string err_;
};

using Type = VolumeSource::Type;

// OK for an empty reader error, else InvalidArgument with it.
Status ReaderStatus(const std::string& error) {
  return error.empty() ? absl::OkStatus() : absl::InvalidArgumentError(error);
}

// Reads one present source of type `t` from `src` into *out: OK, or InvalidArgument with
// the first field error.
Status ReadSource(Type t, const YAML::Node& src, const std::string& path, bool persistent,
                  VolumeSource* out) {
  SourceReader r(src, path);
  if (!r.Map()) return ReaderStatus(r.error());
  out->type = t;
  switch (t) {
    case Type::kAWSElasticBlockStore:
      r.Str("volumeID", true, &out->id);
      break;
    case Type::kGCEPersistentDisk:
      r.Str("pdName", true, &out->id);
      break;
    case Type::kAzureDisk:
      r.Str("diskName", true, &out->disk_name);
      r.Str("diskURI", true, &out->id);
      break;
    case Type::kCinder:
      r.Str("volumeID", true, &out->id);
      break;
    case Type::kRBD:
      r.StrList("monitors", true, &out->monitors);
      r.Str("image", true, &out->id);
      r.Str("pool", false, &out->pool);
      if (out->pool.empty()) out->pool = "rbd";  // SetDefaults_RBDVolumeSource
      break;
    case Type::kISCSI:
      r.Str("targetPortal", true, &out->target_portal);
      r.Str("iqn", true, &out->id);
      r.Int32("lun", 0, 255, &out->lun);
      break;
    case Type::kCSI:
      r.Str("driver", true, &out->driver);
      if (persistent) r.Str("volumeHandle", true, &out->id);
      break;
    case Type::kOther:
      break;
  }
  r.Bool("readOnly", &out->read_only);
  return ReaderStatus(r.error());
}

}  // namespace

Status DecodeVolumeSource(const YAML::Node& n, const std::string& path, bool persistent,
                          VolumeSource* out) {
  static constexpr std::pair<const char*, Type> kSources[] = {
      {"awsElasticBlockStore", Type::kAWSElasticBlockStore},
      {"gcePersistentDisk", Type::kGCEPersistentDisk},
      {"azureDisk", Type::kAzureDisk},
      {"cinder", Type::kCinder},
      {"rbd", Type::kRBD},
      {"iscsi", Type::kISCSI},
      {"csi", Type::kCSI},
  };
  *out = VolumeSource{};
  const char* found = nullptr;
  for (const auto& [key, type] : kSources) {
    const YAML::Node src = Field(n, key);
    if (!IsPresent(src)) continue;
    if (found) {
      return absl::InvalidArgumentError(path + "." + key +
                                        ": Forbidden: may not specify more than 1 volume type (" +
                                        found + " is set)");
    }
    found = key;
    if (Status s = ReadSource(type, src, path + "." + key, persistent, out); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace phalanx::api
