#include "quota/device_charge.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "dra/dra_manager.h"
#include "gpu/device.h"

namespace phalanx::quota {

namespace {

bool NameHasGpu(const std::string& s) {
  std::string l(s);
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  return l.find("gpu") != std::string::npos;
}

// The RequestSpec of `spec` a result's request name ("req" or "req/sub") names.
const dra::RequestSpec* SpecOf(const dra::ClaimSpec& spec, const std::string& name) {
  for (const auto& r : spec.requests) {
    if (r.exactly && r.exactly->name == name) return &*r.exactly;
    if (r.exactly && r.name == name) return &*r.exactly;
    for (const auto& sub : r.first_available) {
      if (sub.name == name) return &sub;
    }
  }
  return nullptr;
}

void ChargeClass(const std::string& cls, int64_t n, const DeviceClassMapper& mapper,
                 ResourceList* out, std::set<std::string>* unmapped) {
  if (cls.empty() || n <= 0) return;
  (*out)[kDeviceClassCountPrefix + cls] += n;
  const std::string mapped = mapper.MappedName(cls);
  if (!mapped.empty()) {
    (*out)[mapped] += n;
  } else if (unmapped) {
    unmapped->insert(cls);
  }
}

}  // namespace

DeviceClassMapper::DeviceClassMapper(const std::vector<DeviceClassMapping>& mappings)
    : mappings_(mappings) {
  for (const auto& m : mappings_) {
    for (const auto& c : m.device_class_names) by_class_.emplace(c, m.name);
  }
}

std::string DeviceClassMapper::MappedName(const std::string& device_class) const {
  auto it = by_class_.find(device_class);
  if (it != by_class_.end()) return it->second;
  return NameHasGpu(device_class) ? kGpuQuotaResource : "";
}

std::vector<std::string> ValidateDeviceClassMappings(const std::vector<DeviceClassMapping>& m,
                                                     const std::string& path) {
  std::vector<std::string> errs;
  if (m.size() > 16) {
    errs.push_back(path + ": Too many: " + std::to_string(m.size()) +
                   ": must have at most 16 items");
  }
  std::set<std::string> names;
  std::map<std::string, std::string> class_to;
  for (size_t i = 0; i < m.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    if (m[i].name.empty()) {
      errs.push_back(p + ".name: Required value");
    } else if (!names.insert(m[i].name).second) {
      errs.push_back(p + ".name: Duplicate value: \"" + m[i].name + "\"");
    }
    if (m[i].device_class_names.empty()) {
      errs.push_back(p +
                     ".deviceClassNames: Required value: at least one device class name "
                     "is required");
    }
    if (m[i].device_class_names.size() > 8) {
      errs.push_back(
          p + ".deviceClassNames: Too many: " + std::to_string(m[i].device_class_names.size()) +
          ": must have at most 8 items");
    }
    for (size_t j = 0; j < m[i].device_class_names.size(); ++j) {
      const std::string& c = m[i].device_class_names[j];
      const std::string cp = p + ".deviceClassNames[" + std::to_string(j) + "]";
      if (c.empty()) {
        errs.push_back(cp + ": Required value");
        continue;
      }
      auto [it, fresh] = class_to.emplace(c, m[i].name);
      if (!fresh) {
        errs.push_back(cp + ": Invalid value: \"" + c + "\": device class already mapped to " +
                       "resource " + it->second);
      }
    }
  }
  return errs;
}

ResourceList ClaimCharge(const dra::ClaimSpec& spec, const dra::AllocationResult* allocation,
                         const DeviceClassMapper& mapper, std::set<std::string>* unmapped,
                         std::vector<std::string>* all_mode) {
  ResourceList out;
  if (allocation) {
    // The devices allocated, each of the class of the (sub)request it satisfies.
    for (const auto& d : allocation->devices) {
      if (d.admin_access) continue;
      const dra::RequestSpec* rs = SpecOf(spec, d.request);
      if (rs && !rs->admin_access) ChargeClass(rs->device_class_name, 1, mapper, &out, unmapped);
    }
    return out;
  }
  for (const auto& r : spec.requests) {
    const dra::RequestSpec* rs =
        r.exactly ? &*r.exactly : (r.first_available.empty() ? nullptr : &r.first_available[0]);
    if (!rs || rs->admin_access) continue;
    int64_t n = rs->count > 0 ? rs->count : 1;
    if (rs->all) {
      n = 1;
      if (all_mode)
        all_mode->push_back("request " + r.name + " (class " + rs->device_class_name + ")");
    }
    ChargeClass(rs->device_class_name, n, mapper, &out, unmapped);
  }
  return out;
}

DeviceCharge PodDeviceCharge(const dra::DefaultDRAManager& m, const api::Pod& pod,
                             const DeviceClassMapper& mapper) {
  DeviceCharge out;
  if (pod.spec.resource_claims.empty()) return out;
  const std::string& ns = pod.metadata.namespace_;
  std::shared_ptr<const dra::PodGroupClaims> group;
  const std::string& pg = pod.spec.scheduling_group_pod_group_name;
  if (!pg.empty()) {
    auto g = m.PodGroupClaimsOf(ns, pg);
    if (g.ok()) group = *g;
  }
  for (const auto& pc : pod.spec.resource_claims) {
    const dra::PodGroupResourceClaim* group_claim = group ? group->Match(pc) : nullptr;
    std::string name = pc.resource_claim_name;
    const bool shared = !name.empty() || group_claim != nullptr;
    bool none_needed = false;
    if (name.empty()) {
      for (const auto& s : pod.status.resource_claim_statuses) {
        if (s.name == pc.name) {
          name = s.resource_claim_name;
          none_needed = name.empty();
        }
      }
      if (name.empty() && !none_needed && group_claim) {
        auto it = group->statuses.find(pc.name);
        if (it != group->statuses.end()) {
          name = it->second;
          none_needed = name.empty();
        }
      }
    }
    if (none_needed) continue;
    const std::string id = !pc.resource_claim_name.empty() ? ns + "/" + pc.resource_claim_name
                           : group_claim
                               ? "PodGroup " + ns + "/" + pg + " resourceClaims[" + pc.name + "]"
                               : "";
    std::set<std::string> unmapped;
    std::vector<std::string> all_mode;
    ResourceList charge;
    std::string what;
    const dra::ClaimSpec* spec = nullptr;
    std::shared_ptr<const dra::ResourceClaim> claim_ptr;
    std::optional<dra::ResourceClaimTemplate> tmpl;
    if (!name.empty()) {
      auto c = m.GetClaim(ns, name);
      if (c.ok()) {
        claim_ptr = *c;
        spec = &claim_ptr->spec;
        charge = ClaimCharge(*spec, claim_ptr->allocation ? &*claim_ptr->allocation : nullptr,
                             mapper, &unmapped, &all_mode);
        what = "claim " + ns + "/" + name;
      }
    }
    if (!spec && !pc.resource_claim_template_name.empty() && pc.resource_claim_name.empty()) {
      auto t = m.GetTemplate(ns, pc.resource_claim_template_name);
      if (t.ok()) {
        tmpl = std::move(*t);
        spec = &tmpl->spec;
        charge = ClaimCharge(*spec, nullptr, mapper, &unmapped, &all_mode);
        what = "ResourceClaimTemplate " + ns + "/" + pc.resource_claim_template_name;
      }
    }
    if (!spec) continue;
    // Consumable capacity (KEP-5075): a request for part of a device is counted as the
    // device; what part of it the share is depends on the device's capacity, which neither
    // Kueue's deviceClassMappings nor the claim carries.
    for (const auto& r : spec->requests) {
      for (const auto* rs : r.Specs()) {
        if (rs->capacity_requests.empty() || mapper.MappedName(rs->device_class_name).empty()) {
          continue;
        }
        out.notes.push_back(what + " request " + rs->name + " (class " + rs->device_class_name +
                            "): capacity.requests: a share of a device is charged to the queue "
                            "as the whole device");
        break;
      }
    }
    for (const auto& c : unmapped) out.unmapped.emplace(c, what);
    for (const auto& a : all_mode) {
      out.notes.push_back(what + " " + a +
                          ": allocationMode All is charged as 1 device until allocated, then "
                          "as the devices allocated");
    }
    if (shared) {
      ResourceList& s = out.shared[id];
      for (const auto& [r, v] : charge) s[r] += v;
    } else {
      for (const auto& [r, v] : charge) out.own[r] += v;
    }
  }
  return out;
}

ResourceList DeviceCapacity(const dra::DefaultDRAManager& m, const DeviceClassMapper& mapper) {
  ResourceList out;
  const auto classes = m.Classes();
  if (!classes || classes->empty()) return out;
  for (const auto& slice : m.Slices()) {
    for (const auto& d : slice->devices) {
      std::set<std::string> names;
      for (const auto& [cname, cls] : *classes) {
        bool match = true;
        for (const auto& sel : cls.selectors) {
          auto r = sel.Matches(d.prepared);
          if (!r.ok() || !*r) {
            match = false;
            break;
          }
        }
        if (!match) continue;
        names.insert(kDeviceClassCountPrefix + cname);
        if (std::string mapped = mapper.MappedName(cname); !mapped.empty()) names.insert(mapped);
      }
      for (const auto& n : names) out[n] += 1;
    }
  }
  return out;
}

int64_t GpuShareMilli(const api::Pod& pod, std::string* note) {
  const gpu::GpuAsk ask = gpu::ParseGpuAsk(pod);
  if (!ask.error.empty() || !ask.has_gpu()) return 0;
  switch (ask.source) {
    case gpu::AskSource::kAlibaba:
    case gpu::AskSource::kKaiFraction:
      return int64_t{ask.count} * ask.milli;
    case gpu::AskSource::kKaiMemory:
      if (note) {
        *note = std::string("annotation ") + gpu::kKaiMemoryAnnotation + ": a GPU share by " +
                "device memory is not charged to the queue (its fraction depends on the " +
                "node's GPUs); use " + gpu::kKaiFractionAnnotation;
      }
      return 0;
    default:
      return 0;
  }
}

ResourceList FoldGpuShares(const ResourceList& l) {
  auto it = l.find(kGpuShareMilli);
  if (it == l.end()) return l;
  ResourceList out = l;
  out.erase(kGpuShareMilli);
  if (it->second > 0) out[kGpuQuotaResource] += (it->second + 999) / 1000;
  return out;
}

int64_t GpuMilli(const ResourceList& l) {
  int64_t m = 0;
  if (auto it = l.find(kGpuQuotaResource); it != l.end()) m += it->second * 1000;
  if (auto it = l.find(kGpuShareMilli); it != l.end()) m += it->second;
  return m;
}

std::string FormatGpuMilli(int64_t milli) {
  std::string s = std::to_string(milli / 1000);
  if (int64_t f = milli % 1000; f != 0) {
    std::string frac = std::to_string(f < 0 ? -f : f);
    frac = std::string(3 - frac.size(), '0') + frac;
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    s += "." + frac;
  }
  return s + " " + kGpuQuotaResource;
}

}  // namespace phalanx::quota
