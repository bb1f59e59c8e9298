#!/usr/bin/env python3
"""Fast self-test of the differential harness (no server): the generator's invariants
that keep worlds independent and avoid known v1.20 / current differences, and the
comparison rules. Usage: python3 test/diff/selftest.py"""

import json
import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import differential as D  # noqa: E402
import generate as G  # noqa: E402
import gen_volumes as V  # noqa: E402


def node(name, labels=None, unschedulable=False):
    return {"metadata": {"name": name, "labels": dict(labels or {}, **{G.HOSTNAME: name})},
            "spec": {"unschedulable": True} if unschedulable else {}}


def pod(ns, labels, spec):
    return {"metadata": {"name": "p", "namespace": ns, "labels": labels}, "spec": spec}


class GeneratorTest(unittest.TestCase):
    worlds = G.generate(7, 12, 30)

    def test_deterministic_in_the_seed(self):
        self.assertEqual(json.dumps(G.generate(7, 12, 30)), json.dumps(self.worlds))
        self.assertNotEqual(json.dumps(G.generate(8, 12, 30)), json.dumps(self.worlds))

    def test_worlds_are_isolated(self):
        for w in self.worlds:
            prefix = w["name"] + "-"
            for n in w["nodes"]:
                labels = n["metadata"]["labels"]
                self.assertEqual(labels[G.WORLD_LABEL], w["name"])
                for key in (G.HOSTNAME, G.ZONE, G.REGION, G.RACK):
                    if key in labels:
                        self.assertTrue(labels[key].startswith(prefix), (key, labels[key]))
            for p in w["bound"] + w["incoming"]:
                self.assertIn(p["metadata"]["namespace"], w["namespaces"])
                aff = p["spec"].get("affinity", {})
                for kind in ("podAffinity", "podAntiAffinity"):
                    for t in aff.get(kind, {}).get(
                            "requiredDuringSchedulingIgnoredDuringExecution", []):
                        for ns in t.get("namespaces", []):
                            self.assertIn(ns, w["namespaces"])
            for p in w["incoming"]:
                self.assertEqual(p["spec"]["nodeSelector"][G.WORLD_LABEL], w["name"])
                self.assertEqual(p["metadata"]["labels"][G.JUDGED_LABEL], "true")

    def test_bound_pods_never_overcommit_a_node(self):
        for w in self.worlds:
            for n in w["nodes"]:
                alloc = n["status"]["allocatable"]
                used = {k: 0 for k in G.RESOURCES}
                count = 0
                for p in w["bound"]:
                    if p["spec"]["nodeName"] == n["metadata"]["name"]:
                        count += 1
                        for k, v in G.pod_requests(p).items():
                            used[k] += v
                self.assertLessEqual(count, int(alloc["pods"]))
                for k in G.RESOURCES:
                    cap = G.parse_quantity(alloc.get(k, "0"), milli=(k == "cpu"))
                    self.assertLessEqual(used[k], cap, (n["metadata"]["name"], k))

    def test_no_spread_constraint_in_the_v120_counting_difference(self):
        seen = 0
        for w in self.worlds:
            for p in w["incoming"]:
                if p["spec"].get("topologySpreadConstraints"):
                    seen += 1
                    self.assertFalse(G.spread_counting_differs(p, w["nodes"], w["bound"]))
        self.assertGreater(seen, 20)

    def test_spread_counting_differs(self):
        # Zone z0 holds a matching node (disk=ssd) and a non-matching one with an app=a pod:
        # v1.20 counts that pod in z0, current upstream does not.
        nodes = [node("n1", {G.ZONE: "z0", G.DISK: "ssd"}), node("n2", {G.ZONE: "z0"})]
        bound = [pod("ns", {"app": "a"}, {"nodeName": "n2"})]
        c = {"maxSkew": 1, "topologyKey": G.ZONE, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "a"}}}
        p = pod("ns", {}, {"nodeSelector": {G.DISK: "ssd"}, "topologySpreadConstraints": [c]})
        self.assertTrue(G.spread_counting_differs(p, nodes, bound))
        other_ns = [pod("other", {"app": "a"}, {"nodeName": "n2"})]
        self.assertFalse(G.spread_counting_differs(p, nodes, other_ns))
        p_all = pod("ns", {}, {"topologySpreadConstraints": [c]})
        self.assertFalse(G.spread_counting_differs(p_all, nodes, bound))
        soft = dict(c, whenUnsatisfiable="ScheduleAnyway")
        p_soft = pod("ns", {}, {"nodeSelector": {G.DISK: "ssd"},
                                "topologySpreadConstraints": [soft]})
        self.assertFalse(G.spread_counting_differs(p_soft, nodes, bound))

    def test_node_affinity_matching(self):
        n = node("n1", {G.GPUS: "3", G.DISK: "ssd"})
        req = lambda terms: pod("ns", {}, {"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}})
        gt = {"key": G.GPUS, "operator": "Gt", "values": ["2"]}
        lt = {"key": G.GPUS, "operator": "Lt", "values": ["3"]}
        name_in = {"key": "metadata.name", "operator": "In", "values": ["n1"]}
        name_out = {"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}
        self.assertTrue(G.pod_matches_node_selector_and_affinity(
            req([{"matchExpressions": [gt]}]), n))
        self.assertFalse(G.pod_matches_node_selector_and_affinity(
            req([{"matchExpressions": [lt]}]), n))
        self.assertTrue(G.pod_matches_node_selector_and_affinity(
            req([{"matchExpressions": [lt]}, {"matchFields": [name_in]}]), n))
        self.assertFalse(G.pod_matches_node_selector_and_affinity(
            req([{"matchExpressions": [gt], "matchFields": [name_out]}]), n))

    def test_parse_quantity(self):
        self.assertEqual(G.parse_quantity("3500m", milli=True), 3500)
        self.assertEqual(G.parse_quantity("1.5", milli=True), 1500)
        self.assertEqual(G.parse_quantity("1.5Gi"), 1536 * 2**20)
        self.assertEqual(G.parse_quantity("8G"), 8 * 10**9)


def ppod(name, prio_class, cpu, start_min=None, node_name=None, labels=None, ns="ns"):
    """A pod for the preemption model: cpu request (millicores), 64Mi memory."""
    spec = {"containers": [{"name": "c", "resources": {"requests": {
        "cpu": "%dm" % cpu, "memory": "64Mi"}}}]}
    if prio_class:
        spec["priorityClassName"] = prio_class
    if node_name:
        spec["nodeName"] = node_name
    p = {"kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
         "spec": spec}
    if start_min is not None:
        p["status"] = {"startTime": G.iso_time(G.START_BASE + 60 * start_min)}
    return p


def pnode(name, cpu="2", pods="110"):
    cap = {"cpu": cpu, "memory": "8Gi", "pods": pods}
    return {"kind": "Node", "metadata": {"name": name, "labels": {G.HOSTNAME: name}},
            "spec": {}, "status": {"allocatable": cap, "capacity": cap}}


def pdb(ns, app, allowed):
    return {"kind": "PodDisruptionBudget", "metadata": {"name": "b-" + app, "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app": app}}},
            "status": {"disruptionsAllowed": allowed}}


class PreemptionGeneratorTest(unittest.TestCase):
    """The preemption generator's model of v1.20.2 (selectVictimsOnNode,
    pickOneNodeForPreemption) and its uniqueness rule."""
    worlds = G.generate_preemption(20210113, 40, 14)  # the CI configuration

    def test_ci_configuration_has_500_preemption_cases(self):
        cases = [e for w in self.worlds for e in w["expected"].values()]
        self.assertGreaterEqual(sum(e["outcome"] == "bound" for e in cases), 500)
        self.assertTrue(all(e["victims"] for e in cases if e["outcome"] == "bound"))
        self.assertEqual(json.dumps(G.generate_preemption(20210113, 40, 14)),
                         json.dumps(self.worlds))

    def test_every_case_is_defined_and_needs_preemption(self):
        for w in self.worlds[:10]:
            for p in w["incoming"]:
                out = G.preemption_outcome(p, w["nodes"], w["bound"], w["pdbs"])
                self.assertIn(out[0], ("bound", "unschedulable"))
                e = w["expected"][p["metadata"]["name"]]
                self.assertEqual((out[0], out[1], out[2]), (e["outcome"], e["node"], e["victims"]))
                self.assertEqual(p["spec"]["nodeSelector"][G.WORLD_LABEL], w["name"])

    def test_bound_pods_start_at_distinct_times_and_fit(self):
        for w in self.worlds:
            starts = [G.start_time(b) for b in w["bound"]]
            self.assertEqual(len(starts), len(set(starts)))
            for n in w["nodes"]:
                mine = [b for b in w["bound"] if b["spec"]["nodeName"] == n["metadata"]["name"]]
                self.assertLessEqual(len(mine), int(n["status"]["allocatable"]["pods"]))
                for k in ("cpu", "memory"):
                    self.assertLessEqual(sum(G.pod_requests(b)[k] for b in mine),
                                         G.parse_quantity(n["status"]["allocatable"][k],
                                                          milli=(k == "cpu")))

    def test_victims_are_reprieved_most_important_first_pdb_violating_first(self):
        n = pnode("n1", cpu="2")
        on = [ppod("a", "diff-pre-10", 1000, 1, "n1", {"app": "db"}),
              ppod("b", "diff-pre-50", 1000, 2, "n1")]
        names = lambda sel: [v["metadata"]["name"] for v in sel[0]]
        # Room for one: the more important b is reprieved first and stays.
        pre = ppod("p", "diff-high", 1000)
        self.assertEqual(names(G.select_victims(pre, n, on, [])), ["a"])
        # a's eviction would violate a budget: it is reprieved first and stays, b goes.
        self.assertEqual(G.select_victims(pre, n, on, [pdb("ns", "db", 0)]), ([on[1]], 0))
        # Both must go: a is listed first (PDB-violating victims first) and counts.
        big = ppod("p", "diff-high", 2000)
        self.assertEqual(names(G.select_victims(big, n, on, [pdb("ns", "db", 0)])), ["a", "b"])
        self.assertEqual(G.select_victims(big, n, on, [pdb("ns", "db", 0)])[1], 1)
        self.assertEqual(G.select_victims(big, n, on, [pdb("ns", "db", 1)])[1], 0)
        # Only pods of lower priority than the preemptor are victims.
        self.assertIsNone(G.select_victims(ppod("q", "diff-pre-50", 2000), n, on, []))
        self.assertIsNone(G.select_victims(ppod("q", "diff-pre-10", 1000), n, on, []))

    def test_pdb_violating_counts_budgets_per_namespace(self):
        pods = [ppod("a", None, 1, 1, labels={"app": "db"}),
                ppod("b", None, 1, 2, labels={"app": "db"}),
                ppod("c", None, 1, 3, labels={"app": "db"}, ns="other"),
                ppod("d", None, 1, 4)]
        viol, ok = G.pdb_violating(pods, [pdb("ns", "db", 1)])
        self.assertEqual([p["metadata"]["name"] for p in viol], ["b"])
        self.assertEqual([p["metadata"]["name"] for p in ok], ["a", "c", "d"])
        # A pod in status.disruptedPods takes nothing from the budget.
        counted = pdb("ns", "db", 1)
        counted["status"]["disruptedPods"] = {"a": G.iso_time(G.START_BASE)}
        self.assertEqual(G.pdb_violating(pods, [counted])[0], [])
        empty = pdb("ns", "db", 0)
        empty["spec"]["selector"] = {}
        self.assertEqual(G.pdb_violating(pods, [empty])[0], [])

    def cands(self, **nodes):
        return {n: (v, k) for n, (v, k) in nodes.items()}

    def test_pick_node_criteria_in_order(self):
        v = lambda name, pc, m: ppod(name, pc, 1, m)
        # 1. fewest PDB violations
        self.assertEqual(G.pick_node(self.cands(
            a=([v("a1", "diff-pre-10", 1)], 1), b=([v("b1", "diff-pre-200", 2)], 0)), False),
            ("b", 1))
        # 2. lowest highest-victim priority
        self.assertEqual(G.pick_node(self.cands(
            a=([v("a1", "diff-pre-50", 1)], 0),
            b=([v("b1", "diff-pre-10", 2), v("b2", "diff-pre-10", 3)], 0)), False), ("b", 2))
        # 3. smallest sum of priorities (+2^31 each, so fewer victims first too)
        self.assertEqual(G.pick_node(self.cands(
            a=([v("a1", "diff-pre-50", 1), v("a2", "diff-pre-10", 2)], 0),
            b=([v("b1", "diff-pre-50", 3)], 0)), False), ("b", 3))
        # 5. latest earliest start among the top-priority victims
        self.assertEqual(G.pick_node(self.cands(
            a=([v("a1", "diff-pre-50", 1)], 0), b=([v("b1", "diff-pre-50", 7)], 0)), False),
            ("b", 5))
        self.assertEqual(G.pick_node(self.cands(a=([v("a1", None, 1)], 0)), False), ("a", 0))

    def test_tie_after_every_criterion_is_ambiguous(self):
        v = lambda name, m: ppod(name, "diff-pre-50", 1, m)
        self.assertEqual(G.pick_node(self.cands(a=([v("a1", 4)], 0), b=([v("b1", 4)], 0)),
                         False), (None, 5))
        # v1.20 GetPodStartTime: a pod without status.startTime reads as "now"; the
        # generator never leaves one out.
        with self.assertRaises(ValueError):
            G.start_time(ppod("x", None, 1))

    def test_v120_highest_victim_reading_is_ambiguous(self):
        # Both nodes: one PDB-violating victim. v1.20 reads victims[0] -- the violating
        # one, listed first -- as the highest-priority victim (a: 10, b: 50: a wins);
        # current upstream re-sorts (a: 200, b: 60: b wins). The generator leaves such
        # states out (preemption_outcome "ambiguous").
        a = [ppod("a1", "diff-pre-10", 1, 1), ppod("a2", "diff-pre-200", 1, 2)]
        b = [ppod("b1", "diff-pre-50", 1, 3), ppod("b2", "diff-pre-10", 1, 4)]
        cands = self.cands(a=(a, 1), b=(b, 1))
        self.assertEqual(G.pick_node(cands, False), ("a", 2))
        self.assertEqual(G.pick_node(cands, True), ("b", 2))
        # The same through preemption_outcome, on nodes where each pair must go.
        n1, n2 = pnode("n1", cpu="2"), pnode("n2", cpu="2")
        bound = [ppod("a1", "diff-pre-10", 1000, 1, "n1", {"app": "db"}),
                 ppod("a2", "diff-pre-200", 1000, 2, "n1"),
                 ppod("b1", "diff-pre-50", 1000, 3, "n2", {"app": "web"}),
                 ppod("b2", "diff-pre-50", 1000, 4, "n2")]
        pre = ppod("p", "diff-high", 2000)
        budgets = [pdb("ns", "db", 0), pdb("ns", "web", 0)]
        self.assertEqual(G.preemption_outcome(pre, [n1, n2], bound, budgets)[0], "ambiguous")
        self.assertEqual(G.excluded_outcome(pre, [n1, n2], bound, budgets),
                         (("n1", ["a1", "a2"]), ("n2", ["b1", "b2"])))
        self.assertIsNone(G.excluded_outcome(pre, [n1, n2], bound, []))
        # Without the budgets the highest victims are 200 and 50: n2, in both readings.
        self.assertEqual(G.preemption_outcome(pre, [n1, n2], bound, [])[:3],
                         ("bound", "n2", ["b1", "b2"]))

    def test_preemption_policy_never_does_not_preempt(self):
        n1 = pnode("n1", cpu="2")
        bound = [ppod("a", None, 2000, 1, "n1")]
        self.assertEqual(G.preemption_outcome(ppod("p", "diff-high", 1000), [n1], bound, [])[:3],
                         ("bound", "n1", ["a"]))
        self.assertEqual(G.preemption_outcome(ppod("p", "diff-high-never", 1000), [n1], bound,
                                              [])[0], "unschedulable")

    def test_fits_and_unresolvable_nodes_are_no_case(self):
        n1 = pnode("n1", cpu="2")
        bound = [ppod("a", None, 1000, 1, "n1")]
        self.assertEqual(G.preemption_outcome(ppod("p", "diff-high", 500), [n1], bound, [])[0],
                         "fits")
        tainted = pnode("n2", cpu="2")
        tainted["spec"]["taints"] = [dict(G.INFRA_TAINT)]
        bound2 = [ppod("b", None, 2000, 2, "n2")]
        self.assertEqual(G.preemption_outcome(ppod("p", "diff-high", 2000), [tainted], bound2,
                                              [])[0], "unschedulable")


class ComparisonTest(unittest.TestCase):
    def test_judge_pair(self):
        b = lambda n: ("bound", n)
        uns = ("unschedulable", "0/3 nodes are available: ...")
        self.assertEqual(D.judge_pair(uns, [], uns), "both_unschedulable")
        self.assertEqual(D.judge_pair(b("a"), ["a", "b"], b("a")), "same_node")
        self.assertEqual(D.judge_pair(b("a"), ["a", "b"], b("b")), "other_feasible_node")
        self.assertIsNone(D.judge_pair(b("a"), ["a", "b"], b("c")))
        self.assertIsNone(D.judge_pair(b("a"), ["a"], uns))
        self.assertIsNone(D.judge_pair(uns, [], b("a")))
        self.assertIsNone(D.judge_pair(b("a"), ["a"], ("no decision", "")))
        self.assertIsNone(D.judge_pair(b("a"), ["a"], None))

    def test_reason_counts_maps_v120_wording(self):
        up = ("0/5 nodes are available: 1 node(s) didn't match pod affinity/anti-affinity, "
              "1 node(s) didn't match pod anti-affinity rules, 2 node(s) had taint "
              "{k: v}, that the pod didn't tolerate, 2 node(s) didn't match Pod's node "
              "affinity.")
        ph = ("0/5 nodes are available: 1 node(s) didn't match pod anti-affinity rules, "
              "2 node(s) didn't match Pod's node affinity/selector, 2 node(s) had "
              "untolerated taint {k: v}.")
        self.assertEqual(D.reason_counts(up, True), D.reason_counts(ph, False))
        self.assertNotEqual(D.reason_counts(up, True),
                            D.reason_counts(ph.replace("2 node(s) had", "1 node(s) had"),
                                            False))

    def test_preemption_pair(self):
        r = lambda kind, node, victims: {"outcome": (kind, node), "victims": victims,
                                         "nominated": ""}
        self.assertEqual(D.preemption_pair(r("bound", "n1", ["a", "b"]),
                                           r("bound", "n1", ["a", "b"])), "preempted")
        self.assertEqual(D.preemption_pair(r("unschedulable", "m", []),
                                           r("unschedulable", "m2", [])),
                         "both_unschedulable")
        self.assertIsNone(D.preemption_pair(r("bound", "n1", ["a", "b"]),
                                            r("bound", "n1", ["a"])))
        self.assertIsNone(D.preemption_pair(r("bound", "n1", ["a"]), r("bound", "n2", ["a"])))
        self.assertIsNone(D.preemption_pair(r("bound", "n1", ["a"]),
                                            r("unschedulable", "m", [])))
        self.assertIsNone(D.preemption_pair(r("no decision", "", []),
                                            r("no decision", "", [])))
        self.assertIsNone(D.preemption_pair(r("bound", "n1", ["a"]), None))

    def test_rename_world_leaves_no_old_name(self):
        w = G.generate(3, 2, 5)[1]
        r = D.rename_world(w, "w1r9")
        text = json.dumps(r)
        self.assertNotIn('"w1-', text)
        self.assertNotIn('"w1"', text)
        self.assertNotIn('"diff-w1"', text)
        self.assertEqual(len(r["nodes"]), len(w["nodes"]))
        self.assertEqual(D.rename_world(r, "w1"), w)

    def test_tolerates_cordon(self):
        t = lambda *tols: {"spec": {"tolerations": list(tols)}}
        self.assertTrue(D.tolerates_cordon(t({"operator": "Exists"})))
        self.assertTrue(D.tolerates_cordon(t({"key": "node.kubernetes.io/unschedulable",
                                              "operator": "Exists", "effect": "NoSchedule"})))
        self.assertFalse(D.tolerates_cordon(t({"key": "node.kubernetes.io/unschedulable",
                                               "operator": "Exists", "effect": "NoExecute"})))
        self.assertFalse(D.tolerates_cordon(t({"key": "other", "operator": "Exists"})))
        self.assertFalse(D.tolerates_cordon({"spec": {}}))

    def test_reverse_checks_cordon_all_but_the_target(self):
        worlds = G.generate(5, 6, 20)
        up, feas, ph = {}, {}, {}
        for w in worlds:
            names = [n["metadata"]["name"] for n in w["nodes"]]
            for p in w["incoming"]:
                up[p["metadata"]["name"]] = ("bound", names[0])
                feas[p["metadata"]["name"]] = names[:2]
                ph[p["metadata"]["name"]] = ("bound", names[0])
        checks = D.reverse_checks(worlds, up, feas, ph, seed=1)
        self.assertGreater(len(checks), 0)
        for check, w, p, target in checks:
            self.assertEqual(target, w["nodes"][1]["metadata"]["name"])
            renamed_target = check["name"] + target[len(w["name"]):]
            for n, orig in zip(check["nodes"], w["nodes"]):
                if n["metadata"]["name"] == renamed_target:
                    self.assertEqual(n["spec"], orig["spec"])  # the target keeps its state
                else:
                    self.assertTrue(n["spec"].get("unschedulable"))
            self.assertFalse(D.tolerates_cordon(p))


class VolumeGeneratorTest(unittest.TestCase):
    worlds = V.generate_volumes(11, 6, 5)

    def test_deterministic_in_the_seed(self):
        self.assertEqual(json.dumps(V.generate_volumes(11, 6, 5)), json.dumps(self.worlds))
        self.assertNotEqual(json.dumps(V.generate_volumes(12, 6, 5)), json.dumps(self.worlds))

    def test_one_world_per_pod_and_every_name_is_the_worlds(self):
        self.assertEqual(len(self.worlds), 30)
        self.assertEqual({w["kind"] for w in self.worlds}, set(V.KINDS))
        for w in self.worlds:
            self.assertEqual(len(w["incoming"]), 1)
            prefix = w["name"] + "-"
            for obj in w["classes"] + w["pvs"] + w["nodes"]:
                self.assertTrue(obj["metadata"]["name"].startswith(prefix), obj["metadata"])
            for pv in w["pvs"]:
                if "csi" in pv["spec"]:
                    self.assertTrue(pv["spec"]["csi"]["driver"].startswith(prefix))
            for c in w["pvcs"]:
                self.assertIn(c["metadata"]["namespace"], w["namespaces"])

    def test_pv_capacities_and_a_pods_requests_are_distinct(self):
        # What makes upstream's binder choice unique per node (see gen_volumes).
        for w in self.worlds:
            caps = [pv["spec"]["capacity"]["storage"] for pv in w["pvs"]]
            self.assertEqual(len(caps), len(set(caps)))
            names = {v["persistentVolumeClaim"]["claimName"]
                     for v in w["incoming"][0]["spec"].get("volumes", [])}
            reqs = [c["spec"]["resources"]["requests"]["storage"] for c in w["pvcs"]
                    if c["metadata"]["name"] in names]
            self.assertEqual(len(reqs), len(set(reqs)))

    def test_expected_pvs_smallest_fit_by_increasing_request(self):
        n = {"metadata": {"name": "w-n0", "labels": {G.HOSTNAME: "w-n0"}}}
        other = {"metadata": {"name": "w-n1", "labels": {G.HOSTNAME: "w-n1"}}}

        def pv(name, mi, modes=("ReadWriteOnce",), host=None):
            spec = {"capacity": {"storage": "%dMi" % mi}, "accessModes": list(modes),
                    "storageClassName": "w-wffc"}
            if host:
                spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
                    {"matchExpressions": [V._in(G.HOSTNAME, [host])]}]}}
            return {"metadata": {"name": name}, "spec": spec}
        w = {"classes": [{"metadata": {"name": "w-wffc"},
                          "volumeBindingMode": "WaitForFirstConsumer"}],
             "pvs": [pv("big", 900), pv("mid", 500, host="w-n0"), pv("small", 300),
                     pv("rox", 200, modes=("ReadOnlyMany",))],
             "pvcs": [V._claim("c1", "ns", "w-wffc", 400, ["ReadWriteOnce"]),
                      V._claim("c2", "ns", "w-wffc", 250, ["ReadWriteOnce"])]}
        pod = V._pod("p", "ns", None, "1", ["c1", "c2"])
        # c2 (250Mi) first takes small; c1 then the smallest left that fits: mid on n0.
        self.assertEqual(V.expected_pvs(w, pod, n), {"c2": "small", "c1": "mid"})
        self.assertEqual(V.expected_pvs(w, pod, other), {"c2": "small", "c1": "big"})
        w["pvs"] = w["pvs"][1:]  # without big: nothing left for c1 on n1
        self.assertIsNone(V.expected_pvs(w, pod, other))


if __name__ == "__main__":
    unittest.main(verbosity=1)
