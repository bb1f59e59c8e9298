#!/usr/bin/env python3
"""Scheduling invariants of a live cluster, read from kube-apiserver (faults).

Usage: check_invariants.py [--namespace NS] [--scheduler NAME] [--quiet]
Reads SERVER, CA and ADMIN_TOKEN from the environment (scripts/control-plane.sh writes them
to DIR/env). Prints one line per violation, then
  INVARIANTS pods=<n> bound=<n> pending=<n> gangs=<n> violations=<n>
and exits 0 when there is no violation, 1 otherwise, 2 when the API cannot be read.

Invariants (each violation is one line starting with VIOLATION):
  capacity   for every node and resource (cpu in millicores, memory in bytes, pods): the sum
             of the requests of the non-terminated pods bound to it <= its allocatable
             (upstream NodeResourcesFit / noderesources.Fit: sum of container requests, or
             the largest init container request if larger, plus spec.overhead).
  node       every bound pod's spec.nodeName names an existing node.
  twice      no pod is bound twice: at most one Scheduled event per pod uid (an event's
             .count > 1 counts as several) and its "to NODE" matches spec.nodeName.
  gang       every Coscheduling PodGroup (scheduling.x-k8s.io/v1alpha1, label
             scheduling.x-k8s.io/pod-group) has 0 or >= minMember members bound, never
             1..minMember-1 (all-or-nothing; scheduler-plugins coscheduling KEP).
             With --disrupted FILE (JSON {"NS/PODGROUP": n}: members bound and then deleted
             with their node, as the pod GC does; test/faults/load_churn.py writes it) a
             gang with b of minMember bound is "disrupted by node removal", not a
             violation, when b + n >= minMember (it was complete when bound); b + n <
             minMember stays a violation (partially bound by the scheduler itself).
  reason     every pending pod of SCHEDULER has PodScheduled=False or a FailedScheduling
             event (upstream scheduler.recordSchedulingFailure records both).
  gpu        GPU sharing, from the objects alone (no Phalanx code): every bound,
             non-terminated pod that asks for GPU shares in open-gpu-share's annotations
             (alibabacloud.com/gpu-milli per device, alibabacloud.com/gpu-count devices;
             hkust-adsl/kubernetes-scheduler-simulator pkg/type/open-gpu-share/utils) or in
             Alibaba gpushare's (a limit aliyun.com/gpu-mem; gpushare-scheduler-extender
             pkg/utils) names its devices in alibabacloud.com/gpu-index ("0-2") or
             ALIYUN_COM_GPU_MEM_IDX: gpu-count distinct indexes below the node's GPU count
             (allocatable nvidia.com/gpu, else capacity aliyun.com/gpu-count, else the
             alibabacloud.com/gpu-count label), scheduling.phalanx.dev/gpu-node (when
             present) equal to spec.nodeName, and per device the shares add up to at most
             1000 milli and the gpu-mem to at most the device's (aliyun.com/gpu-mem / count).
Only namespace NS (default: all) is checked for pods, events and PodGroups.
"""
import argparse
import json
import os
import re
import ssl
import sys
import urllib.error
import urllib.request

GANG_LABEL = "scheduling.x-k8s.io/pod-group"
SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
          "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
          "P": 1e15, "E": 1e18}


def quantity(s):
    """A resource.Quantity string as a float in base units ("500m" -> 0.5, "1Gi" -> 2**30)."""
    m = re.fullmatch(r"([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([A-Za-z]*)", str(s).strip())
    if not m or m.group(2) not in SUFFIX:
        raise ValueError(f"bad quantity {s!r}")
    return float(m.group(1)) * SUFFIX[m.group(2)]


def get(path):
    ctx = ssl.create_default_context(cafile=os.environ["CA"])
    req = urllib.request.Request(os.environ["SERVER"] + path,
                                 headers={"Authorization": "Bearer " + os.environ["ADMIN_TOKEN"]})
    with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
        return json.load(r)


def pod_requests(pod):
    """Effective requests (upstream computePodResourceRequest): max(sum(containers), max(init)) + overhead."""
    tot = {}
    for c in pod["spec"].get("containers", []):
        for k, v in (c.get("resources", {}).get("requests") or {}).items():
            tot[k] = tot.get(k, 0) + quantity(v)
    for c in pod["spec"].get("initContainers", []) or []:
        for k, v in (c.get("resources", {}).get("requests") or {}).items():
            tot[k] = max(tot.get(k, 0), quantity(v))
    for k, v in (pod["spec"].get("overhead") or {}).items():
        tot[k] = tot.get(k, 0) + quantity(v)
    tot["pods"] = 1
    return tot


def node_gpus(n):
    """(device count, aliyun.com/gpu-mem of one device or 0) of a node object."""
    st = n.get("status", {})
    alloc, cap = st.get("allocatable") or {}, st.get("capacity") or {}
    labels = n["metadata"].get("labels") or {}
    if "nvidia.com/gpu" in alloc:
        count = int(quantity(alloc["nvidia.com/gpu"]))
    elif "aliyun.com/gpu-count" in cap or "aliyun.com/gpu-count" in alloc:
        count = int(quantity(cap.get("aliyun.com/gpu-count", alloc.get("aliyun.com/gpu-count"))))
    else:
        try:
            count = int(labels.get("alibabacloud.com/gpu-count", "0"))
        except ValueError:
            count = 0
    mem = cap.get("aliyun.com/gpu-mem", alloc.get("aliyun.com/gpu-mem"))
    per = int(quantity(mem)) // count if mem is not None and count > 0 else 0
    return count, per


def gpu_ask(pod):
    """(devices, milli per device, aliyun gpu-mem) a pod asks for; (0, 0, 0) for none."""
    ann = pod["metadata"].get("annotations") or {}
    if "alibabacloud.com/gpu-milli" in ann or "alibabacloud.com/gpu-count" in ann:
        milli = int(ann.get("alibabacloud.com/gpu-milli", "1000"))
        count = int(ann.get("alibabacloud.com/gpu-count", "1"))
        return (count, milli, 0) if milli > 0 and count > 0 else (0, 0, 0)
    mem = 0
    for c in pod["spec"].get("containers", []):
        res = c.get("resources", {})
        v = (res.get("limits") or {}).get("aliyun.com/gpu-mem", (res.get("requests") or {}).get("aliyun.com/gpu-mem"))
        if v is not None:
            mem += int(quantity(v))
    return (1, 0, mem) if mem > 0 else (0, 0, 0)


def gpu_violations(nodes, pods):
    """The gpu invariant (see the module doc): one line per violation."""
    viol = []
    gpus = {n["metadata"]["name"]: node_gpus(n) for n in nodes}
    milli, mem = {}, {}  # (node, device) -> sum
    for p in pods:
        md, spec = p["metadata"], p["spec"]
        node = spec.get("nodeName", "")
        if not node or node not in gpus or p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        try:
            count, m, g = gpu_ask(p)
        except ValueError as e:
            viol.append(f"gpu: pod {md['namespace']}/{md['name']} has an unreadable GPU ask: {e}")
            continue
        if count == 0:
            continue
        key = f"{md['namespace']}/{md['name']}"
        ann = md.get("annotations") or {}
        idx = ann.get("alibabacloud.com/gpu-index", ann.get("ALIYUN_COM_GPU_MEM_IDX"))
        if idx is None:
            viol.append(f"gpu: pod {key} is bound to {node} without alibabacloud.com/gpu-index")
            continue
        on = ann.get("scheduling.phalanx.dev/gpu-node")
        if on is not None and on != node:
            viol.append(f"gpu: pod {key} is bound to {node} but its devices were chosen on {on}")
        try:
            devs = [int(x) for x in idx.split("-")]
        except ValueError:
            viol.append(f"gpu: pod {key}: gpu-index {idx!r} is not a list of device numbers")
            continue
        n, per = gpus[node]
        if len(set(devs)) != count or any(d < 0 or d >= n for d in devs):
            viol.append(f"gpu: pod {key} asks for {count} device(s) and has gpu-index {idx!r} "
                        f"on {node} with {n} GPU(s)")
            continue
        for d in devs:
            milli[(node, d)] = milli.get((node, d), 0) + (m if m else 0)
            if g:
                mem[(node, d)] = mem.get((node, d), 0) + g
    for (node, d), v in sorted(milli.items()):
        if v > 1000:
            viol.append(f"gpu: node {node} device {d} holds {v} milli-GPU > 1000")
    for (node, d), v in sorted(mem.items()):
        per = gpus[node][1]
        if per and v > per:
            viol.append(f"gpu: node {node} device {d} holds {v} aliyun.com/gpu-mem > {per}")
    return viol


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--namespace", default="")
    ap.add_argument("--scheduler", default="default-scheduler")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--disrupted", default="")
    a = ap.parse_args()
    ns = f"/namespaces/{a.namespace}" if a.namespace else ""
    lost = {}
    if a.disrupted:
        try:
            with open(a.disrupted) as f:
                lost = json.load(f) if os.path.getsize(a.disrupted) else {}
            if not isinstance(lost, dict) or not all(isinstance(v, int) for v in lost.values()):
                raise ValueError('expected an object {"NS/PODGROUP": members lost}')
        except (OSError, ValueError) as e:
            print(f"check_invariants: --disrupted {a.disrupted}: {e}", file=sys.stderr)
            return 2
    disrupted = 0
    try:
        nodes = get("/api/v1/nodes")["items"]
        pods = get(f"/api/v1{ns}/pods")["items"]
        events = get(f"/api/v1{ns}/events")["items"]
        try:
            pgs = get(f"/apis/scheduling.x-k8s.io/v1alpha1{ns}/podgroups")["items"]
        except urllib.error.HTTPError as e:
            if e.code != 404:
                raise
            pgs = []
    except Exception as e:  # noqa: BLE001 - any failure to read is exit 2
        print(f"check_invariants: cannot read the API at {os.environ.get('SERVER')}: {e}", file=sys.stderr)
        return 2
    viol = []
    alloc = {n["metadata"]["name"]: {k: quantity(v) for k, v in
                                      (n.get("status", {}).get("allocatable") or {}).items()}
             for n in nodes}
    used = {name: {} for name in alloc}
    bound = pending = 0
    sched_events = {}
    failed_events = set()
    for e in events:
        io = e.get("involvedObject", {})
        if io.get("kind") != "Pod":
            continue
        if e.get("reason") == "Scheduled":
            sched_events.setdefault(io.get("uid"), []).append(e)
        elif e.get("reason") == "FailedScheduling":
            failed_events.add(io.get("uid"))
    gang_bound, gang_pods = {}, {}
    for p in pods:
        md, spec, st = p["metadata"], p["spec"], p.get("status", {})
        key = f"{md['namespace']}/{md['name']}"
        node = spec.get("nodeName", "")
        g = (md.get("labels") or {}).get(GANG_LABEL)
        if g:
            gk = f"{md['namespace']}/{g}"
            gang_pods[gk] = gang_pods.get(gk, 0) + 1
            gang_bound.setdefault(gk, 0)
        if node:
            bound += 1
            if g:
                gang_bound[gk] += 1
            if node not in alloc:
                viol.append(f"node: pod {key} is bound to node {node}, which does not exist")
            elif st.get("phase") not in ("Succeeded", "Failed"):
                for k, v in pod_requests(p).items():
                    used[node][k] = used[node].get(k, 0) + v
            evs = sched_events.get(md["uid"], [])
            n = sum(max(1, int(e.get("count") or 1)) for e in evs)
            if n > 1:
                viol.append(f"twice: pod {key} has {n} Scheduled events: " +
                            "; ".join(e.get("message", "") for e in evs))
            for e in evs:
                m = re.search(r" to (\S+)$", e.get("message", ""))
                if m and m.group(1) != node:
                    viol.append(f"twice: pod {key} is bound to {node} but an event says: {e.get('message')}")
        elif spec.get("schedulerName", "default-scheduler") == a.scheduler and not md.get("deletionTimestamp"):
            pending += 1
            cond = any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                       for c in st.get("conditions") or [])
            if not cond and md["uid"] not in failed_events:
                viol.append(f"reason: pending pod {key} has neither PodScheduled=False nor a FailedScheduling event")
    for name, res in used.items():
        for k, v in res.items():
            cap = alloc[name].get(k)
            if cap is None:
                if v > 0 and k in ("cpu", "memory", "pods"):
                    viol.append(f"capacity: node {name} has no allocatable {k} but {v:g} requested")
                continue
            if v > cap + 1e-9:
                viol.append(f"capacity: node {name}: {k} requested {v:g} > allocatable {cap:g}")
    viol += gpu_violations(nodes, pods)
    for pg in pgs:
        gk = f"{pg['metadata']['namespace']}/{pg['metadata']['name']}"
        mm = int((pg.get("spec") or {}).get("minMember") or 1)
        b = gang_bound.get(gk, 0)
        if 0 < b < mm and b + lost.get(gk, 0) >= mm:
            disrupted += 1
        elif 0 < b < mm:
            viol.append(f"gang: PodGroup {gk} has {b} of minMember {mm} members bound "
                        f"({gang_pods.get(gk, 0)} members exist, {lost.get(gk, 0)} lost to node removal)")
    for v in viol:
        print("VIOLATION " + v)
    extra = f" disrupted={disrupted}" if a.disrupted else ""
    print(f"INVARIANTS pods={len(pods)} bound={bound} pending={pending} gangs={len(pgs)}{extra} "
          f"violations={len(viol)}")
    return 1 if viol else 0


if __name__ == "__main__":
    sys.exit(main())
