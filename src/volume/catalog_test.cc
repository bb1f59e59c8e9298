// Table tests of the volume binder's model (volume/catalog.h), ported from upstream:
//   - k8s.io/component-helpers/storage/volume/pv_helpers_test.go TestFindMatchVolumeWithNode
//     (FindMatchingVolume);
//   - pkg/scheduler/framework/plugins/volumebinding/binder_test.go TestAssumePodVolumes,
//     TestRevertAssumedPodVolumes and TestCheckBindings (Catalog::Assume, Revert,
//     BindingsComplete);
// and the objects' strict decoding (volume/objects.h), cases of our own naming the rule.
#include "volume/catalog.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "api/decode.h"
#include "testing/builders.h"

namespace phalanx::volume {
namespace {

std::vector<api::UnstructuredPtr> Objects(const std::string& yaml) {
  api::Manifests m;
  const api::Status s = api::DecodeManifests(yaml, "case.yaml", &m);
  EXPECT_TRUE(s.ok()) << s.message();
  std::vector<api::UnstructuredPtr> out;
  for (auto& o : m.objects) out.push_back(std::make_shared<api::Unstructured>(std::move(o)));
  return out;
}

// Adds every object of `yaml`; each must decode (OK).
void Load(Catalog& c, const std::string& yaml) {
  for (const auto& o : Objects(yaml)) {
    EXPECT_TRUE(c.OnObjectAdd(o).ok()) << o->metadata.name;
  }
}

// Catalog::Assume's outcome as its message ("" for OK); a failure must be
// FailedPrecondition.
std::string AssumeMessage(Catalog& cat, const std::string& pod_uid, const PodVolumes& vols) {
  const api::Status s = cat.Assume(pod_uid, vols);
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  return std::string(s.message());
}

// pv_helpers_test.go makeTestVolume: a Local volume of `capacity`, RWO + ROX, Filesystem,
// phase Available unless `available` is false.
std::string PV(const std::string& name, const std::string& capacity, bool available,
               const std::string& spec_extra) {
  return "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: " + name +
         "}\nspec:\n  capacity: {storage: " + capacity +
         "}\n  accessModes: [ReadWriteOnce, ReadOnlyMany]\n  volumeMode: Filesystem\n"
         "  local: {path: /mnt/disk}\n" +
         spec_extra + (available ? "status: {phase: Available}\n" : "status: {phase: Pending}\n") +
         "---\n";
}
std::string Affinity(const std::string& value) {
  return "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: key1, "
         "operator: In, values: [" +
         value + "]}]}]}}\n";
}

// makeTestPersistentVolumeClaim: class "wait", Filesystem, in namespace myns.
PersistentVolumeClaim Claim(const std::string& name, int64_t bytes,
                            std::vector<std::string> modes) {
  PersistentVolumeClaim c;
  c.namespace_ = "myns";
  c.name = name;
  c.storage_class = "wait";
  c.request = bytes;
  c.access_modes = std::move(modes);
  return c;
}

api::Node NodeWith(const std::string& value) {
  api::Node n = phalanx::testing::NodeBuilder("node-" + value).Obj();
  n.metadata.labels["key1"] = value;
  return n;
}

// TestFindMatchVolumeWithNode. Differences in the fixtures, not the expectations: upstream's
// affinity-pv4 has no status (an empty phase, not Available); an unset phase counts as
// Available here (manifests carry no status), so the port gives it phase Pending. Upstream
// names two PVs "affinity003" (PVs are told apart by UID there); the catalog keys PVs by
// name, so affinity-pv3 is "affinity003b". Upstream's "local-pd-very-large" (200E, class
// large) is left out: 200E bytes exceed the int64 capacity this model keeps, and its class
// matches no claim of the table.
TEST(VolumeFindMatchingVolume, WithNode) {
  Catalog cat;
  Load(cat,
       PV("local001", "5G", true, "") +
           PV("affinity001", "100G", true, "  storageClassName: wait\n" + Affinity("value1")) +
           PV("affinity002", "150G", true, "  storageClassName: wait\n" + Affinity("value1")) +
           PV("affinity003", "100G", true,
              "  storageClassName: wait\n  claimRef: {name: claim02, namespace: myns}\n" +
                  Affinity("value1")) +
           PV("affinity003b", "200G", true, "  storageClassName: wait\n" + Affinity("value3")) +
           PV("affinity004", "200G", false, "  storageClassName: wait\n" + Affinity("value4")));
  const ViewPtr v = cat.Snapshot();
  const int64_t g100 = 100LL * 1000 * 1000 * 1000;
  struct Case {
    const char* name;
    std::string expected;  // PV name, "" = none
    PersistentVolumeClaim claim;
    api::Node node;
    std::set<std::string> excluded;
  };
  const std::vector<Case> cases = {
      {"success-match", "affinity001", Claim("claim01", g100, {"ReadWriteOnce"}),
       NodeWith("value1")},
      {"success-prebound", "affinity003", Claim("claim02", g100, {"ReadWriteOnce"}),
       NodeWith("value1")},
      {"success-exclusion",
       "affinity002",
       Claim("claim01", g100, {"ReadWriteOnce"}),
       NodeWith("value1"),
       {"affinity001"}},
      {"fail-exclusion",
       "",
       Claim("claim01", g100, {"ReadWriteOnce"}),
       NodeWith("value1"),
       {"affinity001", "affinity002"}},
      {"fail-accessmode", "", Claim("claim01", g100, {"ReadWriteMany"}), NodeWith("value1")},
      {"fail-nodeaffinity", "", Claim("claim01", g100, {"ReadWriteOnce"}), NodeWith("value2")},
      {"fail-prebound-node-affinity", "", Claim("claim02", g100, {"ReadWriteOnce"}),
       NodeWith("value3")},
      {"fail-nonavaliable", "", Claim("claim04", g100, {"ReadWriteOnce"}), NodeWith("value4")},
      {"success-bad-and-good-node-affinity", "affinity003b",
       Claim("claim03", g100, {"ReadWriteOnce"}), NodeWith("value3")},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const PVPtr got = FindMatchingVolume(*v, c.claim, &c.node, c.excluded);
    EXPECT_EQ(got ? got->name : "", c.expected);
  }
  // The smallest PV that fits wins (affinity001 100G before affinity002 150G), whatever the
  // order of the objects; without a node, node affinity is not checked.
  const PVPtr any = FindMatchingVolume(*v, Claim("claim01", g100, {"ReadWriteOnce"}), nullptr, {});
  ASSERT_NE(any, nullptr);
  EXPECT_EQ(any->name, "affinity001");
}

// The claim's other fields that decide a match (pvutil.FindMatchingVolume): volumeMode,
// volumeAttributesClassName, the label selector, a PV being deleted.
TEST(VolumeFindMatchingVolume, ClaimFields) {
  Catalog cat;
  Load(cat,
       "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: block, labels: {tier: fast}}\n"
       "spec: {capacity: {storage: 10G}, accessModes: [ReadWriteOnce], volumeMode: Block, "
       "storageClassName: wait, local: {path: /d}}\n---\n"
       "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: gold}\n"
       "spec: {capacity: {storage: 10G}, accessModes: [ReadWriteOnce], storageClassName: wait, "
       "volumeAttributesClassName: gold, local: {path: /d}}\n---\n"
       "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: gone, deletionTimestamp: "
       "\"2024-01-01T00:00:00Z\"}\n"
       "spec: {capacity: {storage: 1G}, accessModes: [ReadWriteOnce], storageClassName: wait, "
       "local: {path: /d}}\n---\n"
       "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: plain, labels: {tier: slow}}\n"
       "spec: {capacity: {storage: 20G}, accessModes: [ReadWriteOnce], storageClassName: wait, "
       "local: {path: /d}}\n");
  const ViewPtr v = cat.Snapshot();
  const auto match = [&](PersistentVolumeClaim c) {
    const PVPtr pv = FindMatchingVolume(*v, c, nullptr, {});
    return pv ? pv->name : std::string();
  };
  PersistentVolumeClaim c = Claim("c", 1, {"ReadWriteOnce"});
  EXPECT_EQ(match(c), "plain");  // "gone" (smaller) is being deleted; block / gold do not fit
  c.volume_mode = "Block";
  EXPECT_EQ(match(c), "block");
  c.volume_mode = "Filesystem";
  c.volume_attributes_class = "gold";
  EXPECT_EQ(match(c), "gold");
  c.volume_attributes_class = "";
  c.selector = api::LabelSelector{};
  c.selector->match_labels["tier"] = "fast";
  EXPECT_EQ(match(c), "");  // the fast PV is Block
  c.selector->match_labels["tier"] = "slow";
  EXPECT_EQ(match(c), "plain");
  c.storage_class = "other";
  c.selector.reset();
  EXPECT_EQ(match(c), "");
}

std::string ClaimYaml(const std::string& name, const std::string& volume,
                      bool bind_completed = false) {
  return "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " + name +
         ", namespace: testns, uid: uid-" + name +
         (bind_completed ? ", annotations: {pv.kubernetes.io/bind-completed: \"yes\"}" : "") +
         "}\nspec: {accessModes: [ReadWriteOnce], storageClassName: wait, resources: "
         "{requests: {storage: 1G}}" +
         (volume.empty() ? "" : ", volumeName: " + volume) + "}\n---\n";
}

// binder_test.go's fixtures: claims in testns, class wait; pv-node1a (5G) and pv-node1b
// (10G) on node1.
std::string Fixtures() {
  return "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-node1a}\nspec: {capacity: "
         "{storage: 5G}, accessModes: [ReadWriteOnce], storageClassName: wait, local: {path: "
         "/a}}\n---\n"
         "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-node1b}\nspec: {capacity: "
         "{storage: 10G}, accessModes: [ReadWriteOnce], storageClassName: wait, local: {path: "
         "/b}}\n---\n"
         "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-node1a-bound}\nspec: "
         "{capacity: {storage: 5G}, accessModes: [ReadWriteOnce], storageClassName: wait, "
         "claimRef: {namespace: testns, name: unbound-pvc, uid: u1}, local: {path: /c}}\n---\n" +
         ClaimYaml("unbound-pvc", "") + ClaimYaml("unbound-pvc2", "") +
         ClaimYaml("provisioned-pvc", "");
}
// TestAssumePodVolumes. Not ported: "all-bound" (a pod whose claims are all bound has no
// PodVolumes to assume: VolumeBinding skips Assume) and "one-binding,
// one-provision-tmpupdate-failed" (a newer resourceVersion in the assume cache; the catalog
// keeps no versions of its own).
TEST(VolumeCatalog, Assume) {
  struct Case {
    const char* name;
    PodVolumes vols;
    std::string error;  // "" = assumed
  };
  const std::vector<Case> cases = {
      {"one-binding", {"node1", {{"testns/unbound-pvc", "pv-node1a"}}, {}}, ""},
      {"two-bindings",
       {"node1", {{"testns/unbound-pvc", "pv-node1a"}, {"testns/unbound-pvc2", "pv-node1b"}}, {}},
       ""},
      {"pv-already-bound", {"node1", {{"testns/unbound-pvc", "pv-node1a-bound"}}, {}}, ""},
      {"tmpupdate-failed",
       {"node1", {{"testns/unbound-pvc", "pv-node1a"}, {"testns/unbound-pvc2", "pv-missing"}}, {}},
       "persistentvolume \"pv-missing\" not found"},
      {"one-binding, one-pvc-provisioned",
       {"node1", {{"testns/unbound-pvc", "pv-node1a"}}, {"testns/provisioned-pvc"}},
       ""},
      // Ours: a PV bound to another claim, or assumed for one, is not taken.
      {"pv bound to another claim",
       {"node1", {{"testns/unbound-pvc2", "pv-node1a-bound"}}, {}},
       "persistentvolume \"pv-node1a-bound\" is bound to claim \"testns/unbound-pvc\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Catalog cat;
    Load(cat, Fixtures());
    EXPECT_EQ(AssumeMessage(cat, "test-pod", c.vols), c.error);
    const ViewPtr v = cat.Snapshot();
    for (const auto& b : c.vols.static_bindings) {
      const PVPtr pv = v->PV(b.pv);
      if (!c.error.empty()) {
        // validateCacheRestored: nothing assumed.
        if (pv && b.pv != "pv-node1a-bound") {
          EXPECT_FALSE(pv->claim_ref.has_value()) << b.pv;
        }
        continue;
      }
      ASSERT_NE(pv, nullptr);
      ASSERT_TRUE(pv->claim_ref.has_value()) << b.pv;
      EXPECT_EQ(pv->claim_ref->Key(), b.claim);
      EXPECT_EQ(pv->phase, "Bound");
    }
    for (const auto& claim : c.vols.provisions) {
      const PVCPtr pvc = v->PVC(claim);
      ASSERT_NE(pvc, nullptr);
      const auto it = pvc->annotations.find(kAnnSelectedNode);
      if (c.error.empty()) {
        ASSERT_NE(it, pvc->annotations.end());
        EXPECT_EQ(it->second, "node1");
      } else {
        EXPECT_EQ(it, pvc->annotations.end());
      }
    }
  }
  // A PV assumed for one pod's claim is not assumed again for another claim.
  Catalog cat;
  Load(cat, Fixtures());
  ASSERT_EQ(AssumeMessage(cat, "pod-a", {"node1", {{"testns/unbound-pvc", "pv-node1a"}}, {}}), "");
  EXPECT_EQ(AssumeMessage(cat, "pod-b", {"node1", {{"testns/unbound-pvc2", "pv-node1a"}}, {}}),
            "persistentvolume \"pv-node1a\" was assumed for claim \"testns/unbound-pvc\"");
}

// TestRevertAssumedPodVolumes: Revert restores the catalog (validateCacheRestored).
TEST(VolumeCatalog, Revert) {
  Catalog cat;
  Load(cat, Fixtures());
  const PodVolumes vols{"node1", {{"testns/unbound-pvc", "pv-node1a"}}, {"testns/provisioned-pvc"}};
  ASSERT_EQ(AssumeMessage(cat, "test-pod", vols), "");
  ViewPtr v = cat.Snapshot();
  EXPECT_TRUE(v->PV("pv-node1a")->claim_ref.has_value());
  EXPECT_TRUE(v->PVC("testns/provisioned-pvc")->annotations.count(kAnnSelectedNode));
  cat.Revert("test-pod");
  v = cat.Snapshot();
  EXPECT_FALSE(v->PV("pv-node1a")->claim_ref.has_value());
  EXPECT_FALSE(v->PVC("testns/provisioned-pvc")->annotations.count(kAnnSelectedNode));
  cat.Revert("test-pod");  // no-op
  // The PV is free again for another pod.
  EXPECT_EQ(AssumeMessage(cat, "other", {"node1", {{"testns/unbound-pvc2", "pv-node1a"}}, {}}), "");
}

// TestCheckBindings: whether the PV controller finished the pod's bindings. Not ported:
// "nothing-to-bind-nil" / "-bindings-nil" / "-provisionings-nil" (nil lists; PodVolumes
// has none), "binding-claimref-nil", "binding-claimref-uid-empty" and
// "provisioning-pvc-selected-node-*" (upstream compares the objects its own bindAPIUpdate
// wrote; here completion is read from the claims the PV controller updates).
TEST(VolumeCatalog, BindingsComplete) {
  struct Case {
    const char* name;
    std::string objects;
    PodVolumes vols;
    bool bound;
    std::string error;
  };
  const std::string pv_a =
      "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-node1a}\nspec: {capacity: "
      "{storage: 5G}, accessModes: [ReadWriteOnce], storageClassName: wait, claimRef: "
      "{namespace: testns, name: unbound-pvc, uid: uid-unbound-pvc}, local: {path: /a}}\n---\n";
  const std::string pv_b =
      "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-node1b}\nspec: {capacity: "
      "{storage: 10G}, accessModes: [ReadWriteOnce], storageClassName: wait, claimRef: "
      "{namespace: testns, name: unbound-pvc2, uid: uid-unbound-pvc2}, local: {path: /b}}\n---\n";
  const PodVolumes one{"node1", {{"testns/unbound-pvc", "pv-node1a"}}, {}};
  const PodVolumes prov{"node1", {}, {"testns/provisioned-pvc"}};
  const std::vector<Case> cases = {
      {"nothing-to-bind", "", {"node1", {}, {}}, true, ""},
      {"binding-bound", pv_a + ClaimYaml("unbound-pvc", "pv-node1a", true), one, true, ""},
      {"binding-prebound", pv_a + ClaimYaml("unbound-pvc", "pv-node1a"), one, false, ""},
      {"binding-unbound", pv_a + ClaimYaml("unbound-pvc", ""), one, false, ""},
      {"binding-pvc-not-exists", pv_a, one, false,
       "persistentvolumeclaim \"testns/unbound-pvc\" was deleted"},
      {"binding-pv-not-exists", ClaimYaml("unbound-pvc", "pv-node1a", true), one, false,
       "persistentvolume \"pv-node1a\" was deleted"},
      {"binding-one-bound,one-unbound",
       pv_a + pv_b + ClaimYaml("unbound-pvc", "pv-node1a", true) + ClaimYaml("unbound-pvc2", ""),
       {"node1", {{"testns/unbound-pvc", "pv-node1a"}, {"testns/unbound-pvc2", "pv-node1b"}}, {}},
       false,
       ""},
      {"provisioning-pvc-bound", ClaimYaml("provisioned-pvc", "pv-new", true), prov, true, ""},
      {"provisioning-pvc-unbound", ClaimYaml("provisioned-pvc", ""), prov, false, ""},
      {"provisioning-pvc-not-exists", "", prov, false,
       "persistentvolumeclaim \"testns/provisioned-pvc\" was deleted"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Catalog cat;
    if (!c.objects.empty()) Load(cat, c.objects);
    std::string error;
    EXPECT_EQ(cat.BindingsComplete(c.vols, &error), c.bound);
    EXPECT_EQ(error, c.error);
  }
}

// Strict decoding: an invalid object is kept with an error naming it and the field, and
// never matches.
TEST(VolumeCatalog, InvalidObjects) {
  struct Case {
    const char* name;
    std::string yaml;
    std::string error;  // prefix
  };
  const std::vector<Case> cases = {
      {"an unknown access mode",
       "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec: {capacity: "
       "{storage: 1G}, accessModes: [ReadWriteSometimes], storageClassName: wait, local: {path: "
       "/a}}\n",
       "PersistentVolume \"pv\": spec.accessModes[0]: Unsupported value: \"ReadWriteSometimes\""},
      {"a negative capacity",
       "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec: {capacity: "
       "{storage: -1G}, accessModes: [ReadWriteOnce], local: {path: /a}}\n",
       "PersistentVolume \"pv\": spec.capacity[storage]"},
      {"an unknown volumeBindingMode",
       "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: sc}\nprovisioner: "
       "x\nvolumeBindingMode: Later\n",
       "StorageClass \"sc\": volumeBindingMode: Unsupported value: \"Later\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Catalog cat;
    const auto objs = Objects(c.yaml);
    ASSERT_EQ(objs.size(), 1u);
    const api::Status st = cat.OnObjectAdd(objs[0]);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    const std::string err(st.message());
    EXPECT_EQ(err.substr(0, c.error.size()), c.error) << err;
    EXPECT_EQ(cat.Errors().size(), 1u);
  }
  // An invalid PV never matches a claim.
  Catalog cat;
  EXPECT_FALSE(cat.OnObjectAdd(Objects(cases[0].yaml)[0]).ok());
  PersistentVolumeClaim claim = Claim("c", 1, {"ReadWriteOnce"});
  EXPECT_EQ(FindMatchingVolume(*cat.Snapshot(), claim, nullptr, {}), nullptr);
}

}  // namespace
}  // namespace phalanx::volume
