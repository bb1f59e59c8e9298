#!/usr/bin/env python3
"""Load with node churn against a live kube-apiserver ("Load" fault item).

Usage: load_churn.py --pid PHALANX-PID [--namespace e2e] [--pods 2000] [--gangs 200]
                     [--gang-size 4] [--rounds 2] [--churn-slots 4] [--churn-interval-ms 500]
                     [--workers 16] [--timeout 300] [--disrupted-out FILE]
Reads SERVER, CA and ADMIN_TOKEN from the environment (scripts/control-plane.sh DIR/env).

Per round: --pods pods arrive in 10 waves, --gangs of them as Coscheduling gangs
(scheduling.x-k8s.io/v1alpha1 PodGroup, minMember = --gang-size, members labelled
scheduling.x-k8s.io/pod-group), the rest plain pods; while they arrive and are bound, a churn
loop adds and removes nodes as scheduler_perf's churn op in mode "recreate" does
(test/integration/scheduler_perf/scheduler_perf_test.go, churnOp): --churn-slots slots, one
tick every --churn-interval-ms, a tick toggles slot (tick mod slots): creates a node in an
empty slot, deletes the slot's node otherwise. When a node is deleted, the pods bound to it
are deleted as the pod GC does (pkg/controller/podgc gcOrphaned); they are recorded as
"lost to node removal" per PodGroup, and a lost gang member is re-created under a new name
(NAME-rN) as its Job would: the gang must be completed again, its bound members counting
toward minMember. Phalanx fails a binding whose node was deleted meanwhile and requeues the
pod, so gang members that lost a sibling this way wait for the replacement. The round ends once no pod of it is pending (all bound);
then the churn stops, a last pod-GC sweep deletes pods bound to nodes that no longer exist
(a binding that landed just after its node's deletion: a race every scheduler has, which
the pod GC resolves), check_invariants.py runs with --disrupted (the gangs that lost members
to node removal), and the phalanx process's VmRSS is recorded. Between rounds the round's
pods and PodGroups are deleted (grace period 0), so every round ends with the same number
of objects in the scheduler's cache.

Prints per round
  ROUND <r> created=<n> bound=<n> lost_to_node_removal=<n> orphans_gc=<n>
        gang_members_recreated=<n> nodes_added=<n>
        nodes_removed=<n> gangs_lost_members=<n> max_bind_after_node_delete_s=<s>
        late_binds=<n> violations=<n> rss_kib=<n> seconds=<s>
(bound counts the pods later lost to node removal; orphans_gc: those the last sweep found;
max_bind_after_node_delete_s / late_binds: see STALE_S)
and at the end
  LOAD-CHURN pods_bound=<n> nodes_added=<n> nodes_removed=<n> violations=<n>
             rss_round1_kib=<n> rss_last_kib=<n> rss_peak_kib=<n>
Exit 0 when every round completed (the invariant result is in violations=), 1 on a
failure of the run (timeout, phalanx exited, API errors).
"""
import argparse
import calendar
import http.client
import json
import os
import random
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

GANG_LABEL = "scheduling.x-k8s.io/pod-group"
PG_API = "/apis/scheduling.x-k8s.io/v1alpha1"
# Bindings onto a node that land later than this after the node's DELETE are counted
# (late_binds=): not a violation, since a binding cycle started before the deletion reached
# the scheduler is still sent (upstream scheduler.bind does not re-check the node either),
# and under load the client's QPS limit queues bindings for seconds; the pod GC deletes
# these pods. Bind times have 1 s resolution.
STALE_S = 5
HERE = os.path.dirname(os.path.abspath(__file__))

_tls = threading.local()
_url = urllib.parse.urlparse(os.environ.get("SERVER", "https://127.0.0.1:6443"))
_ctx = ssl.create_default_context(cafile=os.environ.get("CA"))


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def api(method, path, body=None, ok=(200, 201, 202), tries=5):
    """One request as admin on this thread's keep-alive connection; returns the decoded body.

    Raises RuntimeError naming the request on a status outside `ok` (after retries of
    transport errors, 429 and 5xx)."""
    data = json.dumps(body).encode() if body is not None else None
    last = ""
    for attempt in range(tries):
        conn = getattr(_tls, "conn", None)
        if conn is None:
            conn = _tls.conn = http.client.HTTPSConnection(_url.hostname, _url.port, context=_ctx,
                                                           timeout=60)
        try:
            conn.request(method, path, body=data, headers={
                "Authorization": "Bearer " + os.environ["ADMIN_TOKEN"],
                "Content-Type": "application/json", "Accept": "application/json"})
            r = conn.getresponse()
            raw = r.read()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            _tls.conn = None
            last = f"transport error {e}"
            time.sleep(0.2 * (attempt + 1))
            continue
        if r.status in ok:
            return json.loads(raw) if raw else {}
        last = f"HTTP {r.status}: {raw[:300].decode(errors='replace')}"
        if r.status == 429 or r.status >= 500:
            time.sleep(0.5 * (attempt + 1))
            continue
        break
    raise RuntimeError(f"{method} {path}: {last}")


def bind_time(pod):
    """Unix time of the pod's binding: the PodScheduled=True condition's lastTransitionTime,
    which the binding subresource sets (pkg/registry/core/pod/storage setPodHostAndAnnotations);
    1 s resolution. None when absent."""
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "True" and c.get("lastTransitionTime"):
            return calendar.timegm(time.strptime(c["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ"))
    return None


def node_body(name, cpu, mem, pods):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": cpu, "memory": mem, "pods": pods},
                       "allocatable": {"cpu": cpu, "memory": mem, "pods": pods},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}


def pod_body(ns, name, rnd, cpu, mem, group=None):
    labels = {"round": str(rnd)}
    if group:
        labels[GANG_LABEL] = group
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"schedulerName": "default-scheduler",
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}}


class Rss:
    """Samples VmRSS (KiB) of PID every second (/proc/PID/status)."""

    def __init__(self, pid):
        self.pid, self.peak, self.last, self.alive = pid, 0, 0, True
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def read(self):
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        v = int(line.split()[1])
                        self.last, self.peak = v, max(self.peak, v)
                        return v
        except OSError:
            pass
        self.alive = False
        return 0

    def run(self):
        while not self.stop.is_set():
            self.read()
            self.stop.wait(1.0)


class Churn:
    """scheduler_perf churnOp mode "recreate" on nodes, with the pod GC of deleted nodes."""

    def __init__(self, args, ns):
        self.args, self.ns = args, ns
        self.slots = [None] * args.churn_slots
        self.tick = 0
        self.gen = 0
        self.added = self.removed = 0
        self.deleted_at = {}  # node -> time.time() just before its DELETE
        self.max_lag = None  # seconds from a node's DELETE to the latest binding onto it
        self.stale = []  # pods bound onto a node more than STALE_S after its DELETE
        self.lost = {}  # "ns/podgroup" -> members deleted with their node
        self.lost_pods = 0
        self.recreated = 0  # gang members re-created after being lost with their node
        self.mu = threading.Lock()
        self.stop = threading.Event()
        self.err = None
        self.t = None

    def start(self):
        self.stop.clear()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def finish(self):
        self.stop.set()
        self.t.join()
        if self.err:
            raise self.err

    def gc(self, pods):
        """Deletes bound pods (grace period 0) and records them as lost."""
        n = 0
        for p in pods:
            md = p["metadata"]
            at = self.deleted_at.get(p["spec"].get("nodeName"))
            bt = bind_time(p)
            if at is not None and bt is not None:
                lag = bt - at
                with self.mu:
                    self.max_lag = lag if self.max_lag is None else max(self.max_lag, lag)
                    if lag > STALE_S:
                        self.stale.append(f"pod {md['namespace']}/{md['name']} bound to "
                                          f"{p['spec']['nodeName']} {lag:.0f} s after its deletion")
            try:
                api("DELETE", f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}?gracePeriodSeconds=0",
                    ok=(200, 202, 404))
            except RuntimeError:
                raise
            labels = md.get("labels") or {}
            g = labels.get(GANG_LABEL)
            with self.mu:
                if g:
                    k = f"{md['namespace']}/{g}"
                    self.lost[k] = self.lost.get(k, 0) + 1
                self.lost_pods += 1
                seq = self.recreated
                if g:
                    self.recreated += 1
            if g:
                # The gang's controller (a Job) replaces the lost member; without this a
                # gang whose members went with their node could never reach minMember again
                # and its other members would stay pending forever (correctly).
                req = p["spec"]["containers"][0]["resources"]["requests"]
                api("POST", f"/api/v1/namespaces/{md['namespace']}/pods",
                    pod_body(md["namespace"], f"{md['name'].split('-r')[0]}-r{seq}", labels.get("round"),
                             req["cpu"], req["memory"], g))
            n += 1
        return n

    def delete_node(self, name):
        self.deleted_at[name] = time.time()
        api("DELETE", f"/api/v1/nodes/{name}", ok=(200, 202, 404))

        self.removed += 1
        sel = urllib.parse.quote(f"spec.nodeName={name}")
        pods = api("GET", f"/api/v1/namespaces/{self.ns}/pods?fieldSelector={sel}")["items"]
        self.gc(pods)

    def run(self):
        a = self.args
        try:
            while not self.stop.wait(a.churn_interval_ms / 1000.0):
                s = self.tick % len(self.slots)
                self.tick += 1
                if self.slots[s] is None:
                    self.gen += 1
                    name = f"churn-{s:02d}-{self.gen:05d}"
                    api("POST", "/api/v1/nodes", node_body(name, "16", "64Gi", "110"))
                    self.slots[s] = name
                    self.added += 1
                else:
                    self.delete_node(self.slots[s])
                    self.slots[s] = None
        except Exception as e:  # noqa: BLE001 - reported by finish()
            self.err = e

    def sweep_orphans(self):
        """The pod GC's gcOrphaned: pods bound to a node that does not exist are deleted."""
        nodes = {n["metadata"]["name"] for n in api("GET", "/api/v1/nodes")["items"]}
        pods = api("GET", f"/api/v1/namespaces/{self.ns}/pods")["items"]
        orphans = [p for p in pods if p["spec"].get("nodeName") and p["spec"]["nodeName"] not in nodes]
        unknown = [p for p in orphans if p["spec"]["nodeName"] not in self.deleted_at]
        return self.gc([p for p in orphans if p not in unknown]), unknown


def plant(ns, rnd, lost, size):
    """Planted violations (the case must then fail): deletes one bound member of a gang that
    lost no member to node removal (as if the scheduler had bound 3 of 4), and one more bound
    member of a gang that did lose members, neither recorded as lost: the checker must report
    both, --disrupted notwithstanding."""
    pods = round_pods(ns, rnd)
    by_gang = {}
    for p in pods:
        g = (p["metadata"].get("labels") or {}).get(GANG_LABEL)
        if g and p["spec"].get("nodeName"):
            by_gang.setdefault(g, []).append(p)
    whole = next(g for g, ps in sorted(by_gang.items()) if len(ps) == size and f"{ns}/{g}" not in lost)
    hit = next((g for g, ps in sorted(by_gang.items()) if f"{ns}/{g}" in lost and len(ps) >= 2), None)
    for g in [whole] + ([hit] if hit else []):
        victim = by_gang[g][0]["metadata"]["name"]
        api("DELETE", f"/api/v1/namespaces/{ns}/pods/{victim}?gracePeriodSeconds=0")
        log(f"PLANTED: deleted {ns}/{victim} of gang {g} (lost to node removal: {lost.get(f'{ns}/{g}', 0)})")


def round_pods(ns, rnd):
    return api("GET", f"/api/v1/namespaces/{ns}/pods?labelSelector=round%3D{rnd}")["items"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--namespace", default="e2e")
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--gangs", type=int, default=200)
    ap.add_argument("--gang-size", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--base-nodes", type=int, default=0, help="default: pods/100")
    ap.add_argument("--churn-slots", type=int, default=4)
    ap.add_argument("--churn-interval-ms", type=int, default=500)
    ap.add_argument("--waves", type=int, default=10)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per round until all bound")
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--disrupted-out", default="")
    ap.add_argument("--plant", action="store_true",
                    help="after round 1, break the gang invariant twice on purpose (see plant())")
    a = ap.parse_args()
    ns = a.namespace
    plain = a.pods - a.gangs * a.gang_size
    if plain < 0:
        print(f"load_churn: --gangs {a.gangs} x --gang-size {a.gang_size} > --pods {a.pods}", file=sys.stderr)
        return 2
    rng = random.Random(a.seed)
    rss = Rss(a.pid)
    pool = ThreadPoolExecutor(a.workers)
    base = a.base_nodes or max(1, (a.pods + 99) // 100)
    # Base capacity: 16 cpu / 110 pods per node, pods/100 nodes = 1.1 x the pods and
    # 0.16 x pods cpu against a demand of 0.1 x plain + 0.2 x gang members (0.14 x pods).
    list(pool.map(lambda i: api("POST", "/api/v1/nodes", node_body(f"base-{i:04d}", "16", "64Gi", "110")),
                  range(base)))
    log(f"{base} base nodes; per round {a.pods} pods: {a.gangs} gangs x {a.gang_size} + {plain} plain;"
        f" churn {a.churn_slots} slots every {a.churn_interval_ms} ms")
    churn = Churn(a, ns)
    total_bound = total_viol = 0
    rss_round = []
    disrupted = {}
    for rnd in range(1, a.rounds + 1):
        t0 = time.time()
        added0, removed0, lost0, stale0 = churn.added, churn.removed, churn.lost_pods, len(churn.stale)
        churn.max_lag = None
        churn.lost = {}
        churn.start()
        # Waves: each wave's PodGroups first, then its gang members and plain pods, shuffled.
        gangs = [f"g{rnd}-{g:04d}" for g in range(a.gangs)]
        plains = [f"p{rnd}-{i:05d}" for i in range(plain)]
        created = 0
        for w in range(a.waves):
            wg = gangs[w::a.waves]
            list(pool.map(lambda g: api("POST", f"{PG_API}/namespaces/{ns}/podgroups", {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                "metadata": {"name": g, "namespace": ns, "labels": {"round": str(rnd)}},
                "spec": {"minMember": a.gang_size}}), wg))
            bodies = [pod_body(ns, f"{g}-{i}", rnd, "200m", "256Mi", g) for g in wg for i in range(a.gang_size)]
            bodies += [pod_body(ns, n, rnd, "100m", "128Mi") for n in plains[w::a.waves]]
            rng.shuffle(bodies)
            list(pool.map(lambda b: api("POST", f"/api/v1/namespaces/{ns}/pods", b), bodies))
            created += len(bodies)
            if not rss.alive:
                raise RuntimeError("phalanx exited during the load")
        log(f"round {rnd}: {created} pods created in {time.time() - t0:.1f} s; waiting until none is pending")
        deadline = t0 + a.timeout
        recreated0 = churn.recreated

        def wait_none_pending():
            while True:
                pods = round_pods(ns, rnd)
                pending = [p for p in pods if not p["spec"].get("nodeName")]
                if not pending:
                    return True
                if not rss.alive:
                    raise RuntimeError("phalanx exited")
                if time.time() > deadline:
                    log(f"round {rnd}: {len(pending)} pods still pending after {a.timeout} s, e.g. "
                        + ", ".join(p["metadata"]["name"] for p in pending[:5]))
                    for p in pending[:5]:
                        conds = [c for c in (p.get("status") or {}).get("conditions") or []
                                 if c.get("type") == "PodScheduled"]
                        log(f"  {p['metadata']['name']}: "
                            + (f"{conds[0].get('reason')}: {conds[0].get('message')}" if conds
                               else "no PodScheduled condition"))
                    return False
                time.sleep(1)

        if not wait_none_pending():
            return 1
        churn.finish()
        orphans, unknown = churn.sweep_orphans()
        # Members the sweep re-created must be placed too (churn is stopped now).
        if churn.recreated > recreated0 and not wait_none_pending():
            return 1
        more, _ = churn.sweep_orphans()
        orphans += more
        if a.plant and rnd == 1:
            plant(ns, rnd, churn.lost, a.gang_size)
        lost = churn.lost_pods - lost0
        bound = len(round_pods(ns, rnd))
        disrupted = dict(churn.lost)
        if a.disrupted_out:
            with open(a.disrupted_out, "w") as f:
                json.dump(disrupted, f)
        time.sleep(2)  # lets phalanx apply the last deletions before its RSS is read
        r = rss.read()
        rss_round.append(r)
        dfile = a.disrupted_out or "/dev/null"
        out = subprocess.run([sys.executable, os.path.join(HERE, "check_invariants.py"), "--namespace", ns,
                              "--disrupted", dfile], capture_output=True, text=True)
        print(out.stdout, end="")
        if out.returncode > 1:
            print(out.stderr, file=sys.stderr)
            return 1
        viol = int(out.stdout.rsplit("violations=", 1)[1].split()[0])
        # Pods bound to a node that never existed (`unknown`) were left in place: the
        # checker reported them as "node" violations.
        stale = churn.stale[stale0:]
        for v in stale[:3]:
            print(f"late binding: {v}")
        total_viol += viol
        total_bound += bound + lost
        log(f"ROUND {rnd} created={created} bound={bound + lost} lost_to_node_removal={lost} "
            f"orphans_gc={orphans} gang_members_recreated={churn.recreated - recreated0} nodes_added={churn.added - added0} nodes_removed={churn.removed - removed0} "
            f"gangs_lost_members={len(disrupted)} max_bind_after_node_delete_s="
            f"{'-' if churn.max_lag is None else f'{churn.max_lag:.0f}'} late_binds={len(stale)} violations={viol} rss_kib={r} seconds={time.time() - t0:.1f}")
        if rnd < a.rounds:
            t1 = time.time()
            api("DELETE", f"/api/v1/namespaces/{ns}/pods?labelSelector=round%3D{rnd}&gracePeriodSeconds=0")
            api("DELETE", f"{PG_API}/namespaces/{ns}/podgroups?labelSelector=round%3D{rnd}")
            while round_pods(ns, rnd):
                if time.time() > t1 + 120:
                    log(f"round {rnd}: pods not deleted after 120 s")
                    return 1
                time.sleep(0.5)
            log(f"round {rnd}: its pods and PodGroups deleted in {time.time() - t1:.1f} s")
    rss.stop.set()
    print(f"LOAD-CHURN pods_bound={total_bound} nodes_added={churn.added} nodes_removed={churn.removed} "
          f"violations={total_viol} rss_round1_kib={rss_round[0]} rss_last_kib={rss_round[-1]} "
          f"rss_peak_kib={rss.peak}", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"load_churn: {e}", file=sys.stderr)
        sys.exit(1)
