#!/usr/bin/env python3
"""Checks manifests against the schemas their API servers enforce.

schema_check.py UPSTREAM EXPECTED FILE...

Every document of every FILE whose kind has a schema in UPSTREAM (../shared/upstream: the
projects' CRDs under crds/, the OpenAPI v3 documents of kube-apiserver v1.36.2 under
openapi-v3-v1.36/) is validated as the API server's structural schema validation would:
types, required fields, unknown fields (pruned by a CRD unless
x-kubernetes-preserve-unknown-fields; reported here, since a field the server drops is a
field the user thinks is honoured), enums, int-or-string, nested items and maps. Kinds
without a schema there (Kueue's, the Kubeflow training operator's) are listed as unchecked.

EXPECTED lists the findings that must appear, one "<file basename>: <Kind> <name>: <path>:
<what>" per line ('#' comments allowed); the check fails when a finding is missing from
it or an expected one does not appear. Output: one line per object checked.
"""
import glob
import json
import os
import sys

import yaml


def load_schemas(upstream):
    schemas = {}  # (group, version, kind) -> (schema, resolver)
    for path in glob.glob(os.path.join(upstream, "crds", "*", "*.yaml")):
        with open(path) as f:
            for crd in yaml.safe_load_all(f):
                if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
                    continue
                spec = crd["spec"]
                for v in spec["versions"]:
                    s = v.get("schema", {}).get("openAPIV3Schema")
                    if s:
                        schemas[(spec["group"], v["name"], spec["names"]["kind"])] = (s, {})
    for path in glob.glob(os.path.join(upstream, "openapi-v3-v1.36", "*.json")):
        with open(path) as f:
            doc = json.load(f)
        comps = doc.get("components", {}).get("schemas", {})
        for name, s in comps.items():
            for gvk in s.get("x-kubernetes-group-version-kind", []):
                schemas.setdefault((gvk["group"], gvk["version"], gvk["kind"]), (s, comps))
    return schemas


def resolve(s, comps):
    while True:
        if "$ref" in s:
            s = comps[s["$ref"].split("/")[-1]]
        elif "allOf" in s and len(s["allOf"]) == 1 and not s.get("properties"):
            merged = dict(s["allOf"][0])
            for k, v in s.items():
                if k != "allOf":
                    merged.setdefault(k, v)
            s = merged
        else:
            return s


def type_of(v):
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def check(v, s, comps, path, out):
    s = resolve(s, comps)
    if v is None:
        return  # null: the server treats it as unset (structural schemas drop it)
    if s.get("x-kubernetes-int-or-string"):
        if type_of(v) not in ("integer", "string"):
            out.append(f"{path}: expected int-or-string, got {type_of(v)}")
        return
    t = s.get("type")
    # Quantities and the like: the OpenAPI documents give "string" for a type that also
    # takes numbers (resource.Quantity has format "quantity"... or an x- marker).
    got = type_of(v)
    if t == "string" and got in ("integer", "number") and (
            s.get("format") == "quantity" or "Quantity" in s.get("description", "")[:200]):
        return
    if t and t != got and not (t == "number" and got == "integer"):
        out.append(f"{path}: expected {t}, got {got}")
        return
    if "enum" in s and v not in s["enum"]:
        out.append(f"{path}: Unsupported value: {json.dumps(v)}: supported values: "
                   + ", ".join(json.dumps(e) for e in s["enum"]))
    if got == "object":
        props = s.get("properties")
        addl = s.get("additionalProperties")
        for req in s.get("required", []):
            if req not in v:
                out.append(f"{path}.{req}: Required value" if path else f"{req}: Required value")
        for k, child in v.items():
            cpath = f"{path}.{k}" if path else k
            if props and k in props:
                check(child, props[k], comps, cpath, out)
            elif isinstance(addl, dict):
                check(child, addl, comps, cpath, out)
            elif props is not None and not s.get("x-kubernetes-preserve-unknown-fields") \
                    and addl is not True:
                out.append(f"{cpath}: unknown field")
    elif got == "array" and "items" in s:
        for i, item in enumerate(v):
            check(item, s["items"], comps, f"{path}[{i}]", out)


def main():
    upstream, expected_path, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not os.path.isdir(upstream):
        if os.environ.get("CI"):
            print(f"FAIL: {upstream} missing (CI must have ../shared)")
            return 1
        print(f"SKIP: {upstream} missing (a clone without ../shared)")
        return 0
    schemas = load_schemas(upstream)
    with open(expected_path) as f:
        expected = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    found, checked, unchecked = set(), 0, set()
    for path in files:
        with open(path) as f:
            docs = list(yaml.safe_load_all(f))
        for doc in docs:
            if not isinstance(doc, dict):
                continue
            items = doc.get("items", []) if doc.get("kind") == "List" else [doc]
            for obj in items:
                if not obj or "kind" not in obj:
                    continue
                av = obj.get("apiVersion", "")
                group, _, version = av.rpartition("/")
                key = (group, version, obj["kind"])
                name = (obj.get("metadata") or {}).get("name") or \
                    (obj.get("metadata") or {}).get("generateName", "?")
                if key not in schemas:
                    unchecked.add(f"{obj['kind']} ({av})")
                    continue
                s, comps = schemas[key]
                out = []
                check(obj, s, comps, "", out)
                checked += 1
                for o in out:
                    found.add(f"{os.path.basename(path)}: {obj['kind']} {name}: {o}")
                print(f"{'ok  ' if not out else 'FAIL'} {os.path.basename(path)}: "
                      f"{obj['kind']} {name} ({av})" + "".join(f"\n       {o}" for o in out))
    print(f"{checked} objects checked; no schema here for: {', '.join(sorted(unchecked))}")
    missing = expected - found
    extra = found - expected
    for m in sorted(missing):
        print(f"expected finding did not appear: {m}")
    for e in sorted(extra):
        print(f"unexpected finding: {e}")
    return 1 if missing or extra else 0


if __name__ == "__main__":
    sys.exit(main())
