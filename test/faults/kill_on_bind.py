#!/usr/bin/env python3
"""SIGKILLs a process as soon as a watch sees the first gang member get bound.

Usage: kill_on_bind.py PID|@PIDFILE NAMESPACE TIMEOUT-SECONDS [LABEL-SELECTOR]
(@PIDFILE: the pid is read from that file at the moment of the kill, so the watcher can be
in place before the process starts.)
Reads SERVER, CA, ADMIN_TOKEN from the environment. Lists the pods of NAMESPACE that match
LABEL-SELECTOR (default: the label scheduling.x-k8s.io/pod-group exists, i.e. gang members),
remembers which are bound, then watches from the
list's resourceVersion; the first pod that goes from unbound to bound triggers kill -9 PID.
Prints "KILLED <pod> <node>" and exits 0, or prints "NO-BIND" and exits 1 after the timeout.
"""
import json
import os
import signal
import ssl
import sys
import time
import urllib.parse
import urllib.request


def open_(path, timeout):
    ctx = ssl.create_default_context(cafile=os.environ["CA"])
    req = urllib.request.Request(os.environ["SERVER"] + path,
                                 headers={"Authorization": "Bearer " + os.environ["ADMIN_TOKEN"]})
    return urllib.request.urlopen(req, context=ctx, timeout=timeout)


def main():
    target, ns, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
    selector = sys.argv[4] if len(sys.argv) > 4 else "scheduling.x-k8s.io/pod-group"
    sel = "labelSelector=" + urllib.parse.quote(selector, safe="")
    with open_(f"/api/v1/namespaces/{ns}/pods?{sel}", 30) as r:
        lst = json.load(r)
    bound = {p["metadata"]["name"] for p in lst["items"] if p["spec"].get("nodeName")}
    rv = lst["metadata"]["resourceVersion"]
    deadline = time.time() + timeout
    while time.time() < deadline:
        left = max(1, int(deadline - time.time()))
        try:
            with open_(f"/api/v1/namespaces/{ns}/pods?{sel}&watch=true&resourceVersion={rv}"
                       f"&timeoutSeconds={left}", left + 5) as r:
                for line in r:
                    ev = json.loads(line)
                    o = ev["object"]
                    if ev["type"] == "ERROR":
                        raise RuntimeError(f"watch error: {o}")
                    rv = o["metadata"]["resourceVersion"]
                    name, node = o["metadata"]["name"], o["spec"].get("nodeName")
                    if node and name not in bound:
                        pid = int(open(target[1:]).read()) if target.startswith("@") else int(target)
                        os.kill(pid, signal.SIGKILL)
                        print(f"KILLED {name} {node}")
                        return 0
        except OSError:
            continue
    print("NO-BIND")
    return 1


if __name__ == "__main__":
    sys.exit(main())
