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


if __name__ == "__main__":
    unittest.main(verbosity=1)
