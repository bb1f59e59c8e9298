"""Seeded generator of the volume worlds of the differential test (differential.py
--volumes, e2e.differential_volumes): StorageClasses, static PersistentVolumes and
PersistentVolumeClaims, CSINodes, and pods that use claims -- the inputs of the volume
plugins (VolumeBinding, VolumeZone, NodeVolumeLimits) that kube-scheduler v1.20.2 and
Phalanx (current upstream semantics) evaluate the same way.

A volume world is generate.py's world (same isolation rules: world label on its nodes,
world-unique topology values, its own namespaces) plus cluster-scoped storage objects
whose names all start with "<world>-" (StorageClasses, PVs, CSI driver names), so worlds
share nothing. Each incoming pod gets a world of its own: the template world of
`--worlds` index i is generated once per incoming pod k, from the same template seed,
under the name "v<i>c<k>", with pod k's own claims added. A pod's static binding
changes the world (a PV gets its claim), so a world is never used twice; the harness
needs no restore step, and every pod meets exactly its template's fixed state.

Determinism of the outcome, i.e. what may legitimately differ between the schedulers:
  * the node, among the feasible ones (ties / scores) -- judged as in the default mode
    (upstream's feasible set from its V(10) score lines);
  * not the PV: every PV of a world has a distinct capacity, and a pod's claims have
    distinct requests, so upstream's binder (pkg/controller/volume/scheduling/
    scheduler_binder.go findMatchingVolumes: claims by increasing request, each the
    smallest matching PV -- pkg/controller/volume/persistentvolume/util/util.go
    FindMatchingVolume) has exactly one choice per node: on the same node both
    schedulers must bind the same PVs (compared per claim);
  * the PV controller's own choices: the only claims it binds by itself are pre-bound
    ones (spec.volumeName and the PV's claimRef set by the generator); unbound Immediate
    claims request more than any PV of their class holds, so they stay Pending;
  * queue order: there is one incoming pod per world, so no pod sees another's choice.
The harness waits until the PV controller has finished the pre-bound claims (Bound,
pv.kubernetes.io/bind-completed) and made every free PV Available before the scheduler
starts, so both schedulers see identical, settled inputs.

Kinds of template world ("kinds"):
  affinity  PVs with hostname / zone node affinity or none, access modes, volume modes,
            labels for claim selectors, two WaitForFirstConsumer classes and an Immediate
            one (kubernetes.io/no-provisioner: no dynamic provisioning);
  zones     the same, and PVs labelled with the world's zones / regions
            (topology.kubernetes.io/zone, failure-domain.beta.kubernetes.io/zone, and
            region) -- VolumeZone on bound claims;
  limits    CSI PVs of the world's driver, CSINodes with allocatable counts for it, bound
            pods using CSI claims -- NodeVolumeLimits on bound claims.
"""

import random

import generate as G

KINDS = ("affinity", "zones", "limits")
NO_PROVISIONER = "kubernetes.io/no-provisioner"
ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
REGION_BETA = "failure-domain.beta.kubernetes.io/region"
PV_TIER = "diff.phalanx.dev/tier"
PV_SET = "diff.phalanx.dev/pvset"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
MODES = ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"]
MI = 2 ** 20


def _mi(n):
    return "%dMi" % n


def _classes(world, kind):
    """name -> StorageClass object. WFFC classes a and b, an Immediate class, and for
    limits worlds a WFFC class for the CSI PVs (no provisioner either: a provisioner
    without a running external provisioner would leave the pod waiting in PreBind)."""
    out = {}
    for suffix, mode in (("wffc", "WaitForFirstConsumer"), ("wffc2", "WaitForFirstConsumer"),
                         ("imm", "Immediate")) + ((("csi", "WaitForFirstConsumer"),)
                                                   if kind == "limits" else ()):
        name = "%s-%s" % (world, suffix)
        out[name] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                     "metadata": {"name": name}, "provisioner": NO_PROVISIONER,
                     "volumeBindingMode": mode, "reclaimPolicy": "Retain"}
    return out


def driver_of(world):
    return "%s-csi.example.com" % world


def _node(rng, world, j, zones):
    name = "%s-n%d" % (world, j)
    zone, region = zones[j % len(zones)] if j < len(zones) else G._pick(rng, zones)
    labels = {G.HOSTNAME: name, G.WORLD_LABEL: world, G.ZONE: zone, G.REGION: region,
              ZONE_BETA: zone, REGION_BETA: region}
    cap = {"cpu": G._pick(rng, ["2", "4", "4", "8"]), "memory": "8Gi",
           "pods": str(G._pick(rng, [3, 110, 110]))}
    spec = {}
    if rng.random() < 0.08:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": spec,
            "status": {"capacity": dict(cap), "allocatable": dict(cap),
                       "conditions": [{"type": "Ready", "status": "True",
                                       "reason": "KubeletReady"}]}}


def _in(key, values):
    return {"key": key, "operator": "In", "values": sorted(set(values))}


def _pv_affinity(rng, nodes, zones):
    """A required node affinity: one node's hostname, two hostnames, a zone, a zone in
    one term or a hostname in another, a NotIn term, or none (None)."""
    r = rng.random()
    hosts = [n["metadata"]["name"] for n in nodes]
    if r < 0.4:
        terms = [{"matchExpressions": [_in(G.HOSTNAME, [G._pick(rng, hosts)])]}]
    elif r < 0.5:
        terms = [{"matchExpressions": [_in(G.HOSTNAME, rng.sample(hosts, min(2, len(hosts))))]}]
    elif r < 0.65:
        terms = [{"matchExpressions": [_in(G.ZONE, [G._pick(rng, zones)[0]])]}]
    elif r < 0.72:
        terms = [{"matchExpressions": [_in(G.ZONE, [G._pick(rng, zones)[0]])]},
                 {"matchExpressions": [_in(G.HOSTNAME, [G._pick(rng, hosts)])]}]
    elif r < 0.78:
        terms = [{"matchExpressions": [_in(G.ZONE, [G._pick(rng, zones)[0]]),
                                       {"key": G.HOSTNAME, "operator": "NotIn",
                                        "values": [G._pick(rng, hosts)]}]}]
    else:
        return None
    return {"required": {"nodeSelectorTerms": terms}}


def _access_modes(rng):
    r = rng.random()
    if r < 0.5:
        return ["ReadWriteOnce"]
    if r < 0.65:
        return ["ReadOnlyMany"]
    if r < 0.75:
        return ["ReadWriteMany"]
    two = rng.sample(MODES, 2)
    return [m for m in MODES if m in two]


def _pv(rng, world, i, size_mi, cls, nodes, zones, kind):
    name = "%s-pv%d" % (world, i)
    labels = {}
    if rng.random() < 0.6:
        labels[PV_TIER] = G._pick(rng, ["fast", "slow"])
    if rng.random() < 0.5:
        labels[PV_SET] = G._pick(rng, ["a", "b"])
    spec = {"capacity": {"storage": _mi(size_mi)}, "accessModes": _access_modes(rng),
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": cls}
    if rng.random() < 0.1:
        spec["volumeMode"] = "Block"
    aff = _pv_affinity(rng, nodes, zones)
    if kind == "zones" and rng.random() < 0.8:
        zone, region = G._pick(rng, zones)
        r = rng.random()
        if r < 0.5:
            labels[G.ZONE] = zone
        elif r < 0.75:
            labels[ZONE_BETA] = zone
        else:
            labels[G.REGION] = region
        if rng.random() < 0.6:
            aff = None  # only the zone label constrains it (VolumeZone)
    if cls.endswith("-csi"):
        spec["csi"] = {"driver": driver_of(world), "volumeHandle": name}
        if rng.random() < 0.7:
            aff = None  # attachable anywhere: only the node's limit constrains it
    else:
        spec["hostPath"] = {"path": "/mnt/diff/" + name}
    if aff:
        spec["nodeAffinity"] = aff
    meta = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec}


def _claim(name, ns, cls, size_mi, modes, volume_mode=None, selector=None, volume_name=None):
    spec = {"accessModes": list(modes), "storageClassName": cls,
            "resources": {"requests": {"storage": _mi(size_mi)}}}
    if volume_mode:
        spec["volumeMode"] = volume_mode
    if selector:
        spec["selector"] = selector
    if volume_name:
        spec["volumeName"] = volume_name
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def _prebind(pv, claim):
    """Pre-binds claim to pv: claim.spec.volumeName and pv.spec.claimRef (the PV
    controller completes the binding: both Bound, pv.kubernetes.io/bind-completed)."""
    claim["spec"]["volumeName"] = pv["metadata"]["name"]
    pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                              "namespace": claim["metadata"]["namespace"],
                              "name": claim["metadata"]["name"]}


def _satisfying_claim(rng, pv, name, ns):
    """A claim that pv satisfies (class, size, access modes, volume mode), for pre-binding
    (the PV controller checks it: checkVolumeSatisfyClaim)."""
    size = parse_mi(pv["spec"]["capacity"]["storage"])
    modes = pv["spec"]["accessModes"]
    return _claim(name, ns, pv["spec"]["storageClassName"], max(1, size - rng.randrange(0, size)),
                  rng.sample(modes, rng.randrange(1, len(modes) + 1)),
                  pv["spec"].get("volumeMode"))


def parse_mi(q):
    assert q.endswith("Mi"), q
    return int(q[:-2])


def gen_template(rng, world, kind):
    """The template's fixed state: nodes, classes, PVs (some pre-bound to claims of the
    world), CSINodes (limits), bound pods (limits: some using CSI claims)."""
    namespaces = [G.namespace_of(world), G.namespace_of(world) + "-b"]
    ns = namespaces[0]
    zones = [("%s-z%d" % (world, i), "%s-r%d" % (world, i % 2))
             for i in range(rng.randrange(1, 4))]
    nodes = [_node(rng, world, j, zones) for j in range(rng.randrange(3, 7))]
    classes = _classes(world, kind)
    names = sorted(classes)
    pv_classes = [c for c in names if not c.endswith("-imm")] + ["%s-imm" % world]
    n_pvs = rng.randrange(5, 15)
    sizes = rng.sample(range(1, 64), n_pvs)  # distinct capacities: 1..63 x 256Mi
    pvs = [_pv(rng, world, i, 256 * s,
               "%s-csi" % world if kind == "limits" and rng.random() < 0.5
               else G._pick(rng, pv_classes), nodes, zones, kind)
           for i, s in enumerate(sizes)]
    claims, bound, csinodes = [], [], []
    # Some PVs are taken by claims of the world (pre-bound; not available to others).
    for i, pv in enumerate(pvs):
        if rng.random() < 0.2 or (kind == "limits" and pv["spec"].get("csi") and
                                  rng.random() < 0.6):
            c = _satisfying_claim(rng, pv, "%s-held%d" % (world, i), ns)
            _prebind(pv, c)
            claims.append(c)
    if kind == "limits":
        driver = driver_of(world)
        for n in nodes:
            if rng.random() < 0.85:
                d = {"name": driver, "nodeID": n["metadata"]["name"]}
                if rng.random() < 0.85:
                    d["allocatable"] = {"count": rng.randrange(0, 4)}
                csinodes.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                                 "metadata": {"name": n["metadata"]["name"]},
                                 "spec": {"drivers": [d]}})
        # Bound pods using the held CSI claims, on nodes their PV admits.
        k = 0
        for c in claims:
            pv = next(p for p in pvs if p["metadata"]["name"] == c["spec"]["volumeName"])
            if not pv["spec"].get("csi") or rng.random() < 0.2:
                continue
            ok = [n for n in nodes if pv_admits(pv, n)]
            if not ok:
                continue
            node = G._pick(rng, ok)
            bound.append(_pod("%s-b%d" % (world, k), ns, node["metadata"]["name"], "100m",
                              [c["metadata"]["name"]]))
            k += 1
    for j in range(rng.randrange(0, len(nodes))):
        node = G._pick(rng, nodes)
        bound.append(_pod("%s-b%d" % (world, 100 + j), ns, node["metadata"]["name"],
                          G._pick(rng, ["500m", "1", "2"]), []))
    return {"name": world, "kind": kind, "namespaces": namespaces, "nodes": nodes,
            "zones": zones, "classes": [classes[c] for c in names], "pvs": pvs,
            "pvcs": claims, "csinodes": csinodes, "bound": bound}


def _pod(name, ns, node, cpu, claims, judged=False, world=None):
    spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
    if node:
        spec["nodeName"] = node
    if claims:
        spec["volumes"] = [{"name": "v%d" % i, "persistentVolumeClaim": {"claimName": c}}
                           for i, c in enumerate(claims)]
    meta = {"name": name, "namespace": ns}
    if judged:
        meta["labels"] = {G.JUDGED_LABEL: "true"}
        spec["nodeSelector"] = {G.WORLD_LABEL: world}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _selector(rng):
    r = rng.random()
    if r < 0.5:
        return {"matchLabels": {PV_TIER: G._pick(rng, ["fast", "slow"])}}
    if r < 0.75:
        return {"matchExpressions": [{"key": PV_SET, "operator": G._pick(rng, ["In", "NotIn"]),
                                      "values": [G._pick(rng, ["a", "b"])]}]}
    return {"matchExpressions": [{"key": PV_TIER, "operator": G._pick(rng, ["Exists",
                                                                          "DoesNotExist"])}]}


def _wffc_claim(rng, w, cname, ns, size_slot, free):
    """An unbound WaitForFirstConsumer claim: mostly aimed at a free WFFC PV of the world
    (its class, at most its size, a subset of its access modes, its volume mode), else
    random; sometimes with a selector. Its request is size_slot x 256Mi minus up to
    199Mi, so a pod's requests are distinct."""
    world = w["name"]
    targets = [p for p in free if p["spec"]["storageClassName"] != "%s-imm" % world]
    req = 256 * size_slot - rng.randrange(0, 200)
    if targets and rng.random() < 0.75:
        pv = G._pick(rng, targets)
        cap = parse_mi(pv["spec"]["capacity"]["storage"])
        if req > cap and rng.random() < 0.8:
            req = max(1, cap - rng.randrange(0, min(cap, 200)))
        modes = pv["spec"]["accessModes"]
        return _claim(cname, ns, pv["spec"]["storageClassName"], req,
                      rng.sample(modes, rng.randrange(1, len(modes) + 1)),
                      pv["spec"].get("volumeMode"),
                      _selector(rng) if rng.random() < 0.25 else None)
    cls = G._pick(rng, ["%s-wffc" % world, "%s-wffc" % world, "%s-wffc2" % world] +
                  (["%s-csi" % world] if w["kind"] == "limits" else []))
    return _claim(cname, ns, cls, req,
                  [m for m in MODES if rng.random() < 0.3] or ["ReadWriteOnce"],
                  "Block" if rng.random() < 0.08 else None,
                  _selector(rng) if rng.random() < 0.3 else None)


def _plugin_pv(w, pv):
    """Whether pv is one VolumeZone (zone worlds: zone / region labels) or
    NodeVolumeLimits (limits worlds: CSI) looks at."""
    if w["kind"] == "zones":
        return any(k in pv["metadata"].get("labels", {})
                   for k in (G.ZONE, ZONE_BETA, G.REGION, REGION_BETA))
    return w["kind"] == "limits" and "csi" in pv["spec"]


def add_incoming(rng, w, k):
    """Adds incoming pod k's claims to world w (in place) and returns the pod. Claim kinds:
    unbound WaitForFirstConsumer (class, size, access modes, sometimes a selector or
    volumeMode Block), pre-bound to a free PV of the world (bound before the pod comes),
    an unbound Immediate claim no PV can satisfy, a missing claim."""
    world, ns = w["name"], w["namespaces"][0]
    free = [p for p in w["pvs"] if "claimRef" not in p["spec"]]
    held = [p for p in w["pvs"] if "claimRef" in p["spec"]]
    claims = []
    sizes = rng.sample(range(1, 64), 3)  # distinct requests within the pod
    for j in range(rng.choice([1, 1, 1, 2, 2, 3])):
        cname = "%s-p%d-c%d" % (world, k, j)
        r = rng.random()
        # Zones and limits worlds: more bound claims (VolumeZone and NodeVolumeLimits
        # judge bound claims), on the PVs those plugins look at when there are some.
        if w["kind"] != "affinity":
            # WFFC on [0, 0.27) instead of [0, 0.62), bound on [0.27, 0.85).
            if r < 0.27:
                r = r * 0.62 / 0.27
            elif r < 0.85:
                r = 0.62 + (r - 0.27) * 0.23 / 0.58
        if r < 0.62 or not free and r < 0.85:
            c = _wffc_claim(rng, w, cname, ns, sizes[j], free)
        elif r < 0.85:
            pool = [p for p in free if _plugin_pv(w, p)] or free
            pv = pool[rng.randrange(len(pool))]
            free.remove(pv)
            c = _satisfying_claim(rng, pv, cname, ns)
            _prebind(pv, c)
        elif r < 0.89 and held:
            # Pre-bound (spec.volumeName) to a PV that another claim holds: the PV
            # controller leaves it Pending, so it is not bound (not bind-completed).
            pv = G._pick(rng, held)
            c = _satisfying_claim(rng, pv, cname, ns)
            c["spec"]["volumeName"] = pv["metadata"]["name"]
        elif r < 0.93:
            c = _claim(cname, ns, "%s-imm" % world, 64 * 256 + 1, ["ReadWriteOnce"])
        else:
            claims.append("%s-p%d-missing%d" % (world, k, j))
            continue
        w["pvcs"].append(c)
        claims.append(cname)
    cpu = G._pick(rng, ["100m", "500m", "1", "2", "3"])
    pod = _pod("%s-p%d" % (world, k), ns, None, cpu, claims, judged=True, world=world)
    w["incoming"] = [pod]
    return pod


def prebound_pairs(w):
    """The claims of w whose pre-binding the PV controller completes: spec.volumeName
    names a PV whose claimRef names the claim. {namespace/claim}."""
    refs = {"%s/%s" % (p["spec"]["claimRef"]["namespace"], p["spec"]["claimRef"]["name"]):
            p["metadata"]["name"] for p in w.get("pvs", []) if "claimRef" in p["spec"]}
    return {k for k, v in refs.items()
            for c in w.get("pvcs", [])
            if "%s/%s" % (c["metadata"]["namespace"], c["metadata"]["name"]) == k and
            c["spec"].get("volumeName") == v}


def pv_admits(pv, node):
    """Whether pv's required node affinity admits node (no affinity: every node)."""
    aff = pv["spec"].get("nodeAffinity")
    if not aff:
        return True
    labels = node["metadata"]["labels"]
    return any(all(G.node_selector_requirement_matches(e, labels)
                   for e in t.get("matchExpressions", []))
               for t in aff["required"]["nodeSelectorTerms"])


def generate_volumes(seed, worlds, pods_per_world, kinds=KINDS):
    """Template worlds 0..worlds-1 (kinds in turn), each judged with pods_per_world
    incoming pods, one world per pod ("v<i>c<k>"). Deterministic in the arguments."""
    rng = random.Random(seed)
    out = []
    for i in range(worlds):
        kind = kinds[i % len(kinds)]
        tseed = rng.getrandbits(64)
        pseed = rng.getrandbits(64)
        prng = random.Random(pseed)
        for k in range(pods_per_world):
            w = gen_template(random.Random(tseed), "v%dc%d" % (i, k), kind)
            w["template"] = "v%d" % i
            add_incoming(prng, w, k)
            out.append(w)
    return out


def expected_pvs(w, pod, node):
    """The PVs upstream's binder picks for pod's unbound WaitForFirstConsumer claims on
    node: {claim name: PV name}, or None when some claim has no match. Claims by
    increasing request, each the smallest free PV of its class with enough capacity, the
    same volume mode, Available (no claimRef), matching selector, node affinity and
    access modes (FindMatchingVolume)."""
    by_name = {c["metadata"]["name"]: c for c in w["pvcs"]}
    classes = {c["metadata"]["name"]: c for c in w["classes"]}
    todo = []
    for v in pod["spec"].get("volumes", []):
        c = by_name.get(v["persistentVolumeClaim"]["claimName"])
        if c is None or c["spec"].get("volumeName"):
            continue
        if classes[c["spec"]["storageClassName"]]["volumeBindingMode"] == "WaitForFirstConsumer":
            todo.append(c)
    todo.sort(key=lambda c: parse_mi(c["spec"]["resources"]["requests"]["storage"]))
    chosen, out = set(), {}
    for c in todo:
        best = None
        req = parse_mi(c["spec"]["resources"]["requests"]["storage"])
        for pv in w["pvs"]:
            s = pv["spec"]
            size = parse_mi(s["capacity"]["storage"])
            if (pv["metadata"]["name"] in chosen or "claimRef" in s or
                    s["storageClassName"] != c["spec"]["storageClassName"] or size < req or
                    s.get("volumeMode", "Filesystem") != c["spec"].get("volumeMode", "Filesystem")):
                continue
            sel = c["spec"].get("selector")
            if sel and not G.label_selector_matches(sel, pv["metadata"].get("labels", {})):
                continue
            if not pv_admits(pv, node):
                continue
            if not set(c["spec"]["accessModes"]) <= set(s["accessModes"]):
                continue
            if best is None or size < parse_mi(best["spec"]["capacity"]["storage"]):
                best = pv
        if best is None:
            return None
        chosen.add(best["metadata"]["name"])
        out[c["metadata"]["name"]] = best["metadata"]["name"]
    return out
