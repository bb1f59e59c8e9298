#!/bin/sh
# phalanx simulate with a real HTTP extender (test/extender/fake_extender.py on loopback).
#   extender.sh PHALANX SCENARIO EXTENDER_PY MODE
# MODE keep:        the extender keeps only node-b: every pod (a PodGroup's members too)
#                   must land on node-b, and the extender must have filtered and bound
#                   (bindVerb) every pod.
# MODE unreachable: a non-ignorable extender on a closed port: no pod is scheduled and the
#                   pods carry upstream's error ("Post ...: dial tcp ...: connect:
#                   connection refused").
# MODE ignorable:   the same dead extender with ignorable: true is skipped: pods schedule.
set -eu
P=$1 SCEN=$2 EXT=$3 MODE=$4
T=$(mktemp -d)
trap 'if [ -f "$T/pid" ]; then kill "$(cat "$T/pid")" 2>/dev/null || true; fi; rm -rf "$T"' EXIT
cfg() {  # cfg URL IGNORABLE [EXTRA-LINE]
  cat > "$T/sched.yaml" <<EOC
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: $1
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 1
  ignorable: $2
  httpTimeout: 5s
  ${3:-}
EOC
}
case $MODE in
keep)
  python3 "$EXT" --port 0 --port-file "$T/port" --keep node-b --log "$T/calls.jsonl" &
  echo $! > "$T/pid"
  i=0; while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
  cfg "http://127.0.0.1:$(cat "$T/port")/sched" false "bindVerb: bind"
  "$P" simulate "$SCEN" --config "$T/sched.yaml" --results "$T/results.jsonl" --no-progress > "$T/out" 2>&1 || { cat "$T/out"; exit 1; }
  cat "$T/out"
  python3 - "$T/results.jsonl" "$T/calls.jsonl" <<'EOP'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(rows) == 6, rows
bad = [r for r in rows if r.get("node") != "node-b"]
assert not bad, "pods not on node-b: %s" % bad
calls = [json.loads(l) for l in open(sys.argv[2])]
seen = {c["pod"] for c in calls if c["verb"] == "filter"}
bound = {c["pod"] for c in calls if c["verb"] == "bind"}
want = {"default/web-%d" % i for i in range(4)} | {"default/train-0", "default/train-1"}
assert want <= seen, "extender did not filter %s" % (want - seen)
assert want == bound, "extender bind calls %s, want %s" % (sorted(bound), sorted(want))
print("extender: all %d pods on node-b; filter and bind called for %d pods" % (len(rows), len(bound)))
EOP
  ;;
unreachable|ignorable)
  # A closed port: bind one, then free it.
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  ign=false; [ "$MODE" = ignorable ] && ign=true
  cfg "http://127.0.0.1:$port" $ign
  "$P" simulate "$SCEN" --config "$T/sched.yaml" --results "$T/results.jsonl" --no-progress > "$T/out" 2>&1 || { cat "$T/out"; exit 1; }
  cat "$T/out"
  python3 - "$T/results.jsonl" "$MODE" "$port" <<'EOP'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mode, port = sys.argv[2], sys.argv[3]
assert len(rows) == 6, rows
placed = [r for r in rows if r.get("node")]
if mode == "ignorable":
    assert len(placed) == 6, "ignorable extender must be skipped: %s" % rows
    print("ignorable dead extender skipped: 6 pods placed")
else:
    assert not placed, "nothing may be placed: %s" % placed
    want = 'Post "http://127.0.0.1:%s/filter": dial tcp 127.0.0.1:%s: connect: connection refused' % (port, port)
    text = json.dumps(rows)
    assert want.replace('"', '\\"') in text, "missing %r in %s" % (want, rows[0])
    print("unreachable extender: no pod placed; message: " + want)
EOP
  ;;
esac
