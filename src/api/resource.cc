// Resource vectors and the scalar-resource intern table (see resource.h).
#include "api/resource.h"

#include <algorithm>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace phalanx::api {
namespace {

// Process-wide table. Names live in a deque (stable addresses); the map's keys view them.
// Lookups take mu shared, insertions exclusive.
struct InternTable {
  absl::Mutex mu;
  std::deque<std::string> names ABSL_GUARDED_BY(mu);
  std::unordered_map<std::string_view, ResourceId> by_name ABSL_GUARDED_BY(mu);
};

InternTable& Table() {
  static InternTable* table = new InternTable();  // never destroyed: safe at exit
  return *table;
}

// Lower bound of id in a vector sorted by id.
auto FindSlot(std::vector<std::pair<ResourceId, int64_t>>& v, ResourceId id) {
  return std::lower_bound(v.begin(), v.end(), id,
                          [](const auto& e, ResourceId x) { return e.first < x; });
}

// Applies f(current, other) for every scalar of `other`, inserting missing ids (as 0).
template <typename F>
void MergeScalars(std::vector<std::pair<ResourceId, int64_t>>& dst,
                  const std::vector<std::pair<ResourceId, int64_t>>& src, F f) {
  for (const auto& [id, v] : src) {
    auto it = FindSlot(dst, id);
    if (it != dst.end() && it->first == id) {
      it->second = f(it->second, v);
    } else {
      dst.insert(it, {id, f(0, v)});
    }
  }
}

}  // namespace

ResourceId InternScalarResource(std::string_view name) {
  InternTable& t = Table();
  {
    absl::ReaderMutexLock lock(&t.mu);
    auto it = t.by_name.find(name);
    if (it != t.by_name.end()) return it->second;
  }
  absl::MutexLock lock(&t.mu);
  auto it = t.by_name.find(name);
  if (it != t.by_name.end()) return it->second;
  const auto id = static_cast<ResourceId>(t.names.size());
  const std::string& stored = t.names.emplace_back(name);
  t.by_name.emplace(std::string_view(stored), id);
  return id;
}

const std::string& ScalarResourceName(ResourceId id) {
  InternTable& t = Table();
  absl::ReaderMutexLock lock(&t.mu);
  return t.names.at(static_cast<size_t>(id));  // element addresses are stable in a deque
}

// Upstream (pkg/scheduler/util IsScalarResourceName) accepts extended resources (a domain
// other than kubernetes.io), hugepages-*, attachable-volumes-* and prefixed native names.
// We are deliberately lenient: every non-empty name other than the four first-class ones
// is scalar, so that unknown native names are still accounted for rather than dropped.
bool IsScalarResourceName(std::string_view name) {
  return !name.empty() && name != kResourceCPU && name != kResourceMemory &&
         name != kResourceEphemeralStorage && name != kResourcePods;
}

void Resource::SetScalar(ResourceId id, int64_t value) {
  auto it = FindSlot(scalar, id);
  if (it != scalar.end() && it->first == id) {
    it->second = value;
  } else {
    scalar.insert(it, {id, value});
  }
}

void Resource::AddScalar(ResourceId id, int64_t value) {
  auto it = FindSlot(scalar, id);
  if (it != scalar.end() && it->first == id) {
    it->second += value;
  } else {
    scalar.insert(it, {id, value});
  }
}

void Resource::Add(const Resource& other) {
  milli_cpu += other.milli_cpu;
  memory += other.memory;
  ephemeral_storage += other.ephemeral_storage;
  allowed_pod_number += other.allowed_pod_number;
  MergeScalars(scalar, other.scalar, [](int64_t a, int64_t b) { return a + b; });
}

void Resource::Subtract(const Resource& other) {
  milli_cpu -= other.milli_cpu;
  memory -= other.memory;
  ephemeral_storage -= other.ephemeral_storage;
  allowed_pod_number -= other.allowed_pod_number;
  MergeScalars(scalar, other.scalar, [](int64_t a, int64_t b) { return a - b; });
}

void Resource::SetMax(const Resource& other) {
  milli_cpu = std::max(milli_cpu, other.milli_cpu);
  memory = std::max(memory, other.memory);
  ephemeral_storage = std::max(ephemeral_storage, other.ephemeral_storage);
  allowed_pod_number = std::max(allowed_pod_number, other.allowed_pod_number);
  MergeScalars(scalar, other.scalar, [](int64_t a, int64_t b) { return std::max(a, b); });
}

bool Resource::IsZero() const {
  if (milli_cpu != 0 || memory != 0 || ephemeral_storage != 0 || allowed_pod_number != 0) {
    return false;
  }
  return std::all_of(scalar.begin(), scalar.end(), [](const auto& e) { return e.second == 0; });
}

int64_t Resource::Get(std::string_view name) const {
  if (name == kResourceCPU) return milli_cpu;
  if (name == kResourceMemory) return memory;
  if (name == kResourceEphemeralStorage) return ephemeral_storage;
  if (name == kResourcePods) return allowed_pod_number;
  // Look up without interning, so that queries for unknown names do not grow the table.
  InternTable& t = Table();
  ResourceId id = -1;
  {
    absl::ReaderMutexLock lock(&t.mu);
    auto it = t.by_name.find(name);
    if (it == t.by_name.end()) return 0;
    id = it->second;
  }
  return Scalar(id);
}

}  // namespace phalanx::api
