"""Seeded generator of differential-test clusters: independent "worlds" of nodes, bound
pods and incoming pods, using only features kube-scheduler v1.20 has and that Phalanx
(current upstream semantics) evaluates the same way (docs/compatibility.md).

A world is a self-contained scheduling problem:
  * its nodes carry `diff.phalanx.dev/world: <world>` and every topology value
    (hostname, zone, region, rack) is unique to the world;
  * its pods (bound and incoming) live in the world's own two namespaces (diff-<world>,
    diff-<world>-b), and every incoming pod has the world label in its nodeSelector.
Why outcomes of different worlds are independent, plugin by plugin (Filter):
  * NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
    NodeResourcesFit look at one node and the pods on it; an incoming pod can only pass
    on its own world's nodes (nodeSelector), whose pods are its world's pods.
  * InterPodAffinity counts pods matching a term in the term's namespaces: the pod's own
    namespace by default, else a list naming only the world's namespaces (v1.20 has no
    namespaceSelector). This covers the incoming pod's affinity / anti-affinity, the
    "first pod of a series" rule (which looks at matching pods cluster-wide) and
    existing pods' anti-affinity (the existing pod's term names only its world's
    namespaces).
  * PodTopologySpread counts pods of the pod's namespace on nodes that match its
    nodeSelector / required node affinity (v1.20 rule, = current nodeAffinityPolicy
    Honor), i.e. only the world's nodes and pods.
Scores may see other worlds, but scores only break ties between feasible nodes, which
the comparison does not require to agree.

Everything is a function of the seed (random.Random(seed)); no wall clock, no set
iteration order.
"""

import calendar
import random
import time

WORLD_LABEL = "diff.phalanx.dev/world"
JUDGED_LABEL = "diff.phalanx.dev/judged"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
RACK = "diff.phalanx.dev/rack"
DISK = "diff.phalanx.dev/disk"
POOL = "diff.phalanx.dev/pool"
GPUS = "diff.phalanx.dev/gpus"
GPU_RESOURCE = "example.com/gpu"
APPS = ["web", "db", "cache", "batch", "api", "solo"]
TIERS = ["fe", "be"]
PRIORITY_CLASSES = {"diff-low": 100, "diff-high": 1000}

TAINTS = [
    {"key": "diff.phalanx.dev/dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "diff.phalanx.dev/dedicated", "value": "infra", "effect": "NoExecute"},
    {"key": "diff.phalanx.dev/spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "diff.phalanx.dev/maintenance", "effect": "NoSchedule"},
]


def namespace_of(world):
    """The world's main namespace (its second one is this + "-b")."""
    return "diff-" + world


def _pick(rng, seq):
    return seq[rng.randrange(len(seq))]


def _cpu(rng, choices):
    return _pick(rng, choices)


def gen_node(rng, world, j, zones, racks):
    """Node j of the world: topology labels (sometimes missing), other labels, capacity
    (= allocatable), taints from TAINTS, sometimes cordoned; Ready."""
    name = "%s-n%d" % (world, j)
    labels = {HOSTNAME: name, WORLD_LABEL: world}
    zone, region = _pick(rng, zones)
    if rng.random() < 0.9:
        labels[ZONE] = zone
    if rng.random() < 0.9:
        labels[REGION] = region
    if rng.random() < 0.7:
        labels[RACK] = _pick(rng, racks)
    if rng.random() < 0.7:
        labels[DISK] = _pick(rng, ["ssd", "hdd"])
    if rng.random() < 0.6:
        labels[POOL] = _pick(rng, ["a", "b", "c"])
    if rng.random() < 0.5:
        labels[GPUS] = str(rng.randrange(0, 9))
    cap = {
        "cpu": _cpu(rng, ["1", "2", "4", "8", "16", "3500m", "6"]),
        "memory": _pick(rng, ["2Gi", "4Gi", "8Gi", "16Gi", "32Gi", "6000Mi", "8G"]),
        "pods": str(_pick(rng, [2, 3, 4, 6, 10, 110])),
    }
    if rng.random() < 0.5:
        cap["ephemeral-storage"] = _pick(rng, ["10Gi", "50Gi", "100G"])
    if rng.random() < 0.35:
        cap[GPU_RESOURCE] = str(rng.randrange(1, 5))
    taints = []
    for t in TAINTS:
        if rng.random() < 0.08:
            taints.append(dict(t))
    spec = {}
    if taints:
        spec["taints"] = taints
    if rng.random() < 0.07:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {
            "capacity": dict(cap), "allocatable": dict(cap),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


def _selector(rng, own_app=None):
    """A LabelSelector over app / tier labels (matchLabels or matchExpressions)."""
    r = rng.random()
    app = own_app if (own_app and rng.random() < 0.4) else _pick(rng, APPS)
    if r < 0.55:
        return {"matchLabels": {"app": app}}
    if r < 0.75:
        return {"matchExpressions": [{"key": "app", "operator": "In",
                                      "values": sorted({app, _pick(rng, APPS)})}]}
    if r < 0.85:
        return {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": [app]}]}
    if r < 0.93:
        return {"matchLabels": {"tier": _pick(rng, TIERS)},
                "matchExpressions": [{"key": "app", "operator": "Exists"}]}
    return {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}


def _pod_term(rng, own_app, namespaces):
    """A PodAffinityTerm; sometimes with an explicit namespaces list (only the world's
    own namespaces, which keeps worlds independent)."""
    term = {"labelSelector": _selector(rng, own_app),
            "topologyKey": _pick(rng, [HOSTNAME, HOSTNAME, ZONE, REGION, RACK])}
    if rng.random() < 0.2:
        term["namespaces"] = sorted(rng.sample(namespaces, rng.randrange(1, 3)))
    return term


def _pod_labels(rng):
    labels = {}
    if rng.random() < 0.9:
        labels["app"] = _pick(rng, APPS)
    if rng.random() < 0.6:
        labels["tier"] = _pick(rng, TIERS)
    return labels


def _host_ports(rng):
    ports = []
    for _ in range(rng.randrange(1, 3)):
        p = {"containerPort": _pick(rng, [80, 8080, 9090, 53]),
             "hostPort": _pick(rng, [8080, 8080, 9090, 53])}
        if rng.random() < 0.3:
            p["protocol"] = _pick(rng, ["TCP", "UDP"])
        if rng.random() < 0.3:
            p["hostIP"] = _pick(rng, ["127.0.0.1", "10.0.0.1", "0.0.0.0"])
        key = (p["hostPort"], p.get("protocol", "TCP"), p.get("hostIP", ""))
        if all((q["hostPort"], q.get("protocol", "TCP"), q.get("hostIP", "")) != key
               for q in ports):
            ports.append(p)
    return ports


def _requests(rng, scale):
    req = {}
    if rng.random() < 0.9:
        req["cpu"] = _pick(rng, scale["cpu"])
    if rng.random() < 0.85:
        req["memory"] = _pick(rng, scale["memory"])
    if rng.random() < 0.15:
        req["ephemeral-storage"] = _pick(rng, ["1Gi", "20Gi", "60Gi"])
    return req


SMALL = {"cpu": ["50m", "100m", "250m", "500m", "0.5", "1"],
         "memory": ["64Mi", "128Mi", "256Mi", "1Gi", "500M"]}
INCOMING = {"cpu": ["100m", "250m", "500m", "1", "1500m", "2", "3", "4", "6", "12"],
            "memory": ["64Mi", "256Mi", "1Gi", "2Gi", "3Gi", "6Gi", "10Gi", "1.5Gi", "3G"]}


def _container(name, rng, scale, ports=None):
    c = {"name": name, "image": "registry.k8s.io/pause:3.2"}
    req = _requests(rng, scale)
    if rng.random() < 0.12:
        req[GPU_RESOURCE] = str(rng.randrange(1, 4))
    if req:
        res = {"requests": req}
        if GPU_RESOURCE in req:
            res["limits"] = {GPU_RESOURCE: req[GPU_RESOURCE]}
        c["resources"] = res
    if ports:
        c["ports"] = ports
    return c


def gen_bound_pod(rng, world, k, node, namespaces):
    """Bound pod k on node (spec.nodeName set at creation): labels, small requests,
    sometimes host ports or required pod anti-affinity."""
    name = "%s-b%d" % (world, k)
    ns = namespaces[0] if rng.random() < 0.75 else namespaces[1]
    labels = _pod_labels(rng)
    spec = {"nodeName": node["metadata"]["name"],
            "containers": [_container("c", rng, SMALL,
                                      _host_ports(rng) if rng.random() < 0.15 else None)]}
    if rng.random() < 0.25:
        spec["affinity"] = {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                _pod_term(rng, labels.get("app"), namespaces)]}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": spec}


def _node_expr(rng, nodes, zones, racks):
    key = _pick(rng, [DISK, POOL, GPUS, ZONE, REGION, HOSTNAME, RACK])
    op = _pick(rng, ["In", "In", "NotIn", "Exists", "DoesNotExist"] +
               (["Gt", "Lt"] if key == GPUS else []))
    if op in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": op}
    if op in ("Gt", "Lt"):
        return {"key": key, "operator": op, "values": [str(rng.randrange(0, 8))]}
    if key == DISK:
        pool = ["ssd", "hdd", "nvme"]
    elif key == POOL:
        pool = ["a", "b", "c"]
    elif key == GPUS:
        pool = [str(i) for i in range(9)]
    elif key == ZONE:
        pool = [z for z, _ in zones]
    elif key == REGION:
        pool = sorted({r for _, r in zones})
    elif key == RACK:
        pool = racks
    else:
        pool = [n["metadata"]["name"] for n in nodes]
    vals = sorted({_pick(rng, pool) for _ in range(rng.randrange(1, 3))})
    return {"key": key, "operator": op, "values": vals}


def _tolerations(rng):
    out = []
    r = rng.random()
    if r < 0.05:
        return [{"operator": "Exists"}]
    for t in TAINTS + [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]:
        if rng.random() < 0.3:
            tol = {"key": t["key"]}
            if "value" in t and rng.random() < 0.7:
                tol["operator"] = "Equal"
                tol["value"] = t["value"] if rng.random() < 0.85 else "other"
            else:
                tol["operator"] = "Exists"
            if rng.random() < 0.7:
                tol["effect"] = t["effect"] if rng.random() < 0.85 else _pick(
                    rng, ["NoSchedule", "NoExecute", "PreferNoSchedule"])
            if tol.get("effect") == "NoExecute" and rng.random() < 0.5:
                tol["tolerationSeconds"] = 300
            out.append(tol)
    return out


def gen_incoming_pod(rng, world, k, nodes, bound, zones, racks, namespaces):
    """Incoming pod k: always the world nodeSelector, then at random more selectors,
    node affinity (incl. matchFields), tolerations, init containers, host ports, pod
    affinity / anti-affinity, topology spread constraints and a priority class."""
    name = "%s-p%d" % (world, k)
    ns = namespaces[0] if rng.random() < 0.85 else namespaces[1]
    labels = _pod_labels(rng)
    labels[JUDGED_LABEL] = "true"
    node_selector = {WORLD_LABEL: world}
    if rng.random() < 0.25:
        n = _pick(rng, nodes)
        for key in rng.sample([DISK, POOL, ZONE, REGION, RACK, HOSTNAME], rng.randrange(1, 3)):
            if key in n["metadata"]["labels"] and rng.random() < 0.85:
                node_selector[key] = n["metadata"]["labels"][key]
            elif key in (DISK, POOL):
                node_selector[key] = _pick(rng, ["ssd", "a", "b", "nvme"])
    ports = _host_ports(rng) if rng.random() < 0.15 else None
    containers = [_container("c0", rng, INCOMING, ports)]
    if rng.random() < 0.2:
        containers.append(_container("c1", rng, SMALL))
    spec = {"nodeSelector": node_selector, "containers": containers}
    if rng.random() < 0.12:
        spec["initContainers"] = [_container("init", rng, INCOMING)]
    tol = _tolerations(rng) if rng.random() < 0.45 else []
    if tol:
        spec["tolerations"] = tol
    affinity = {}
    if rng.random() < 0.35:
        terms = []
        for _ in range(rng.randrange(1, 3)):
            term = {"matchExpressions": [_node_expr(rng, nodes, zones, racks)
                                         for _ in range(rng.randrange(1, 3))]}
            if rng.random() < 0.2:
                # matchFields: metadata.name is the only field, In / NotIn with exactly
                # one value (API validation).
                term["matchFields"] = [{
                    "key": "metadata.name", "operator": _pick(rng, ["In", "NotIn"]),
                    "values": [_pick(rng, nodes)["metadata"]["name"]]}]
                if rng.random() < 0.5:
                    del term["matchExpressions"]
            terms.append(term)
        affinity["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    if rng.random() < 0.15:
        affinity.setdefault("nodeAffinity", {})[
            "preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randrange(1, 101),
             "preference": {"matchExpressions": [_node_expr(rng, nodes, zones, racks)]}}]
    if rng.random() < 0.2:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            _pod_term(rng, labels.get("app"), namespaces)
            for _ in range(rng.randrange(1, 3))]}
    if rng.random() < 0.25:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            _pod_term(rng, labels.get("app"), namespaces)
            for _ in range(rng.randrange(1, 3))]}
    if rng.random() < 0.1:
        affinity.setdefault("podAffinity", {})[
            "preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randrange(1, 101), "podAffinityTerm": _pod_term(rng, labels.get("app"), namespaces)}]
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.35:
        # A few tries for constraints outside the known v1.20 / current difference in
        # counting (spread_counting_differs); none if every try falls into it.
        for _ in range(4):
            constraints = []
            for key in rng.sample([HOSTNAME, ZONE, REGION, RACK], rng.randrange(1, 3)):
                constraints.append({
                    "maxSkew": _pick(rng, [1, 1, 1, 2, 3]),
                    "topologyKey": key,
                    "whenUnsatisfiable": ("DoNotSchedule" if rng.random() < 0.8
                                          else "ScheduleAnyway"),
                    "labelSelector": _selector(rng, labels.get("app")),
                })
            spec["topologySpreadConstraints"] = constraints
            if not spread_counting_differs(
                    {"metadata": {"namespace": ns, "labels": labels}, "spec": spec},
                    nodes, bound):
                break
            del spec["topologySpreadConstraints"]
    if rng.random() < 0.3:
        spec["priorityClassName"] = _pick(rng, sorted(PRIORITY_CLASSES))
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": spec}


def label_selector_matches(sel, labels):
    """metav1.LabelSelector semantics (matchLabels AND matchExpressions)."""
    for k, v in sel.get("matchLabels", {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions", []):
        k, op, vals = e["key"], e["operator"], e.get("values", [])
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


def node_selector_requirement_matches(e, labels):
    k, op, vals = e["key"], e["operator"], e.get("values", [])
    if op in ("In", "NotIn", "Exists", "DoesNotExist"):
        return label_selector_matches({"matchExpressions": [e]}, labels)
    if k not in labels:
        return False
    try:
        lv, v = int(labels[k]), int(vals[0])
    except ValueError:
        return False
    return lv > v if op == "Gt" else lv < v


def pod_matches_node_selector_and_affinity(pod, node):
    """nodeSelector AND required node affinity (any term; all expressions of a term)."""
    labels = node["metadata"]["labels"]
    for k, v in pod["spec"].get("nodeSelector", {}).items():
        if labels.get(k) != v:
            return False
    req = (pod["spec"].get("affinity", {}).get("nodeAffinity", {})
           .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if req is None:
        return True
    fields = {"metadata.name": node["metadata"]["name"]}
    return any((t.get("matchExpressions") or t.get("matchFields")) and
               all(node_selector_requirement_matches(e, labels)
                   for e in t.get("matchExpressions", [])) and
               all(node_selector_requirement_matches(e, fields)
                   for e in t.get("matchFields", []))
               for t in req["nodeSelectorTerms"])


def spread_counting_differs(pod, nodes, bound):
    """True when the pod's DoNotSchedule topology spread constraints would count pods
    differently in v1.20 and in current upstream. v1.20 (podtopologyspread/filtering.go,
    calPreFilterState) registers the domains of nodes that match the pod's nodeSelector /
    required affinity and carry every constraint's key, but then counts matching pods on
    *every* node whose label value is a registered domain. Since v1.24
    (kubernetes/kubernetes#106971, PR #107009) only pods on nodes that themselves match
    (and carry all keys) are counted. The generator avoids that case; it is a documented
    upstream change, not a Phalanx difference."""
    cons = [c for c in pod["spec"].get("topologySpreadConstraints", [])
            if c["whenUnsatisfiable"] == "DoNotSchedule"]
    if not cons:
        return False
    keys = [c["topologyKey"] for c in cons]

    def eligible(n):
        return (pod_matches_node_selector_and_affinity(pod, n) and
                all(k in n["metadata"]["labels"] for k in keys))
    for c in cons:
        key = c["topologyKey"]
        registered = {n["metadata"]["labels"][key] for n in nodes if eligible(n)}
        for n in nodes:
            if eligible(n) or n["metadata"]["labels"].get(key) not in registered:
                continue
            for b in bound:
                if (b["spec"]["nodeName"] == n["metadata"]["name"] and
                        b["metadata"]["namespace"] == pod["metadata"]["namespace"] and
                        label_selector_matches(c["labelSelector"], b["metadata"]["labels"])):
                    return True
    return False


RESOURCES = ["cpu", "memory", "ephemeral-storage", GPU_RESOURCE]


def pod_requests(pod):
    """Effective requests as NodeResourcesFit computes them: sum over containers, then
    the max with each init container (milli-CPU, bytes, counts)."""
    def req(c):
        r = c.get("resources", {}).get("requests", {})
        return {k: parse_quantity(r.get(k, "0"), milli=(k == "cpu")) for k in RESOURCES}
    total = {k: 0 for k in RESOURCES}
    for c in pod["spec"]["containers"]:
        for k, v in req(c).items():
            total[k] += v
    for c in pod["spec"].get("initContainers", []):
        for k, v in req(c).items():
            total[k] = max(total[k], v)
    return total


def _fits(node, used, pod):
    """Whether a bound pod fits its node in every resource. Bound pods never overcommit a
    node (as the kubelet's admission guarantees): v1.20 rejects every pod with non-zero
    requests on a node whose allocatable of *any* resource is exceeded, current upstream
    (kubernetes/kubernetes#116408, v1.27) checks only the resources the pod requests --
    a documented difference (docs/compatibility.md), not something to compare."""
    cap = node["status"]["allocatable"]
    req = pod_requests(pod)
    if used["pods"] + 1 > int(cap["pods"]):
        return False, req
    for k in RESOURCES:
        if req[k] and used[k] + req[k] > parse_quantity(cap.get(k, "0"), milli=(k == "cpu")):
            return False, req
    return True, req


_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
           "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "m": 10**-3, "": 1}


def parse_quantity(s, milli=False):
    """resource.Quantity string -> number (milli-units when milli=True). Only the forms
    this generator writes."""
    for suf in sorted(_SUFFIX, key=len, reverse=True):
        if suf and s.endswith(suf):
            v = float(s[:-len(suf)]) * _SUFFIX[suf]
            break
    else:
        v = float(s)
    return round(v * 1000) if milli else round(v)


def gen_world(rng, world, pods_per_world):
    """One world: (nodes, bound pods, incoming pods, namespace)."""
    namespaces = [namespace_of(world), namespace_of(world) + "-b"]
    n_regions = rng.randrange(1, 3)
    regions = ["%s-r%d" % (world, i) for i in range(n_regions)]
    zones = [("%s-z%d" % (world, i), regions[i % n_regions])
             for i in range(rng.randrange(1, 5))]
    racks = ["%s-rack%d" % (world, i) for i in range(rng.randrange(1, 4))]
    nodes = [gen_node(rng, world, j, zones, racks) for j in range(rng.randrange(3, 11))]
    used = {n["metadata"]["name"]: dict({k: 0 for k in RESOURCES}, pods=0) for n in nodes}
    bound = []
    for k in range(rng.randrange(len(nodes) // 2, 3 * len(nodes) + 1)):
        node = _pick(rng, nodes)
        pod = gen_bound_pod(rng, world, k, node, namespaces)
        ok, req = _fits(node, used[node["metadata"]["name"]], pod)
        if not ok:
            continue
        u = used[node["metadata"]["name"]]
        for k in RESOURCES:
            u[k] += req[k]
        u["pods"] += 1
        bound.append(pod)
    incoming = [gen_incoming_pod(rng, world, k, nodes, bound, zones, racks, namespaces)
                for k in range(pods_per_world)]
    return {"name": world, "namespaces": namespaces, "nodes": nodes, "bound": bound,
            "incoming": incoming}


def generate(seed, worlds, pods_per_world):
    """The whole cluster: a list of worlds. Deterministic in (seed, worlds, pods_per_world)."""
    rng = random.Random(seed)
    return [gen_world(random.Random(rng.getrandbits(64)), "w%d" % i, pods_per_world)
            for i in range(worlds)]


# ---- preemption worlds (e2e.differential_preemption) ------------------------------------
#
# A preemption world is a small set of nodes full of bound pods of low and mid priorities
# (with distinct status.startTime values, set through the status subresource by the
# harness), optional PodDisruptionBudgets (status.disruptionsAllowed set by the harness:
# no disruption controller runs), and incoming higher-priority pods that fit on no node
# as it is. Each incoming pod is one case, judged alone against the world's fixed state
# (the harness restores the victims after each case).
#
# Only features the generator can evaluate exactly are used, so that it can predict the
# outcome under upstream v1.20.2's rules and keep only cases whose outcome those rules
# define uniquely: NodeResourcesFit (cpu, memory, pod count), NodePorts (hostPort 8080),
# required pod anti-affinity with topologyKey hostname (the incoming pod's and existing
# pods'), and -- as UnschedulableAndUnresolvable, i.e. nodes that are no preemption
# candidates -- nodeSelector and NoSchedule taints. See preemption_outcome for the rules.

PREEMPTION_CLASSES = {"diff-pre-neg": -50, "diff-pre-10": 10, "diff-pre-50": 50,
                      "diff-pre-200": 200, "diff-pre-500": 500, "diff-high-never": 1000}
NEVER_CLASSES = {"diff-high-never"}  # preemptionPolicy: Never (the pods never preempt)
ALL_PRIORITY_CLASSES = dict(PRIORITY_CLASSES, **PREEMPTION_CLASSES)
START_BASE = 1610496000  # 2021-01-13T00:00:00Z; bound pods start at distinct minutes after it
INFRA_TAINT = {"key": "diff.phalanx.dev/dedicated", "value": "infra", "effect": "NoSchedule"}
PDB_APPS = ["web", "db", "cache", "batch"]
# Which criterion of pickOneNodeForPreemption decided (index into this list; 0: only one
# candidate node).
CRITERIA = ["single candidate", "fewest PDB violations", "lowest highest-victim priority",
            "smallest priority sum", "fewest victims", "latest start of top victims"]


def pod_priority(pod):
    """spec.priority as the Priority admission plugin sets it (no globalDefault class: 0)."""
    return ALL_PRIORITY_CLASSES.get(pod["spec"].get("priorityClassName"), 0)


def start_time(pod):
    """status.startTime as seconds since the epoch (every bound pod of a preemption world
    has one, all distinct)."""
    s = pod.get("status", {}).get("startTime")
    if s is None:
        raise ValueError("pod %s has no status.startTime" % pod["metadata"]["name"])
    return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))


def iso_time(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _host_port_set(pod):
    return {(p["hostPort"], p.get("protocol", "TCP"))
            for c in pod["spec"]["containers"] for p in c.get("ports", []) if p.get("hostPort")}


def _anti_terms(pod):
    return (pod["spec"].get("affinity", {}).get("podAntiAffinity", {})
            .get("requiredDuringSchedulingIgnoredDuringExecution", []))


def preemption_resolvable(pod, node):
    """False when the node fails a filter with UnschedulableAndUnresolvable (nodeSelector,
    untolerated NoSchedule taint): then it is no preemption candidate (v1.20
    nodesWherePreemptionMightHelp). These filters run before the Unschedulable ones in
    both schedulers' default order, so the first failing status is theirs."""
    if not pod_matches_node_selector_and_affinity(pod, node):
        return False
    for t in node["spec"].get("taints", []):
        if t["effect"] not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tol.get("key") == t["key"] and tol.get("effect", t["effect"]) == t["effect"]
                   and (tol.get("operator") == "Exists" or tol.get("value") == t.get("value"))
                   for tol in pod["spec"].get("tolerations", [])):
            return False
    return True


def preemption_fits(pod, node, pods):
    """The Unschedulable filters on a node holding `pods`: NodeResourcesFit (pod count,
    cpu, memory), NodePorts, InterPodAffinity (required anti-affinity, hostname
    topology, terms in the pod's own namespace: the incoming pod's terms against the
    node's pods, and the node's pods' terms against the incoming pod)."""
    alloc = node["status"]["allocatable"]
    if len(pods) + 1 > int(alloc["pods"]):
        return False
    want = pod_requests(pod)
    for k in ("cpu", "memory"):
        used = sum(pod_requests(p)[k] for p in pods)
        if used + want[k] > parse_quantity(alloc[k], milli=(k == "cpu")):
            return False
    ports = _host_port_set(pod)
    if any(ports & _host_port_set(p) for p in pods):
        return False
    ns = pod["metadata"]["namespace"]
    for t in _anti_terms(pod):
        if any(p["metadata"]["namespace"] == ns and
               label_selector_matches(t["labelSelector"], p["metadata"]["labels"])
               for p in pods):
            return False
    for p in pods:
        if p["metadata"]["namespace"] != ns:
            continue
        for t in _anti_terms(p):
            if label_selector_matches(t["labelSelector"], pod["metadata"]["labels"]):
                return False
    return True


def more_important_key(pod):
    """util.MoreImportantPod as a sort key: higher priority first, then earlier start."""
    return (-pod_priority(pod), start_time(pod))


def pdb_violating(pods, pdbs):
    """v1.20 filterPodsWithPDBViolation over pods (already in MoreImportantPod order):
    (violating, non-violating), each in input order. A PDB matches a pod of its
    namespace with labels that its (non-empty) selector matches; each match takes one
    from status.disruptionsAllowed; the pod violates when a count drops below 0."""
    allowed = [p["status"]["disruptionsAllowed"] for p in pdbs]
    # A pod listed in status.disruptedPods was already counted (its eviction went through
    # the API): it takes nothing from the budget.
    violating, ok = [], []
    for pod in pods:
        hit = False
        labels = pod["metadata"]["labels"]
        if labels:
            for i, b in enumerate(pdbs):
                sel = b["spec"].get("selector") or {}
                if (b["metadata"]["namespace"] != pod["metadata"]["namespace"] or
                        not (sel.get("matchLabels") or sel.get("matchExpressions")) or
                        not label_selector_matches(sel, labels) or
                        pod["metadata"]["name"] in b["status"].get("disruptedPods", {})):
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    hit = True
        (violating if hit else ok).append(pod)
    return violating, ok


def select_victims(pod, node, node_pods, pdbs):
    """v1.20 selectVictimsOnNode: None when the node is no candidate, else (victims in
    v1.20's order -- PDB-violating ones first, each group most important first --,
    number of PDB-violating victims)."""
    prio = pod_priority(pod)
    potential = [p for p in node_pods if pod_priority(p) < prio]
    if not potential:
        return None
    kept = [p for p in node_pods if pod_priority(p) >= prio]
    if not preemption_fits(pod, node, kept):
        return None
    potential.sort(key=more_important_key)
    violating, ok = pdb_violating(potential, pdbs)
    victims, n_violating = [], 0
    for group, counts in ((violating, True), (ok, False)):
        for p in group:
            kept.append(p)
            if not preemption_fits(pod, node, kept):
                kept.pop()
                victims.append(p)
                n_violating += counts
    return victims, n_violating


def pick_node(candidates, sort_victims):
    """pickOneNodeForPreemption over {node: (victims, number of PDB violations)}:
    (node, index into CRITERIA of the deciding criterion), or (None, 5) when criterion 5
    still leaves a tie (then v1.20 takes whichever node its parallel dry run listed first:
    undefined). sort_victims=False reads the highest-priority victim as v1.20 does
    (victims[0] of selectVictimsOnNode's order, where PDB-violating victims come first);
    True as current upstream does (victims re-sorted most important first, kubernetes PR
    #128307)."""
    if not candidates:
        return None, 0
    if len(candidates) == 1:
        return next(iter(candidates)), 0
    vic = {n: (sorted(v, key=more_important_key) if sort_victims else v)
           for n, (v, _) in candidates.items()}
    scores = [
        lambda n: -candidates[n][1],
        lambda n: -pod_priority(vic[n][0]),
        lambda n: -sum(pod_priority(p) + 2**31 for p in vic[n]),
        lambda n: -len(vic[n]),
        lambda n: min(start_time(p) for p in vic[n]
                      if pod_priority(p) == max(pod_priority(q) for q in vic[n])),
    ]
    left = sorted(candidates)
    for i, f in enumerate(scores):
        best = max(f(n) for n in left)
        left = [n for n in left if f(n) == best]
        if len(left) == 1:
            return left[0], i + 1
    return None, len(scores)


def preemption_candidates(pod, nodes, bound, pdbs):
    """"fits" when the pod fits a node as it is; else {node: select_victims(...)} over
    the nodes where preemption might help (empty for a preemptionPolicy Never pod, which
    v1.20 PodEligibleToPreemptOthers does not let preempt)."""
    on = {n["metadata"]["name"]: [] for n in nodes}
    for b in bound:
        on[b["spec"]["nodeName"]].append(b)
    resolvable = [n for n in nodes if preemption_resolvable(pod, n)]
    if any(preemption_fits(pod, n, on[n["metadata"]["name"]]) for n in resolvable):
        return "fits"
    if pod["spec"].get("priorityClassName") in NEVER_CLASSES:
        return {}
    cands = {}
    for n in resolvable:
        name = n["metadata"]["name"]
        sel = select_victims(pod, n, on[name], pdbs)
        if sel is not None:
            cands[name] = sel
    return cands


def excluded_outcome(pod, nodes, bound, pdbs):
    """For a case preemption_outcome calls "ambiguous" because v1.20's and current
    upstream's reading of the highest-priority victim pick different nodes (each
    uniquely): ((v1.20 node, its victims), (current node, its victims)); else None."""
    cands = preemption_candidates(pod, nodes, bound, pdbs)
    if cands == "fits" or not cands:
        return None
    old, new = pick_node(cands, False)[0], pick_node(cands, True)[0]
    if old is None or new is None or old == new:
        return None
    names = lambda n: sorted(p["metadata"]["name"] for p in cands[n][0])
    return (old, names(old)), (new, names(new))


def preemption_outcome(pod, nodes, bound, pdbs):
    """The outcome of one incoming pod on the world's fixed state under v1.20.2's rules:
      ("fits", None, [], 0)            it fits a node without preemption (no case);
      ("unschedulable", None, [], 0)   no node is a preemption candidate, or the pod's
                                       preemptionPolicy is Never;
      ("bound", node, victims, crit, v) it preempts `victims` (names, sorted) on `node`,
                                       picked by CRITERIA[crit]; v of them violate a PDB;
      ("ambiguous", None, [], crit)    the rules do not define one node: a tie after every
                                       criterion, or v1.20's reading of the highest-
                                       priority victim (PDB-violating victims first)
                                       picks another node than current upstream's
                                       (victims sorted) -- a documented upstream change.
    Victims per node are unique: the reprieve order is total (distinct start times)."""
    cands = preemption_candidates(pod, nodes, bound, pdbs)
    if cands == "fits":
        return ("fits", None, [], 0)
    if not cands:
        return ("unschedulable", None, [], 0)
    old, crit = pick_node(cands, sort_victims=False)
    new, crit_new = pick_node(cands, sort_victims=True)
    if old is None or old != new:
        return ("ambiguous", None, [], max(crit, crit_new))
    return ("bound", old, sorted(p["metadata"]["name"] for p in cands[old][0]), crit,
            cands[old][1])


P_SMALL = {"cpu": ["250m", "500m", "500m", "1", "1500m", "2"],
           "memory": ["256Mi", "512Mi", "1Gi", "1Gi", "2Gi"]}
P_INCOMING = {"cpu": ["100m", "1", "1500m", "2", "3", "4", "6"],
              "memory": ["64Mi", "1Gi", "2Gi", "3Gi", "4Gi", "6Gi"]}


def _preemption_pod(rng, name, ns, labels, scale, priority_class):
    req = {"cpu": _pick(rng, scale["cpu"]), "memory": _pick(rng, scale["memory"])}
    spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.2",
                            "resources": {"requests": req}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": spec}


def _anti_term(app):
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOSTNAME}]}}


def gen_preemption_world(rng, world, cases, max_unschedulable=0.12, excluded=False):
    """One preemption world: 3-8 nodes filled with bound pods, 0-2 PDBs, and up to
    `cases` incoming pods whose outcome preemption_outcome defines uniquely (at most
    max_unschedulable of them unschedulable: no candidate node, or preemptionPolicy
    Never; the rest preempt). excluded=True: only the cases left out as the documented
    v1.20 / current difference (excluded_outcome), expecting v1.20's node in "node" and
    current upstream's in "current"."""
    namespaces = [namespace_of(world), namespace_of(world) + "-b"]
    nodes = []
    for j in range(rng.randrange(3, 9)):
        name = "%s-n%d" % (world, j)
        labels = {HOSTNAME: name, WORLD_LABEL: world}
        if rng.random() < 0.5:
            labels[POOL] = _pick(rng, ["a", "b"])
        cap = {"cpu": _pick(rng, ["2", "4", "4", "8"]),
               "memory": _pick(rng, ["4Gi", "8Gi", "8Gi", "16Gi"]),
               "pods": str(_pick(rng, [3, 4, 5, 6, 8, 110, 110]))}
        spec = {"taints": [dict(INFRA_TAINT)]} if rng.random() < 0.15 else {}
        nodes.append({
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": spec,
            "status": {"capacity": dict(cap), "allocatable": dict(cap),
                       "conditions": [{"type": "Ready", "status": "True",
                                       "reason": "KubeletReady"}]}})
    bound = []
    classes = [None, None, "diff-pre-neg", "diff-pre-10", "diff-pre-50", "diff-low",
               "diff-low", "diff-pre-200", "diff-pre-500"]
    for n in nodes:
        mine = []
        for _ in range(rng.randrange(3, 12)):
            labels = {"app": _pick(rng, PDB_APPS + ["solo"])} if rng.random() < 0.85 else {}
            ns = namespaces[0] if rng.random() < 0.8 else namespaces[1]
            pod = _preemption_pod(rng, "%s-b%d" % (world, len(bound)), ns, labels, P_SMALL,
                                  _pick(rng, classes))
            pod["spec"]["nodeName"] = n["metadata"]["name"]
            if rng.random() < 0.1:
                pod["spec"]["containers"][0]["ports"] = [{"containerPort": 8080,
                                                          "hostPort": 8080}]
            if rng.random() < 0.08:
                pod["spec"]["affinity"] = _anti_term(_pick(rng, PDB_APPS))
            # Bound pods never overcommit a node (see _fits); their own anti-affinity and
            # ports are not checked against each other (no scheduler placed them).
            alloc = n["status"]["allocatable"]
            used = {k: sum(pod_requests(p)[k] for p in mine) for k in ("cpu", "memory")}
            req = pod_requests(pod)
            if (len(mine) + 1 > int(alloc["pods"]) or
                    any(used[k] + req[k] > parse_quantity(alloc[k], milli=(k == "cpu"))
                        for k in ("cpu", "memory")) or
                    (_host_port_set(pod) & set().union(*[_host_port_set(p) for p in mine]))):
                continue
            mine.append(pod)
            bound.append(pod)
    minutes = rng.sample(range(3 * len(bound) + 1), len(bound))
    for pod, m in zip(bound, minutes):
        pod["status"] = {"startTime": iso_time(START_BASE + 60 * m)}
    pdbs = []
    for i in range(_pick(rng, [0, 1, 1, 2, 2, 3])):
        pdbs.append({
            "apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "%s-pdb%d" % (world, i),
                         "namespace": namespaces[0] if rng.random() < 0.85 else namespaces[1]},
            "spec": {"minAvailable": 1,
                     "selector": {"matchLabels": {"app": _pick(rng, PDB_APPS)}}},
            "status": {"disruptionsAllowed": _pick(rng, [0, 0, 1, 2]), "currentHealthy": 0,
                       "desiredHealthy": 0, "expectedPods": 0, "observedGeneration": 1}})
        if rng.random() < 0.3:
            # Some matching pod already counted as disrupted (status.disruptedPods).
            b = pdbs[-1]
            match = [p["metadata"]["name"] for p in bound
                     if p["metadata"]["namespace"] == b["metadata"]["namespace"] and
                     label_selector_matches(b["spec"]["selector"], p["metadata"]["labels"])]
            if match:
                b["status"]["disruptedPods"] = {_pick(rng, match): iso_time(START_BASE)}
    incoming, expected = [], {}
    n_unsched = 0
    rejected = {"fits": 0, "ambiguous": 0, "unschedulable": 0}
    for k in range(cases):
        for _ in range(40):
            labels = {"app": _pick(rng, PDB_APPS)} if rng.random() < 0.8 else {}
            labels[JUDGED_LABEL] = "true"
            ns = namespaces[0] if rng.random() < 0.85 else namespaces[1]
            pc = _pick(rng, ["diff-high"] * 15 + ["diff-pre-500"] * 4 + ["diff-pre-200"] +
                       ["diff-high-never"])
            pod = _preemption_pod(rng, "%s-p%d" % (world, k), ns, labels, P_INCOMING, pc)
            spec = pod["spec"]
            spec["nodeSelector"] = {WORLD_LABEL: world}
            if rng.random() < 0.2:
                spec["nodeSelector"][POOL] = _pick(rng, ["a", "b"])
            if rng.random() < 0.3:
                spec["tolerations"] = [{"key": INFRA_TAINT["key"], "operator": "Equal",
                                        "value": "infra", "effect": "NoSchedule"}]
            if rng.random() < 0.15:
                spec["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080}]
            if rng.random() < 0.15:
                spec["affinity"] = _anti_term(_pick(rng, PDB_APPS))
            if excluded:
                ex = excluded_outcome(pod, nodes, bound, pdbs)
                if ex:
                    incoming.append(pod)
                    expected[pod["metadata"]["name"]] = {
                        "outcome": "bound", "node": ex[0][0], "victims": ex[0][1],
                        "criterion": 2, "pdb_violations": 0, "pdb_matters": True,
                        "current": {"node": ex[1][0], "victims": ex[1][1]}}
                    break
                continue
            out = preemption_outcome(pod, nodes, bound, pdbs)
            if out[0] == "bound" or (out[0] == "unschedulable" and
                                     n_unsched + 1 <= max_unschedulable * cases):
                n_unsched += out[0] == "unschedulable"
                incoming.append(pod)
                expected[pod["metadata"]["name"]] = {
                    "outcome": out[0], "node": out[1], "victims": out[2], "criterion": out[3],
                    "pdb_violations": out[4] if len(out) > 4 else 0,
                    # whether the PDBs change the node or the victims (vs. no PDB)
                    "pdb_matters": bool(pdbs) and out[:3] != preemption_outcome(
                        pod, nodes, bound, [])[:3]}
                break
            rejected[out[0]] += 1
    return {"name": world, "namespaces": namespaces, "nodes": nodes, "bound": bound,
            "pdbs": pdbs, "incoming": incoming, "expected": expected, "preemption": True,
            "rejected": rejected}


def generate_preemption(seed, worlds, cases_per_world, excluded=False):
    """Preemption worlds; deterministic in (seed, worlds, cases_per_world, excluded)."""
    rng = random.Random(seed)
    return [gen_preemption_world(random.Random(rng.getrandbits(64)), "w%d" % i,
                                 cases_per_world, excluded=excluded)
            for i in range(worlds)]
