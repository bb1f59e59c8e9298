#!/usr/bin/env python3
"""A scheduler extender for tests (k8s.io/kube-scheduler/extender/v1 wire format).

POST <prefix>/filter keeps only the node named by --keep (ExtenderArgs with Nodes or
NodeNames; the others go to FailedNodes with "fake extender keeps only <node>");
POST <prefix>/prioritize scores --keep 10 and every other node 0; POST <prefix>/bind
(ExtenderBindingArgs) answers success for --keep and an Error otherwise, binding nothing
(the simulator applies an extender's binding to its own store). Every request is
appended to --log as one JSON line {"verb": ..., "pod": "<ns>/<name>"}.

Listens on 127.0.0.1:--port (0: an ephemeral port) and writes the port it got to
--port-file once it is ready.
"""
import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def field(obj, name):
    """encoding/json matches struct field names case-insensitively."""
    if not isinstance(obj, dict):
        return None
    for k, v in obj.items():
        if k.lower() == name.lower():
            return v
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--keep", required=True)
    ap.add_argument("--log", default="")
    args = ap.parse_args()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *a):  # quiet
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            req = json.loads(body or b"{}")
            verb = self.path.rstrip("/").rsplit("/", 1)[-1]
            pod = field(req, "Pod") or {}
            meta = pod.get("metadata", {})
            if field(req, "PodName") is not None:  # ExtenderBindingArgs
                meta = {"namespace": field(req, "PodNamespace"), "name": field(req, "PodName")}
            if args.log:
                with open(args.log, "a") as f:
                    f.write(json.dumps({"verb": verb, "pod": "%s/%s" % (
                        meta.get("namespace", ""), meta.get("name", ""))}) + "\n")
            names = field(req, "NodeNames")
            nodes = field(req, "Nodes")
            if names is None:
                names = [n["metadata"]["name"] for n in (nodes or {}).get("items", [])]
            if verb == "filter":
                kept = [n for n in names if n == args.keep]
                failed = {n: "fake extender keeps only %s" % args.keep for n in names
                          if n != args.keep}
                out = {"NodeNames": kept if field(req, "NodeNames") is not None else None,
                       "Nodes": {"items": [n for n in (nodes or {}).get("items", [])
                                           if n["metadata"]["name"] == args.keep]}
                       if nodes is not None else None,
                       "FailedNodes": failed, "Error": ""}
            elif verb == "bind":
                # Records the binding only: a live test would have to POST pods/binding.
                out = {"Error": "" if field(req, "Node") == args.keep else
                       "fake extender binds only to %s" % args.keep}
            elif verb == "prioritize":
                out = [{"Host": n, "Score": 10 if n == args.keep else 0} for n in names]
            else:
                self.send_response(404)
                self.end_headers()
                return
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.replace(args.port_file + ".tmp", args.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
