#!/usr/bin/env python3
"""Differential test: Phalanx vs upstream kube-scheduler v1.20.2 through the real API.

Usage: differential.py --phalanx BIN [--preemption | --volumes [--volume-kinds K,..]]
                       [--seed N] [--worlds N]
                       [--pods-per-world N] [--out DIR] [--keep] [--max-printed N]
                       [--max-reduced N] [--reduce-budget SECONDS]

With --preemption (e2e.differential_preemption) both schedulers run with DefaultPreemption
enabled on preemption worlds (generate.generate_preemption), one preemptor per world at a
time, and the node and the set of deleted pods per preemptor are compared; see
judge_preemption_all and main_preemption. With --volumes (e2e.differential_volumes) the
worlds are gen_volumes.py's (storage objects, one world per incoming pod) and both control
planes run kube-controller-manager (PV binder); the judging below is the same, and the PVs
bound per claim are compared as well (compare_volume_choices). The rest of this text is
about the default mode.

For each scheduler in turn (upstream first, then Phalanx), on a fresh control plane
(scripts/control-plane.sh start) holding the identical generated state (generate.py):
create every world's nodes, namespace and bound pods, start the scheduler, then judge the
incoming pods: per world one pod at a time (worlds in parallel, see generate.py for why
they are independent) -- create it, wait until it is bound or carries PodScheduled=False,
record the outcome, delete it, wait for the deletion, go on with the world's next pod. So
every incoming pod meets exactly the world's fixed state. Preemption (PostFilter) is
disabled in both profiles, so nothing else changes.

Upstream runs with --vmodule=generic_scheduler=10, which logs every Score plugin's node
list per pod ("Plugin X scores on ns/pod => [{node score} ...]"): that list is the exact
set of nodes upstream's Filter plugins found feasible (all nodes are evaluated:
percentageOfNodesToScore 100). With one feasible node upstream skips scoring and binds
it; with none the pod is unschedulable. So for every pod the harness knows upstream's
feasible set F, and judges Phalanx's outcome:
  F empty, Phalanx unschedulable     -> agreement (both unschedulable)
  Phalanx bound to upstream's node   -> agreement (same node)
  Phalanx bound to another node in F -> agreement (feasible by upstream's rules; the
                                        choice among feasible nodes is tie-break / score)
  anything else                      -> disagreement, printed as a reproducer: the
                                        world's nodes and bound pods, the pod, both
                                        outcomes; the first --max-reduced ones reduced
                                        with ddmin to a smallest world that still
                                        disagrees (reduce_disagreement).
Pods with |F| <= 1 do not depend on tie-breaking: for them the rule above is exactly
"same schedulable-or-not and same node".

The other direction (is a node upstream found feasible also feasible for Phalanx?) is
checked for every pod with |F| >= 2 on one node of F (reverse_checks): Phalanx judges a
copy of the world with every other node cordoned and must bind the pod to that node.
For pods both leave unschedulable, the FailedScheduling reasons per node count are
compared too, for information only (wording differs between versions).

Exit 0 when there is no disagreement, 1 otherwise (or on a harness error).
"""

import argparse
import collections
import http.client
import json
import os
import queue
import random
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402
import gen_volumes  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CP = os.path.join(ROOT, "scripts", "control-plane.sh")
POD_TIMEOUT = 60.0  # seconds without a decision before a pod counts as "no decision"


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


class HarnessError(Exception):
    pass


class Api:
    """Minimal Kubernetes REST client: one keep-alive HTTPS connection per thread."""

    def __init__(self, server, ca, token):
        m = re.match(r"https://([^:/]+):(\d+)", server)
        if not m:
            raise HarnessError("unexpected server URL %r" % server)
        self.host, self.port = m.group(1), int(m.group(2))
        self.ctx = ssl.create_default_context(cafile=ca)
        self.token = token
        self.local = threading.local()

    def connect(self, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                           timeout=timeout)

    def headers(self, body, content_type="application/json"):
        h = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        if body is not None:
            h["Content-Type"] = content_type
        return h

    def call(self, method, path, body=None, ok=(200, 201, 202), retries=3):
        data = None if body is None else json.dumps(body).encode()
        ctype = ("application/merge-patch+json" if method == "PATCH"
                 else "application/json")
        for attempt in range(retries + 1):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = self.connect()
            try:
                conn.request(method, path, body=data, headers=self.headers(body, ctype))
                resp = conn.getresponse()
                raw = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == retries:
                    raise
                continue
            out = json.loads(raw) if raw else {}
            if resp.status not in ok:
                raise HarnessError("%s %s: HTTP %d: %s" % (method, path, resp.status,
                                                          out.get("message", raw[:300])))
            return resp.status, out
        raise AssertionError("unreachable")


class PodWatch(threading.Thread):
    """Watches pods with the judged label (all pods with judged_only=False) in all
    namespaces; puts (type, pod) on a queue. Re-establishes the watch from the last
    resourceVersion if the stream ends."""

    def __init__(self, api, rv, out, judged_only=True):
        super().__init__(daemon=True)
        self.api, self.rv, self.out = api, rv, out
        self.judged_only = judged_only
        self.stop = False

    def run(self):
        sel = ("&labelSelector=" + generate.JUDGED_LABEL + "%3Dtrue") if self.judged_only else ""
        while not self.stop:
            conn = self.api.connect(timeout=None)
            try:
                conn.request("GET", "/api/v1/pods?watch=1&allowWatchBookmarks=true"
                             "&timeoutSeconds=1800%s&resourceVersion=%s"
                             % (sel, self.rv), headers=self.api.headers(None))
                resp = conn.getresponse()
                if resp.status != 200:
                    self.out.put(("ERROR", {"message": "watch: HTTP %d" % resp.status}))
                    return
                while not self.stop:
                    line = resp.readline()
                    if not line:
                        break
                    ev = json.loads(line)
                    obj = ev.get("object", {})
                    if ev.get("type") == "ERROR":
                        self.out.put(("ERROR", obj))
                        return
                    self.rv = obj.get("metadata", {}).get("resourceVersion", self.rv)
                    if ev.get("type") != "BOOKMARK":
                        self.out.put((ev["type"], obj))
            except (OSError, http.client.HTTPException, ValueError) as e:
                if self.stop:
                    return
                log("watch interrupted (%s); re-establishing" % e)
                time.sleep(0.2)
            finally:
                conn.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                env[k] = v
    return env


def pod_outcome(pod):
    """('bound', node) | ('unschedulable', message) | None while undecided."""
    node = pod.get("spec", {}).get("nodeName")
    if node:
        return ("bound", node)
    for c in pod.get("status", {}).get("conditions", []) or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return ("unschedulable", c.get("message", ""))
    return None


class Scheduler:
    """A scheduler process under test: start(cp_dir, workdir, tag) and stop(); its log
    goes to workdir/<kind>-<tag>.log."""

    name = "?"

    def __init__(self):
        self.proc = None
        self.logfile = None
        self.preemption = False  # True: DefaultPreemption (PostFilter) stays enabled

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.logfile:
            self.logfile.close()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


NO_PREEMPTION = """  plugins:
    postFilter:
      disabled:
      - name: DefaultPreemption
"""


class Upstream(Scheduler):
    name = "kube-scheduler v1.20.2"

    def start(self, cp_dir, work, tag):
        cache = subprocess.run([CP, "cache-dir"], check=True, capture_output=True,
                               text=True).stdout.strip()
        port = free_port()
        cfg = os.path.join(work, "upstream.yaml")
        # v1.20's default profile (closest v1beta1 profile to current upstream's default),
        # with DefaultPreemption (the only PostFilter plugin) disabled unless judging
        # preemption.
        with open(cfg, "w") as f:
            f.write("""apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: 1000
  burst: 2000
leaderElection:
  leaderElect: false
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:%d
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
""" % (os.path.join(cp_dir, "admin.kubeconfig"), port, port))
            if not self.preemption:
                f.write(NO_PREEMPTION)
        self.log_path = os.path.join(work, "upstream-%s.log" % tag)
        self.logfile = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [os.path.join(cache, "kube-scheduler"), "--config", cfg, "--secure-port=0",
             "--v=1", "--logtostderr=true"] +
            ([] if self.preemption else ["--vmodule=generic_scheduler=10"]),
            stdout=self.logfile, stderr=subprocess.STDOUT)

    def feasible_sets(self):
        """pod name -> sorted feasible node names, from the V(10) score lines."""
        out = {}
        pat = re.compile(r"Plugin \S+ scores on ([^/\s]+)/(\S+) => \[(.*)\]")
        with open(self.log_path, errors="replace") as f:
            for line in f:
                m = pat.search(line)
                if m:
                    out[m.group(2)] = sorted(re.findall(r"\{(\S+) -?\d+\}", m.group(3)))
        return out


class Phalanx(Scheduler):
    name = "phalanx"

    def __init__(self, binary):
        super().__init__()
        self.binary = binary

    def start(self, cp_dir, work, tag):
        cfg = os.path.join(work, "phalanx.yaml")
        # Current upstream's default profile, DefaultPreemption disabled as for upstream
        # unless judging preemption.
        with open(cfg, "w") as f:
            f.write("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 1000
  burst: 2000
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
""")
            if not self.preemption:
                f.write(NO_PREEMPTION)
        self.log_path = os.path.join(work, "phalanx-%s.log" % tag)
        self.logfile = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [self.binary, "run", "--config", cfg,
             "--kubeconfig", os.path.join(cp_dir, "phalanx.kubeconfig"),
             "--bind-address", "127.0.0.1:%d" % free_port(), "--identity", "diff"],
            stdout=self.logfile, stderr=subprocess.STDOUT)


def create_priority_classes(api):
    for pc, value in sorted(generate.ALL_PRIORITY_CLASSES.items()):
        obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
               "metadata": {"name": pc}, "value": value}
        if pc in generate.NEVER_CLASSES:
            obj["preemptionPolicy"] = "Never"
        api.call("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", obj)


def post_object(api, path, obj):
    """POST obj; a pod with a status (preemption worlds: status.startTime) or a
    PodDisruptionBudget then gets its status through the status subresource, since the
    API server drops the status on create and no kubelet or disruption controller runs."""
    api.call("POST", path, obj)
    if obj.get("status") and obj["kind"] in ("Pod", "PodDisruptionBudget"):
        api.call("PATCH", "%s/%s/status" % (path, obj["metadata"]["name"]),
                 {"status": obj["status"]})


def create_state(api, worlds):
    """The worlds' state, in dependency order, 4 parallel request streams per step:
    StorageClasses and PersistentVolumes (volume worlds), namespaces, nodes, CSINodes,
    PersistentVolumeClaims, bound pods, then PodDisruptionBudgets."""
    steps = [[] for _ in range(8)]
    for w in worlds:
        steps[0] += [("/apis/storage.k8s.io/v1/storageclasses", c) for c in w.get("classes", [])]
        steps[1] += [("/api/v1/persistentvolumes", v) for v in w.get("pvs", [])]
        steps[2] += [("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                              "metadata": {"name": ns}})
                     for ns in w["namespaces"]]
        steps[3] += [("/api/v1/nodes", n) for n in w["nodes"]]
        steps[4] += [("/apis/storage.k8s.io/v1/csinodes", c) for c in w.get("csinodes", [])]
        steps[5] += [("/api/v1/namespaces/%s/persistentvolumeclaims" % c["metadata"]["namespace"],
                      c) for c in w.get("pvcs", [])]
        steps[6] += [("/api/v1/namespaces/%s/pods" % p["metadata"]["namespace"], p)
                     for p in w["bound"]]
        # policy/v1beta1: the only version v1.20.2 serves (Phalanx discovers it).
        steps[7] += [("/apis/policy/v1beta1/namespaces/%s/poddisruptionbudgets"
                      % b["metadata"]["namespace"], b) for b in w.get("pdbs", [])]
    # The default ServiceAccount is not needed: the ServiceAccount admission plugin is off.
    errors = []

    def worker(chunk):
        try:
            for path, obj in chunk:
                post_object(api, path, obj)
        except Exception as e:  # reported below
            errors.append(e)

    for part in steps:
        threads = [threading.Thread(target=worker, args=(part[i::4],)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise HarnessError("creating the cluster state: %s" % errors[0])


STORAGE_SETTLE_TIMEOUT = 120.0


def wait_storage_settled(api, worlds):
    """Volume worlds: waits until kube-controller-manager's PV controller has finished
    with the generated state -- every PV with a claimRef Bound, every other PV
    Available, every pre-bound claim (spec.volumeName) Bound with
    pv.kubernetes.io/bind-completed -- so that the scheduler, started next, sees settled
    and identical inputs in both control planes. Unbound claims stay Pending (nothing
    binds them: WaitForFirstConsumer, or Immediate with no PV large enough; a claim
    pre-bound to a PV that another claim holds stays Pending too)."""
    want_pv = {}
    want_pvc = set()
    for w in worlds:
        for v in w.get("pvs", []):
            want_pv[v["metadata"]["name"]] = "Bound" if v["spec"].get("claimRef") else "Available"
        want_pvc |= gen_volumes.prebound_pairs(w)
    if not want_pv and not want_pvc:
        return
    deadline = time.time() + STORAGE_SETTLE_TIMEOUT
    while True:
        _, pvs = api.call("GET", "/api/v1/persistentvolumes")
        _, pvcs = api.call("GET", "/api/v1/persistentvolumeclaims")
        phase = {v["metadata"]["name"]: v.get("status", {}).get("phase") for v in pvs["items"]}
        bad = sorted(n for n, ph in want_pv.items() if phase.get(n) != ph)
        done = {"%s/%s" % (c["metadata"]["namespace"], c["metadata"]["name"])
                for c in pvcs["items"]
                if c.get("status", {}).get("phase") == "Bound" and
                gen_volumes.ANN_BIND_COMPLETED in (c["metadata"].get("annotations") or {})}
        bad += sorted(want_pvc - done)
        if not bad:
            return
        if time.time() > deadline:
            raise HarnessError("the PV controller did not settle the volume state within %d s "
                               "(%d objects, e.g. %s)" % (STORAGE_SETTLE_TIMEOUT, len(bad),
                                                          ", ".join(bad[:5])))
        time.sleep(0.5)


def claim_volumes(api, worlds):
    """{namespace/claim: spec.volumeName} for the judged pods' claims (volume worlds)."""
    want = set()
    for w in worlds:
        for c in w.get("pvcs", []):
            want.add("%s/%s" % (c["metadata"]["namespace"], c["metadata"]["name"]))
    if not want:
        return {}
    _, pvcs = api.call("GET", "/api/v1/persistentvolumeclaims")
    out = {}
    for c in pvcs["items"]:
        key = "%s/%s" % (c["metadata"]["namespace"], c["metadata"]["name"])
        if key in want:
            out[key] = c["spec"].get("volumeName", "")
    return out


def judge_all(api, sched, worlds):
    """Runs every world's incoming pods through the running scheduler, one pod per world
    at a time. Returns {pod name: outcome}."""
    _, lst = api.call("GET", "/api/v1/pods?labelSelector=%s%%3Dtrue&limit=1"
                      % generate.JUDGED_LABEL)
    events = queue.Queue()
    watch = PodWatch(api, lst["metadata"]["resourceVersion"], events)
    watch.start()
    pending = {w["name"]: collections.deque(w["incoming"]) for w in worlds}
    world_of, ns_of = {}, {}
    for w in worlds:
        for p in w["incoming"]:
            world_of[p["metadata"]["name"]] = w["name"]
            ns_of[p["metadata"]["name"]] = p["metadata"]["namespace"]
    inflight = {}  # pod name -> ("scheduling", deadline) | ("deleting", deadline)
    results = {}
    total = sum(len(w["incoming"]) for w in worlds)
    last_report = time.time()

    def start_next(world):
        if not pending[world]:
            return
        pod = pending[world].popleft()
        name = pod["metadata"]["name"]
        inflight[name] = ("scheduling", time.time() + POD_TIMEOUT)
        api.call("POST", "/api/v1/namespaces/%s/pods" % ns_of[name], pod)

    def delete(name):
        inflight[name] = ("deleting", time.time() + POD_TIMEOUT)
        api.call("DELETE", "/api/v1/namespaces/%s/pods/%s?gracePeriodSeconds=0"
                 % (ns_of[name], name), ok=(200, 202, 404))

    for world in sorted(pending):
        start_next(world)
    try:
        while inflight:
            try:
                typ, obj = events.get(timeout=1.0)
            except queue.Empty:
                typ, obj = None, None
            now = time.time()
            if typ == "ERROR":
                raise HarnessError("pod watch failed: %s" % obj.get("message"))
            if typ is not None:
                name = obj["metadata"]["name"]
                state = inflight.get(name)
                if state is not None:
                    if typ == "DELETED":
                        if state[0] == "deleting":
                            del inflight[name]
                            start_next(world_of[name])
                    elif state[0] == "scheduling":
                        out = pod_outcome(obj)
                        if out is not None:
                            results[name] = out
                            delete(name)
            for name, (phase, deadline) in list(inflight.items()):
                if now > deadline:
                    if phase == "scheduling":
                        results[name] = ("no decision", "no binding and no PodScheduled=False "
                                         "within %d s" % POD_TIMEOUT)
                        delete(name)
                    else:
                        raise HarnessError("pod %s not deleted within %d s" % (name, POD_TIMEOUT))
            if not sched.alive():
                raise HarnessError("%s exited with %s (log: %s)"
                                   % (sched.name, sched.proc.returncode, sched.log_path))
            if now - last_report > 15:
                last_report = now
                log("  %s: %d/%d pods judged" % (sched.name, len(results), total))
    finally:
        watch.stop = True
    return results


SETTLE = 3.0  # seconds a preemptor stays unschedulable, not nominated, without victims


def judge_preemption_all(api, sched, worlds):
    """Preemption worlds (generate.generate_preemption): runs every world's incoming pods
    (preemptors) through the running scheduler, one per world at a time, and plays the
    kubelet for the victims. Per case:
      1. create the preemptor;
      2. a bound pod of the world that gets a deletionTimestamp (both schedulers delete
         victims gracefully; without a kubelet they would stay Terminating) is a victim of
         the case: force-delete it (gracePeriodSeconds 0) -- the same for both schedulers;
         a bound pod deleted outright is a victim too;
      3. the case is decided when the preemptor is bound, or when it has stayed
         PodScheduled=False without nominatedNodeName and without any victim for SETTLE
         seconds (no candidate node), or after POD_TIMEOUT ("no decision");
      4. delete the preemptor, wait until it and every victim are gone, recreate the
         victims (same manifest, status.startTime set again), then start the world's next
         case -- so every case meets the world's fixed state. The scheduler sees the
         recreated pods before the next preemptor: one pod watch, in resourceVersion
         order.
    Returns {preemptor name: {"outcome": (kind, node or message), "victims": [names],
    "nominated": last nominatedNodeName seen}}. A DisruptionTarget condition that Phalanx
    patches onto victims first is only a status update and is ignored."""
    _, lst = api.call("GET", "/api/v1/pods?limit=1")
    events = queue.Queue()
    watch = PodWatch(api, lst["metadata"]["resourceVersion"], events, judged_only=False)
    watch.start()
    pending = {w["name"]: collections.deque(w["incoming"]) for w in worlds}
    world_of, bound_of = {}, {}
    for w in worlds:
        for p in w["incoming"]:
            world_of[p["metadata"]["name"]] = w["name"]
        for b in w["bound"]:
            world_of[b["metadata"]["name"]] = w["name"]
            bound_of[b["metadata"]["name"]] = b
    cur = {}  # world -> the case in flight
    results = {}
    total = sum(len(w["incoming"]) for w in worlds)
    last_report = time.time()

    def pods_path(ns):
        return "/api/v1/namespaces/%s/pods" % ns

    def start_next(world):
        if not pending[world]:
            cur.pop(world, None)
            return
        pod = pending[world].popleft()
        ns = pod["metadata"]["namespace"]
        cur[world] = {"pod": pod["metadata"]["name"], "ns": ns, "phase": "scheduling",
                      "deadline": time.time() + POD_TIMEOUT, "settle": None, "message": "",
                      "victims": set(), "forced": set(), "gone": set(), "nominated": ""}
        api.call("POST", pods_path(ns), pod)

    def decide(world, outcome):
        c = cur[world]
        results[c["pod"]] = {"outcome": outcome, "victims": c["victims"],
                             "nominated": c["nominated"]}
        c["phase"] = "deleting"
        c["deadline"] = time.time() + POD_TIMEOUT
        api.call("DELETE", "%s/%s?gracePeriodSeconds=0" % (pods_path(c["ns"]), c["pod"]),
                 ok=(200, 202, 404))

    def maybe_restore(world):
        c = cur[world]
        if c["phase"] != "deleted" or not c["victims"] <= c["gone"]:
            return
        for name in sorted(c["victims"]):
            b = bound_of[name]
            post_object(api, pods_path(b["metadata"]["namespace"]), b)
        start_next(world)

    for world in sorted(pending):
        start_next(world)
    try:
        while cur:
            try:
                typ, obj = events.get(timeout=0.5)
            except queue.Empty:
                typ, obj = None, None
            now = time.time()
            if typ == "ERROR":
                raise HarnessError("pod watch failed: %s" % obj.get("message"))
            name = obj["metadata"]["name"] if typ else None
            world = world_of.get(name)
            c = cur.get(world)
            if c is not None and name in bound_of:
                deleting = typ == "DELETED" or obj["metadata"].get("deletionTimestamp")
                if deleting:
                    if c["phase"] == "deleted" and name not in c["victims"]:
                        raise HarnessError("bound pod %s deleted after its case %s ended"
                                           % (name, c["pod"]))
                    c["victims"].add(name)
                    c["settle"] = None
                if typ == "DELETED":
                    c["gone"].add(name)
                    maybe_restore(world)
                elif deleting and name not in c["forced"]:
                    c["forced"].add(name)
                    api.call("DELETE", "%s/%s?gracePeriodSeconds=0"
                             % (pods_path(obj["metadata"]["namespace"]), name),
                             ok=(200, 202, 404))
            elif c is not None and name == c["pod"]:
                if typ == "DELETED":
                    if c["phase"] != "deleting":
                        raise HarnessError("preemptor %s deleted by someone else" % name)
                    c["phase"] = "deleted"
                    c["deadline"] = now + POD_TIMEOUT
                    maybe_restore(world)
                elif c["phase"] == "scheduling":
                    c["nominated"] = obj.get("status", {}).get("nominatedNodeName") or c[
                        "nominated"]
                    out = pod_outcome(obj)
                    if out and out[0] == "bound":
                        decide(world, out)
                    elif out and not c["nominated"] and not c["victims"]:
                        c["settle"] = c["settle"] or now
                        c["message"] = out[1]
                    else:
                        c["settle"] = None
            for world, c in list(cur.items()):
                if (c["phase"] == "scheduling" and c["settle"] is not None and
                        now - c["settle"] > SETTLE):
                    decide(world, ("unschedulable", c["message"]))
                elif now > c["deadline"]:
                    if c["phase"] == "scheduling":
                        decide(world, ("no decision", "not bound, and not unschedulable "
                                       "without nomination, within %d s" % POD_TIMEOUT))
                    else:
                        raise HarnessError("case %s: preemptor or victims (%s) not deleted "
                                           "within %d s" % (c["pod"], ", ".join(
                                               sorted(c["victims"] - c["gone"])), POD_TIMEOUT))
            if not sched.alive():
                raise HarnessError("%s exited with %s (log: %s)"
                                   % (sched.name, sched.proc.returncode, sched.log_path))
            if now - last_report > 15:
                last_report = now
                log("  %s: %d/%d preemption cases judged" % (sched.name, len(results), total))
    finally:
        watch.stop = True
    for r in results.values():
        r["victims"] = sorted(r["victims"])
    return results


class Session:
    """One scheduler kind on its own fresh control plane (with kube-controller-manager
    when controllers=True: volume worlds need the PV binder). judge(worlds) creates the
    worlds' state, then starts the scheduler (so its initial list holds the whole state),
    judges the worlds' incoming pods and stops the scheduler. Later judge() calls add
    further worlds to the same control plane (used by the reducer); earlier worlds stay,
    isolated by their world label and namespaces."""

    def __init__(self, sched, work, controllers=False):
        self.sched, self.work = sched, work
        self.cp_dir = os.path.join(work, "cp-" + sched.name.split()[0])
        t0 = time.time()
        r = subprocess.run([CP, "start", self.cp_dir], capture_output=True, text=True)
        if r.returncode != 0:
            raise HarnessError("control plane did not start:\n%s" % r.stderr[-2000:])
        if controllers:
            r = subprocess.run([CP, "controllers", self.cp_dir], capture_output=True, text=True)
            if r.returncode != 0:
                subprocess.run([CP, "stop", self.cp_dir], capture_output=True)
                raise HarnessError("kube-controller-manager did not start:\n%s"
                                   % r.stderr[-2000:])
        env = read_env(os.path.join(self.cp_dir, "env"))
        self.api = Api(env["SERVER"], env["CA"], env["ADMIN_TOKEN"])
        create_priority_classes(self.api)
        self.startup = time.time() - t0
        self.claims = {}  # volume worlds: namespace/claim -> volumeName after judging

    def judge(self, worlds, tag):
        """Returns ({pod name: outcome}, {pod name: upstream feasible nodes} or None); for
        volume worlds self.claims gets the claims' volumeName afterwards."""
        t0 = time.time()
        create_state(self.api, worlds)
        wait_storage_settled(self.api, worlds)
        t1 = time.time()
        self.sched.start(self.cp_dir, self.work, tag)
        try:
            judge = (judge_preemption_all if worlds and worlds[0].get("preemption")
                     else judge_all)
            results = judge(self.api, self.sched, worlds)
        finally:
            self.sched.stop()
        self.claims.update(claim_volumes(self.api, worlds))
        feasible = self.sched.feasible_sets() if hasattr(self.sched, "feasible_sets") else None
        if tag == "main":
            log("%s: %d pods judged in %.1f s (control plane %.1f s, state %.1f s)"
                % (self.sched.name, len(results), time.time() - t1, self.startup, t1 - t0))
        return results, feasible

    def close(self, keep=False):
        """Stops the control plane in the background; returns the process (or None)."""
        if keep:
            return None
        return subprocess.Popen([CP, "stop", self.cp_dir], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)


# ---- reducer ---------------------------------------------------------------------------

def rename_world(world, new):
    """A copy of world (nodes, bound pods, incoming pods) with every world-specific name
    -- world label value, namespaces, node and pod names, topology values -- moved to
    world `new`, so that it can be judged next to other copies without interference."""
    old = world["name"]
    s = json.dumps(world)
    s = s.replace('"%s-' % old, '"%s-' % new).replace('"%s"' % old, '"%s"' % new)
    s = s.replace('"diff-%s' % old, '"diff-%s' % new)
    return json.loads(s)


def subset_world(world, pod, keep):
    """The world restricted to the objects whose indices are in keep (nodes first, then
    bound pods; a bound pod goes with its node), with pod as its only incoming pod."""
    n = len(world["nodes"])
    nodes = [x for i, x in enumerate(world["nodes"]) if i in keep]
    names = {x["metadata"]["name"] for x in nodes}
    bound = [x for i, x in enumerate(world["bound"])
             if n + i in keep and x["spec"]["nodeName"] in names]
    out = {"name": world["name"], "namespaces": world["namespaces"], "nodes": nodes,
           "bound": bound, "incoming": [pod]}
    for k in STORAGE_KEYS:  # volume worlds: the storage objects stay whole
        if k in world:
            out[k] = world[k]
    return out


STORAGE_KEYS = ("kind", "classes", "pvs", "pvcs", "csinodes")


def _split(objs, n):
    k, r = divmod(len(objs), n)
    out, i = [], 0
    for j in range(n):
        size = k + (1 if j < r else 0)
        out.append(objs[i:i + size])
        i += size
    return [p for p in out if p]


def reduce_disagreement(sessions, world, pod, budget, seq):
    """ddmin (Zeller & Hildebrandt, "Simplifying and Isolating Failure-Inducing Input",
    2002) over the world's nodes and bound pods: a smallest world (1-minimal when the
    time budget in seconds allows) in which upstream and Phalanx still disagree on pod.
    Each ddmin step judges all its candidate worlds (subsets and complements) at once, as
    renamed worlds on the still-running control planes. Returns (world, upstream outcome,
    feasible nodes, phalanx outcome, steps) under the original names, or "not
    reproduced" when the whole world judged again (step 0) agrees."""
    up_s, ph_s = sessions
    deadline = time.time() + budget
    objs = list(range(len(world["nodes"]) + len(world["bound"])))
    best, n, steps = None, 2, 0
    first = True
    while objs and time.time() < deadline:
        n = min(n, len(objs))
        parts = _split(objs, n)
        subsets = parts if len(parts) > 1 else [[]]
        complements = [[o for o in objs if o not in p] for p in parts] if len(parts) > 1 else []
        cands = subsets + complements
        if first:
            # Step 0: the whole world again, alone -- does the disagreement reproduce?
            cands, subsets = [objs], []
        worlds = []
        for keep in cands:
            worlds.append(rename_world(subset_world(world, pod, set(keep)),
                                       "%sr%d" % (world["name"], seq[0])))
            seq[0] += 1
        up, up_f = up_s.judge(worlds, "reduce")
        ph, _ = ph_s.judge(worlds, "reduce")
        steps += 1
        hit = None
        for i, (keep, w) in enumerate(zip(cands, worlds)):
            name = w["incoming"][0]["metadata"]["name"]
            u, p = up.get(name), ph.get(name)
            feasible = (up_f.get(name) or [u[1]]) if u and u[0] == "bound" else []
            if judge_pair(u, feasible, p) is None:
                hit = (i < len(subsets), keep, w, u, feasible, p)
                break
        if first:
            first = False
            if hit is None:
                return "not reproduced"
            best = hit[1:]
            continue
        if hit is not None:
            best = hit[1:]
            objs = hit[1]
            n = 2 if hit[0] else max(n - 1, 2)
        elif n < len(objs):
            n = min(2 * n, len(objs))
        else:
            break
    if best is None:
        return None
    keep, w, u, feasible, p = best
    # Report it under the original names (a renamed copy would only confuse).
    old, new = world["name"], w["name"]
    fix = lambda x: x.replace(new + "-", old + "-")
    back = rename_world(w, old)
    u = None if u is None else (u[0], fix(u[1]))
    p = None if p is None else (p[0], fix(p[1]))
    return back, u, [fix(f) for f in feasible], p, steps


# ---- reporting -------------------------------------------------------------------------

def to_yaml(obj, indent=0):
    """A small YAML emitter for the reproducers (dicts, lists, str, int, bool)."""
    pad = "  " * indent
    if isinstance(obj, dict):
        if not obj:
            return pad + "{}\n"
        out = ""
        for k, v in obj.items():
            if isinstance(v, (dict, list)) and v:
                out += "%s%s:\n%s" % (pad, k, to_yaml(v, indent + 1))
            else:
                out += "%s%s: %s\n" % (pad, k, scalar(v))
        return out
    if isinstance(obj, list):
        out = ""
        for v in obj:
            sub = to_yaml(v, indent + 1) if isinstance(v, (dict, list)) else pad + "  " + scalar(v) + "\n"
            out += pad + "- " + sub[len(pad) + 2:]
        return out
    return pad + scalar(obj) + "\n"


def scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if v == {}:
        return "{}"
    if v == []:
        return "[]"
    return json.dumps(str(v))


def fmt_outcome(o):
    if o is None:
        return "not judged"
    if o[0] == "bound":
        return "bound to " + o[1]
    return "%s (%s)" % (o[0], o[1])


def reproducer(world, pod, up, feasible, ph, note=""):
    lines = ["---- DISAGREEMENT: pod %s/%s (world %s, %d nodes, %d bound pods%s)"
             % (pod["metadata"]["namespace"], pod["metadata"]["name"], world["name"],
                len(world["nodes"]), len(world["bound"]), note),
             "upstream v1.20.2: %s; feasible nodes: %s" % (fmt_outcome(up),
                                                           ", ".join(feasible) or "none"),
             "phalanx:          %s" % fmt_outcome(ph),
             "# reproducer: create these objects, then the pod, with each scheduler",
             to_yaml({"apiVersion": "v1", "kind": "List",
                      "items": (world.get("classes", []) + world.get("pvs", []) +
                                world["nodes"] + world.get("csinodes", []) +
                                world.get("pvcs", []) + world["bound"] + [pod])}).rstrip()]
    return "\n".join(lines)


def judge_pair(u, feasible, p):
    """The kind of agreement between upstream outcome u (with its feasible node set) and
    Phalanx outcome p, or None for a disagreement (see the module docstring)."""
    if u is None or u[0] == "no decision" or p is None:
        return None
    if p[0] == "unschedulable" and u[0] == "unschedulable":
        return "both_unschedulable"
    if p[0] == "bound" and u[0] == "bound" and p[1] == u[1]:
        return "same_node"
    if p[0] == "bound" and p[1] in feasible:
        return "other_feasible_node"
    return None


def reason_counts(message, upstream):
    """FailedScheduling message -> {reason: node count}, in one wording: v1.20's
    "didn't match Pod's node affinity" and "had taint {..}, that the pod didn't
    tolerate" read as current upstream's "node affinity/selector" and "had untolerated
    taint {..}"; v1.20's extra generic InterPodAffinity reason "didn't match pod
    affinity/anti-affinity" (ErrReasonAffinityNotMatch, dropped upstream since) is left
    out."""
    body = message.split(":", 1)[-1].strip().rstrip(".")
    total = re.match(r"0/(\d+) nodes", message)
    out = collections.Counter()
    for part in re.split(r", (?=\d+ )", body):
        n, _, r = part.partition(" ")
        if not n.isdigit():
            # Current upstream gives a PreFilter rejection without a node count
            # ("0/N nodes are available: pod has unbound immediate ..."); v1.20 counts it
            # on all N nodes.
            if total and part:
                out[part] += int(total.group(1))
            continue
        if upstream and r == "node(s) didn't match pod affinity/anti-affinity":
            continue
        r = r.replace("node(s) didn't match Pod's node affinity/selector",
                      "node(s) didn't match Pod's node affinity")
        r = re.sub(r"node\(s\) had taint (\{.*?\}), that the pod didn't tolerate",
                   r"node(s) had untolerated taint \1", r)
        out[r] += int(n)
    return out


def tolerates_cordon(pod):
    """Whether the pod tolerates node.kubernetes.io/unschedulable:NoSchedule (then
    NodeUnschedulable lets it onto cordoned nodes)."""
    for t in pod["spec"].get("tolerations", []):
        key_ok = t.get("key", "") in ("", "node.kubernetes.io/unschedulable") and (
            t.get("key") or t.get("operator") == "Exists")
        if key_ok and t.get("effect", "") in ("", "NoSchedule"):
            return True
    return False


def reverse_checks(worlds, up, up_feasible, ph, seed):
    """The other direction: is a node upstream found feasible also feasible for Phalanx?
    For each pod upstream bound with >= 2 feasible nodes, one target node T: upstream's
    node when Phalanx chose another one, else a seeded pick among upstream's other
    feasible nodes. The check world is a renamed copy of the pod's world in which every
    node but T is cordoned (spec.unschedulable) -- cordoning changes no Filter result on
    T: NodeUnschedulable looks at T only, PodTopologySpread counts cordoned nodes
    (nodeTaintsPolicy Ignore; v1.20 likewise) and InterPodAffinity ignores it. Pods that
    tolerate the unschedulable taint are skipped. Returns [(check world, original world,
    pod, T)]."""
    rng = random.Random(seed)
    out = []
    for w in worlds:
        for pod in w["incoming"]:
            name = pod["metadata"]["name"]
            u, p, f = up.get(name), ph.get(name), up_feasible.get(name) or []
            if not u or u[0] != "bound" or len(f) < 2 or tolerates_cordon(pod):
                continue
            if p and p[0] == "bound" and p[1] != u[1]:
                target = u[1]
            else:
                others = [n for n in f if not (p and p[0] == "bound" and n == p[1])]
                target = others[rng.randrange(len(others))]
            check = json.loads(json.dumps(w))
            check["incoming"] = [pod]
            for n in check["nodes"]:
                if n["metadata"]["name"] != target:
                    n["spec"]["unschedulable"] = True
            check = rename_world(check, "%sx%s" % (w["name"], name.rsplit("-p", 1)[1]))
            out.append((check, w, pod, target))
    return out


def compare(worlds, up, up_feasible, ph):
    """Counts per kind of agreement, and the disagreements as (world, pod, upstream
    outcome, upstream feasible nodes, phalanx outcome)."""
    counts = collections.Counter()
    repro, mismatches = [], []
    for w in worlds:
        for pod in w["incoming"]:
            name = pod["metadata"]["name"]
            u, p = up.get(name), ph.get(name)
            counts["compared"] += 1
            if u is None or u[0] == "no decision":
                counts["upstream_no_decision"] += 1
                repro.append((w, pod, u, [], p))
                counts["disagree"] += 1
                continue
            if u[0] == "bound":
                feasible = up_feasible.get(name) or [u[1]]
            else:
                feasible = []
            if len(feasible) <= 1:
                counts["tiebreak_free"] += 1
            agree = judge_pair(u, feasible, p)
            if agree:
                counts[agree] += 1
                counts["agree"] += 1
                if agree == "both_unschedulable":
                    if reason_counts(u[1], True) == reason_counts(p[1], False):
                        counts["same_reasons"] += 1
                    else:
                        counts["reason_mismatch"] += 1
                        mismatches.append("%s/%s\n  upstream: %s\n  phalanx:  %s" % (
                            pod["metadata"]["namespace"], name, u[1], p[1]))
            else:
                counts["disagree"] += 1
                repro.append((w, pod, u, feasible, p))
    return counts, repro, mismatches


# ---- preemption mode (--preemption) ----------------------------------------------------

def preemption_pair(u, p):
    """Whether upstream's and Phalanx's results of one preemption case agree: both bound
    to the same node with the same set of deleted (victim) pods, or both unschedulable
    with no pod deleted. Returns "preempted", "both_unschedulable" or None."""
    if not u or not p:
        return None
    uo, po = u["outcome"], p["outcome"]
    if uo[0] != po[0] or u["victims"] != p["victims"]:
        return None
    if uo[0] == "bound" and uo[1] == po[1]:
        return "preempted"
    if uo[0] == "unschedulable" and not u["victims"]:
        return "both_unschedulable"
    return None


def model_agrees(expected, r):
    """Whether a scheduler's result is the generator's prediction (v1.20.2's rules)."""
    if not r or r["outcome"][0] != expected["outcome"]:
        return False
    return r["victims"] == expected["victims"] and (
        expected["outcome"] != "bound" or r["outcome"][1] == expected["node"])


def fmt_preemption(r):
    if r is None:
        return "not judged"
    return "%s; deleted: %s; nominatedNodeName: %s" % (
        fmt_outcome(r["outcome"]), ", ".join(r["victims"]) or "none", r["nominated"] or "-")


def preemption_reproducer(world, pod, u, p):
    e = world["expected"][pod["metadata"]["name"]]
    lines = ["---- DISAGREEMENT (preemption): pod %s/%s (world %s, %d nodes, %d bound pods, "
             "%d PDBs)" % (pod["metadata"]["namespace"], pod["metadata"]["name"],
                           world["name"], len(world["nodes"]), len(world["bound"]),
                           len(world["pdbs"])),
             "generator (v1.20.2 rules): %s%s; victims: %s" % (
                 e["outcome"], " on " + e["node"] if e["node"] else "",
                 ", ".join(e["victims"]) or "none") +
             ("; decided by %s" % generate.CRITERIA[e["criterion"]]
              if e["outcome"] == "bound" else ""),
             "upstream v1.20.2: %s" % fmt_preemption(u),
             "phalanx:          %s" % fmt_preemption(p),
             "# reproducer: create these objects (bound pods' and PDBs' status through the "
             "status subresource), then the pod, with each scheduler; force-delete pods "
             "that get a deletionTimestamp",
             to_yaml({"apiVersion": "v1", "kind": "List",
                      "items": world["nodes"] + world["bound"] + world["pdbs"] + [pod]}).rstrip()]
    return "\n".join(lines)


def compare_preemption(worlds, up, ph):
    counts = collections.Counter()
    repro, model_mismatches = [], []
    for w in worlds:
        for pod in w["incoming"]:
            name = pod["metadata"]["name"]
            u, p, e = up.get(name), ph.get(name), w["expected"][name]
            counts["compared"] += 1
            counts["expect_" + e["outcome"]] += 1
            if model_agrees(e, u):
                counts["upstream_as_model"] += 1
            else:
                model_mismatches.append(preemption_reproducer(w, pod, u, p))
            if model_agrees(e, p):
                counts["phalanx_as_model"] += 1
            agree = preemption_pair(u, p)
            if agree:
                counts["agree"] += 1
                counts[agree] += 1
                if agree == "preempted":
                    counts["victims"] += len(u["victims"])
                    counts["pdb_violating_cases"] += e["pdb_violations"] > 0
                    counts["pdb_matters"] += e["pdb_matters"]
                    counts["criterion_%d" % e["criterion"]] += e["outcome"] == "bound"
                    counts["nominated_same"] += (u["nominated"] == u["outcome"][1] and
                                                 p["nominated"] == p["outcome"][1])
                else:
                    counts["never"] += (pod["spec"].get("priorityClassName") in
                                        generate.NEVER_CLASSES)
            else:
                counts["disagree"] += 1
                repro.append(preemption_reproducer(w, pod, u, p))
    return counts, repro, model_mismatches


def report_excluded(worlds, up, ph, seconds, args):
    """--excluded: the cases the generator leaves out as the documented v1.20 / current
    difference (generate.excluded_outcome). Upstream v1.20.2 must take v1.20's node and
    Phalanx current upstream's (each with that node's victims)."""
    counts = collections.Counter()
    for w in worlds:
        for pod in w["incoming"]:
            name = pod["metadata"]["name"]
            e = w["expected"][name]
            counts["judged"] += 1
            counts["upstream_v120"] += model_agrees(e, up.get(name))
            counts["phalanx_current"] += model_agrees(dict(e, **e["current"]), ph.get(name))
            if not (model_agrees(e, up.get(name)) and
                    model_agrees(dict(e, **e["current"]), ph.get(name))):
                print(preemption_reproducer(w, pod, up.get(name), ph.get(name)) +
                      "\n(current upstream's reading: %s; victims: %s)"
                      % (e["current"]["node"], ", ".join(e["current"]["victims"])))
    print("differential preemption, excluded cases only (seed %d, %d worlds x <= %d cases, %.0f s):"
          % (args.seed, len(worlds), args.pods_per_world, seconds))
    print("  cases judged:                           %d" % counts["judged"])
    print("  upstream v1.20.2 took v1.20's node:     %d" % counts["upstream_v120"])
    print("  phalanx took current upstream's node:   %d" % counts["phalanx_current"])
    return 0 if counts["judged"] == counts["upstream_v120"] == counts["phalanx_current"] else 1


def main_preemption(args):
    worlds = generate.generate_preemption(args.seed, args.worlds, args.pods_per_world,
                                          excluded=args.excluded)
    n_cases = sum(len(w["incoming"]) for w in worlds)
    rejected = collections.Counter()
    for w in worlds:
        rejected.update(w["rejected"])
    log("seed %d: %d preemption worlds, %d nodes, %d bound pods, %d PDBs, %d preemption "
        "cases; DefaultPreemption enabled in both schedulers (generator left out %d pods "
        "that fit without preemption, %d unschedulable ones over its 12%% share, %d whose "
        "node v1.20.2's rules do not define)"
        % (args.seed, len(worlds), sum(len(w["nodes"]) for w in worlds),
           sum(len(w["bound"]) for w in worlds), sum(len(w["pdbs"]) for w in worlds),
           n_cases, rejected["fits"], rejected["unschedulable"], rejected["ambiguous"]))
    work = args.out or tempfile.mkdtemp(prefix="phalanx-diff-preemption.")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    results, stopping = {}, []
    try:
        try:
            for kind, sched in (("upstream", Upstream()),
                                ("phalanx", Phalanx(os.path.abspath(args.phalanx)))):
                sched.preemption = True
                sess = Session(sched, work)
                try:
                    results[kind], _ = sess.judge(worlds, "main")
                finally:
                    # Upstream's control plane stops while Phalanx's starts.
                    stopping.append(sess.close(args.keep))
        finally:
            for proc in stopping:
                if proc:
                    proc.wait()
    except HarnessError as e:
        print("FAIL: %s" % e, file=sys.stderr)
        for f in ("upstream-main.log", "phalanx-main.log"):
            p = os.path.join(work, f)
            if os.path.exists(p):
                with open(p, errors="replace") as fh:
                    tail = fh.readlines()[-15:]
                print("---- last lines of %s ----\n%s" % (f, "".join(tail)), file=sys.stderr)
        print("(logs kept in %s)" % work, file=sys.stderr)
        return 1
    if args.excluded:
        return report_excluded(worlds, results["upstream"], results["phalanx"],
                               time.time() - t0, args)
    counts, repro, model_mismatches = compare_preemption(worlds, results["upstream"],
                                                         results["phalanx"])
    with open(os.path.join(work, "outcomes.json"), "w") as f:
        json.dump(results, f, indent=0, sort_keys=True)
    with open(os.path.join(work, "disagreements.txt"), "w") as f:
        f.write("\n\n".join(repro) + "\n")
    with open(os.path.join(work, "model-mismatches.txt"), "w") as f:
        f.write("\n\n".join(model_mismatches) + "\n")
    for r in repro[:args.max_printed]:
        print(r)
    if len(repro) > args.max_printed:
        print("(%d more reproducers in %s/disagreements.txt)"
              % (len(repro) - args.max_printed, work))
    print("differential preemption (seed %d, %d worlds x %d cases, %.0f s):"
          % (args.seed, len(worlds), args.pods_per_world, time.time() - t0))
    print("  preemption cases compared:              %d (%d expected to preempt, %d expected "
          "unschedulable)" % (counts["compared"], counts["expect_bound"],
                               counts["expect_unschedulable"]))
    print("  agreements:                             %d" % counts["agree"])
    print("    same node, same deleted pods:         %d (%d victims in all; nominatedNodeName "
          "= that node in both: %d)" % (counts["preempted"], counts["victims"],
                                        counts["nominated_same"]))
    print("      with PDB-violating victims:         %d (PDBs change node or victims: %d)"
          % (counts["pdb_violating_cases"], counts["pdb_matters"]))
    for i, c in enumerate(generate.CRITERIA):
        print("      decided by %-35s %d" % (c + ":", counts["criterion_%d" % i]))
    print("    both unschedulable, nothing deleted:  %d (preemptionPolicy Never: %d)"
          % (counts["both_unschedulable"], counts["never"]))
    print("  as the generator predicts (v1.20.2 rules): upstream %d, phalanx %d of %d%s"
          % (counts["upstream_as_model"], counts["phalanx_as_model"], counts["compared"],
             "" if counts["upstream_as_model"] == counts["compared"]
             else " (see model-mismatches.txt with --out)"))
    print("  disagreements:                          %d" % counts["disagree"])
    if counts["disagree"]:
        print("FAIL: %d disagreements (reproducers, outcomes and scheduler logs in %s)"
              % (counts["disagree"], work))
        return 1
    if not args.out and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def compare_volume_choices(worlds, up, up_claims, ph, ph_claims):
    """Volume worlds: the PVs bound to each judged pod's unbound WaitForFirstConsumer
    claims. With distinct PV capacities and claim requests upstream's binder has one
    choice per node (gen_volumes), so: both bound to the same node -> the same PV per
    claim, else a disagreement; and every bound pod's PVs against the generator's model
    of FindMatchingVolume (gen_volumes.expected_pvs) -- for upstream informational (it
    checks the model), for Phalanx a disagreement when upstream matched the model.
    Returns (counts, [reproducer text])."""
    counts = collections.Counter()
    repro = []
    for w in worlds:
        nodes = {n["metadata"]["name"]: n for n in w["nodes"]}
        for pod in w["incoming"]:
            name, ns = pod["metadata"]["name"], pod["metadata"]["namespace"]
            u, p = up.get(name), ph.get(name)
            got = {}
            for kind, out, claims in (("upstream", u, up_claims), ("phalanx", p, ph_claims)):
                if not out or out[0] != "bound":
                    continue
                model = gen_volumes.expected_pvs(w, pod, nodes[out[1]]) or {}
                got[kind] = {c: claims.get("%s/%s" % (ns, c), "") for c in model}
                counts["%s_bound_claims" % kind] += len(model)
                counts["%s_as_model" % kind] += got[kind] == model
                counts["%s_bound" % kind] += 1
                if kind == "phalanx" and got[kind] != model and u and u[0] == "bound" and \
                        got.get("upstream") == gen_volumes.expected_pvs(w, pod, nodes[u[1]]):
                    counts["disagree"] += 1
                    repro.append(reproducer(w, pod, u, [], p,
                                            "; PVs: phalanx %s, v1.20.2's rule on its node %s"
                                            % (got[kind], model)))
                    got[kind] = None  # counted once
            if u and p and u[0] == p[0] == "bound" and u[1] == p[1] and got.get("phalanx"):
                counts["same_node_pvs_compared"] += 1
                if got["upstream"] == got["phalanx"]:
                    counts["same_node_same_pvs"] += 1
                else:
                    counts["disagree"] += 1
                    repro.append(reproducer(w, pod, u, [], p, "; same node, other PVs: "
                                            "upstream %s, phalanx %s" % (got["upstream"],
                                                                         got["phalanx"])))
    return counts, repro


def volume_census(worlds):
    """What the volume worlds hold: world kinds and the judged pods' claim kinds."""
    c = collections.Counter()
    for w in worlds:
        c["kind_" + w["kind"]] += 1
        by_name = {x["metadata"]["name"]: x for x in w["pvcs"]}
        paired = gen_volumes.prebound_pairs(w)
        c["pvs"] += len(w["pvs"])
        c["csinodes"] += len(w["csinodes"])
        for pod in w["incoming"]:
            for v in pod["spec"].get("volumes", []):
                claim = by_name.get(v["persistentVolumeClaim"]["claimName"])
                if claim is None:
                    c["claim_missing"] += 1
                elif claim["spec"].get("volumeName"):
                    c["claim_bound" if "%s/%s" % (claim["metadata"]["namespace"],
                                                  claim["metadata"]["name"]) in paired
                      else "claim_prebound_taken"] += 1
                elif claim["spec"]["storageClassName"].endswith("-imm"):
                    c["claim_immediate_unbound"] += 1
                else:
                    c["claim_wffc"] += 1
                    c["claim_wffc_selector"] += "selector" in claim["spec"]
    return c


def repro_needed_later(args):
    """The upstream control plane stays up for the reducer unless reduction is off."""
    return args.max_reduced > 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--phalanx", required=True)
    ap.add_argument("--seed", type=int, default=20210113)
    ap.add_argument("--worlds", type=int, default=40)
    ap.add_argument("--pods-per-world", type=int, default=None,
                    help="incoming pods per world (default 60; with --preemption 14)")
    ap.add_argument("--preemption", action="store_true",
                    help="judge preemption cases (DefaultPreemption enabled): victims and "
                    "node per preemptor")
    ap.add_argument("--volumes", action="store_true",
                    help="volume worlds (gen_volumes): StorageClasses, static PVs, claims, "
                    "CSINodes; kube-controller-manager in both control planes; placements "
                    "and the PVs bound per claim compared")
    ap.add_argument("--volume-kinds", default=",".join(gen_volumes.KINDS),
                    help="with --volumes: template world kinds in turn (comma-separated "
                    "from %s)" % ", ".join(gen_volumes.KINDS))
    ap.add_argument("--excluded", action="store_true",
                    help="with --preemption: judge only the cases the generator leaves out "
                    "as the documented v1.20 / current difference (upstream must take "
                    "v1.20's node, Phalanx current upstream's)")
    ap.add_argument("--out", help="directory for logs and reproducers (default: temp, removed)")
    ap.add_argument("--keep", action="store_true", help="keep the control planes running")
    ap.add_argument("--max-printed", type=int, default=20,
                    help="print at most this many reproducers (all go to OUT/disagreements.txt)")
    ap.add_argument("--max-reduced", type=int, default=3,
                    help="reduce at most this many disagreements with ddmin (0: none)")
    ap.add_argument("--reduce-budget", type=float, default=300,
                    help="seconds the reducer may take in all")
    args = ap.parse_args()
    if args.pods_per_world is None:
        args.pods_per_world = 14 if args.preemption else 8 if args.volumes else 60
    if args.preemption:
        return main_preemption(args)

    if args.volumes:
        kinds = tuple(k for k in args.volume_kinds.split(",") if k)
        bad = [k for k in kinds if k not in gen_volumes.KINDS]
        if bad or not kinds:
            ap.error("--volume-kinds: unknown kind(s) %s (known: %s)"
                     % (", ".join(bad) or "(none)", ", ".join(gen_volumes.KINDS)))
        worlds = gen_volumes.generate_volumes(args.seed, args.worlds, args.pods_per_world,
                                              kinds)
    else:
        worlds = generate.generate(args.seed, args.worlds, args.pods_per_world)
    n_nodes = sum(len(w["nodes"]) for w in worlds)
    n_bound = sum(len(w["bound"]) for w in worlds)
    n_pods = sum(len(w["incoming"]) for w in worlds)
    log("seed %d: %d worlds, %d nodes, %d bound pods, %d incoming pods; preemption "
        "(PostFilter DefaultPreemption) disabled in both schedulers%s"
        % (args.seed, len(worlds), n_nodes, n_bound, n_pods,
           "; volume worlds (one per pod, from %d templates), kube-controller-manager "
           "running" % args.worlds if args.volumes else ""))
    work = args.out or tempfile.mkdtemp(prefix="phalanx-diff.")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    sessions = []
    try:
        try:
            up_s = Session(Upstream(), work, controllers=args.volumes)
            sessions.append(up_s)
            up, up_feasible = up_s.judge(worlds, "main")
            if not repro_needed_later(args):
                stopping = up_s.close(args.keep)
                sessions.remove(up_s)
                if stopping:
                    stopping.wait()
            ph_s = Session(Phalanx(os.path.abspath(args.phalanx)), work,
                           controllers=args.volumes)
            sessions.append(ph_s)
            ph, _ = ph_s.judge(worlds, "main")
            counts, disagreements, mismatches = compare(worlds, up, up_feasible, ph)
            vol_counts, vol_repro = collections.Counter(), []
            if args.volumes:
                vol_counts, vol_repro = compare_volume_choices(worlds, up, up_s.claims, ph,
                                                               ph_s.claims)
            with open(os.path.join(work, "reason-mismatches.txt"), "w") as f:
                f.write("\n".join(mismatches) + "\n")
            with open(os.path.join(work, "outcomes.json"), "w") as f:
                json.dump({"upstream": up, "upstream_feasible": up_feasible, "phalanx": ph},
                          f, indent=0, sort_keys=True)
            checks = reverse_checks(worlds, up, up_feasible, ph, args.seed)
            if checks:
                rev, _ = ph_s.judge([c[0] for c in checks], "reverse")
                for check, w, pod, target in checks:
                    cname = check["incoming"][0]["metadata"]["name"]
                    want = target.replace(w["name"] + "-", check["name"] + "-", 1)
                    got = rev.get(cname)
                    counts["reverse_checked"] += 1
                    if got == ("bound", want):
                        counts["reverse_ok"] += 1
                    else:
                        counts["disagree"] += 1
                        counts["reverse_failed"] += 1
                        got = None if got is None else (got[0], got[1].replace(
                            check["name"] + "-", w["name"] + "-"))
                        disagreements.append((w, pod, ("bound", target), [target],
                                              got, "reverse"))
            repro = []
            seq = [0]
            reduce_deadline = time.time() + args.reduce_budget
            for i, (w, pod, u, feasible, p, *kind) in enumerate(disagreements):
                if kind:  # a reverse check: upstream found `feasible[0]` feasible
                    repro.append(reproducer(
                        w, pod, up.get(pod["metadata"]["name"]), up_feasible.get(
                            pod["metadata"]["name"], []), p,
                        "; reverse check: with every node but %s cordoned, Phalanx did "
                        "not bind it there, though upstream found %s feasible"
                        % (feasible[0], feasible[0])))
                    continue
                reduced = None
                left = reduce_deadline - time.time()
                if i < args.max_reduced and left > 10:
                    log("reducing the disagreement on %s (budget %.0f s)"
                        % (pod["metadata"]["name"], left))
                    reduced = reduce_disagreement((up_s, ph_s), w, pod, left, seq)
                if reduced == "not reproduced":
                    repro.append(reproducer(w, pod, u, feasible, p,
                                            ", NOT reproduced when judged again alone"))
                elif reduced:
                    rw, ru, rf, rp, steps = reduced
                    repro.append(reproducer(rw, pod, ru, rf, rp,
                                            ", reduced by ddmin in %d steps from %d nodes and "
                                            "%d bound pods" % (steps, len(w["nodes"]),
                                                               len(w["bound"]))))
                else:
                    repro.append(reproducer(w, pod, u, feasible, p, ", not reduced"))
            repro += vol_repro
            counts["disagree"] += vol_counts["disagree"]
        finally:
            for proc in [sess.close(args.keep) for sess in sessions]:
                if proc:
                    proc.wait()
    except HarnessError as e:
        print("FAIL: %s" % e, file=sys.stderr)
        for f in ("upstream-main.log", "phalanx-main.log"):
            p = os.path.join(work, f)
            if os.path.exists(p):
                with open(p, errors="replace") as fh:
                    tail = fh.readlines()[-15:]
                print("---- last lines of %s ----\n%s" % (f, "".join(tail)), file=sys.stderr)
        print("(logs kept in %s)" % work, file=sys.stderr)
        return 1
    with open(os.path.join(work, "disagreements.txt"), "w") as f:
        f.write("\n\n".join(repro) + "\n")
    for r in repro[:args.max_printed]:
        print(r)
    if len(repro) > args.max_printed:
        print("(%d more reproducers in %s/disagreements.txt)"
              % (len(repro) - args.max_printed, work))
    print("differential (seed %d, %d worlds x %d pods, %.0f s):"
          % (args.seed, len(worlds), args.pods_per_world, time.time() - t0))
    print("  pods compared:                          %d" % counts["compared"])
    print("  agreements:                             %d" % counts["agree"])
    print("    same node:                            %d" % counts["same_node"])
    print("    both unschedulable:                   %d" % counts["both_unschedulable"])
    print("      same reasons per node count:        %d (informational; %d differ, see "
          "reason-mismatches.txt with --out)" % (counts["same_reasons"],
                                                  counts["reason_mismatch"]))
    print("    other node, feasible for upstream:    %d" % counts["other_feasible_node"])
    print("  tie-break-free pods (<= 1 feasible):    %d" % counts["tiebreak_free"])
    print("  reverse checks (an upstream-feasible node, others cordoned, Phalanx binds "
          "there): %d of %d" % (counts["reverse_ok"], counts["reverse_checked"]))
    if args.volumes:
        print_volume_counts(worlds, vol_counts)
    print("  disagreements:                          %d" % counts["disagree"])
    if counts["disagree"]:
        print("FAIL: %d disagreements (reproducers, outcomes and scheduler logs in %s)"
              % (counts["disagree"], work))
        return 1
    if not args.out and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def print_volume_counts(worlds, vc):
    c = volume_census(worlds)
    print("  volume worlds:                          %s; %d PVs, %d CSINodes"
          % (", ".join("%d %s" % (c["kind_" + k], k) for k in gen_volumes.KINDS
                       if c["kind_" + k]), c["pvs"], c["csinodes"]))
    print("  judged pods' claims:                    %d unbound WaitForFirstConsumer (%d with "
          "a selector), %d bound, %d unbound Immediate, %d pre-bound to a PV another claim "
          "holds, %d missing"
          % (c["claim_wffc"], c["claim_wffc_selector"], c["claim_bound"],
             c["claim_immediate_unbound"], c["claim_prebound_taken"], c["claim_missing"]))
    print("  bound pods' PVs as v1.20.2's binder rule (gen_volumes.expected_pvs): upstream "
          "%d of %d, phalanx %d of %d (%d and %d claims)"
          % (vc["upstream_as_model"], vc["upstream_bound"], vc["phalanx_as_model"],
             vc["phalanx_bound"], vc["upstream_bound_claims"], vc["phalanx_bound_claims"]))
    print("  same node, same PVs per claim:          %d of %d"
          % (vc["same_node_same_pvs"], vc["same_node_pvs_compared"]))


if __name__ == "__main__":
    sys.exit(main())
