#!/usr/bin/env bash
# Runs every hostile-input and fault class Phalanx is tested against and writes the table
# of docs/reliability.md: class | injected/tried | result.
#   1. fuzzing: each libFuzzer target of fuzz/ for --fuzz-seconds (scripts/fuzz.sh), plus the
#      saved crash inputs of fuzz/regressions/
#   2. hostile-input unit tests (*_hostile_test.cc), by test suite
#   3. fault-injection end-to-end cases against a real kube-apiserver (E2E_FAULT_CASES below;
#      add a case there when test/e2e/cases.sh gains one)
#   4. container hardening of deploy/Dockerfile and deploy/deployment.yaml
#   5. optionally (--sanitize) the whole unit suite under ASan/UBSan (scripts/sanitize.sh)
#
# Usage: scripts/reliability.sh [--build-dir DIR] [--fuzz-seconds N] [--sanitize]
#                               [--out FILE]
#   --build-dir DIR   a configured build tree with the unit tests and e2e (default: build,
#                     as scripts/build.sh makes it; build-asan runs them under ASan/UBSan)
#   --fuzz-seconds N  per fuzz target (default 60)
#   --out FILE        default docs/reliability.md
# Exits 1 if any class failed (the table is written either way).
set -euo pipefail
cd "$(dirname "$0")/.."

# case (ctest name without "e2e.") | what is injected. Cases of test/faults print
#   FAULT-REPORT <case> injected=<n> pods_bound=<n> violations=<n>
# and the table adds those counts.
E2E_FAULT_CASES=(
  "apiserver_restart|kube-apiserver killed for 10 s mid-run, restarted (same Phalanx process resumes; nothing double-bound)"
  "leader_kill9|kill -9 of the leading replica (standby takes over the Lease and schedules)"
  "fault_phalanx_kill9|kill -9 of phalanx run 5 times at seeded random points, 3 of them right after the first binding of a Coscheduling gang; restart completes every gang (test/faults)"
  "fault_gpushare_kill9|kill -9 of phalanx run 4 times while GPU-share pods are being bound (some between a pod's annotation PATCH and its binding); each restart rebuilds per-device GPU accounting from the pods' annotations; no device over 1000 milli by the annotations (test/faults)"
  "fault_apiserver_kill_gangs|kube-apiserver SIGKILLed right after the first binding of a gang, down 5 s, 3 times; the same Phalanx completes every gang (test/faults)"
  "fault_watch_cuts|a loopback TCP proxy cuts every connection (watch streams too) every 3 s and delays 30% of new ones (test/faults)"
  "fault_etcd_restart|etcd stopped and restarted with the same data dir twice mid-run (test/faults)"
  "fault_http_faults|a TLS-terminating proxy: 409 on 30% of bindings (half after the bind happened), 429 / 503 with Retry-After on 5% / 5%, 410 Gone on 30% of watches, 800 ms delays on 10% (test/faults)"
  "fault_leader_kills|two replicas with leader election; the leader kill -9'd 4 times in a row (test/faults)"
  "queues_bad_input|live queue objects that are wrong: a KAI Queue parent cycle, a negative quota, an ElasticQuota with min > max, a missing parent; each gets an InvalidQueue Warning event naming the field, its pods stay pending with the reason, the valid queue's pod binds, fixing the cycle lets its pod run"
  "metrics_secure|scrapes of the HTTPS /metrics without a token, with a bad token and as a user without the nonResourceURL grant (403 / 401 / 403, TokenReview + SubjectAccessReview against the API server); an authorized ServiceAccount token 200; /healthz and /readyz open"
  "fault_load_churn|load: 2 rounds of 10,000 pods (1,000 Coscheduling gangs x 4 + 6,000 plain) in 10 waves while nodes are added and removed (scheduler_perf churn, recreate, 10 slots / 500 ms; pods of a removed node deleted as the pod GC does, lost gang members re-created as their Job would); VmRSS at the end of round 2 <= round 1 x 1.25 + 16 MiB; faults = node adds + removes (test/faults, LOAD_CHURN_SCALE=full)"
)

# suite | what it tries
HOSTILE_SUITES=(
  "QuantityHostileTest|quantities 1e308, -1e308, 2^63, 8Ei, -1, exponents beyond int64, 10 MB digit / letter / fraction strings, pod requests with them"
  "DecodeHostileTest|YAML and JSON nested 10^5 levels (flow sequences, maps, Lists), a stray ',' (yaml-cpp endless loop), 100k labels and a 100k-entry selector, 2 MB label keys / values / names / annotations, 20k empty documents, 5k namespaces, binary garbage"
  "ClientHostileTest|LIST / WATCH bodies that are not objects, JSON nested 10^5 levels, a 20k-item LIST with bad items, kubeconfigs with missing maps / 10^5 nesting / garbage, secrets in error messages, group/world-readable key and token files"
  "HttpServerHostileTest|a slowloris client on the health port, a 1 MB request head, binary garbage, POST"
  "GangHostileTest|a 100,000-pod gang (Job + Coscheduling PodGroup) that cannot fit on 8 nodes"
)

build_dir=build
fuzz_seconds=60
sanitize=0
out=docs/reliability.md
while (($#)); do
  case "$1" in
    --build-dir) build_dir=$2; shift ;;
    --fuzz-seconds) fuzz_seconds=$2; shift ;;
    --sanitize) sanitize=1 ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "reliability.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

work=$(mktemp -d /tmp/phalanx-reliability.XXXXXX)
trap 'rm -rf "$work"' EXIT
rows=()
failed=0
row() { rows+=("| $1 | $2 | $3 |"); }

# ctest summary of one run: "N passed, M failed, K skipped" from the per-test lines.
ctest_counts() {
  local log=$1 p f s
  p=$(grep -cE 'Test +#[0-9]+: .* +Passed' "$log" || true)
  f=$(grep -cE 'Test +#[0-9]+: .*\*\*\*(Failed|Exception|Timeout)|Test +#[0-9]+: .*Not Run' "$log" || true)
  s=$(grep -cE 'Test +#[0-9]+: .*\*\*\*Skipped' "$log" || true)
  echo "$p $f $s"
}

# ---- 1. fuzzing ----
echo "reliability: fuzzing, ${fuzz_seconds} s per target"
fuzz_rc=0
scripts/fuzz.sh --seconds "$fuzz_seconds" >"$work/fuzz.log" 2>&1 || fuzz_rc=$?
declare -A fuzz_what=(
  [fuzz_manifest]="manifest decoder (YAML, JSON, multi-document, List), api::DecodeManifests"
  [fuzz_quantity]="resource.Quantity parsing"
  [fuzz_label_selector]="label and node selectors: validation and matching"
  [fuzz_kubeconfig]="kubeconfig loading"
  [fuzz_scheduler_config]="KubeSchedulerConfiguration decoding, defaulting, validation"
  [fuzz_objects]="live API objects: simdjson LIST pages, WATCH lines, objects"
  [fuzz_cel_selector]="DRA CEL device selectors: parse, type-check, evaluate"
)
fuzz_lines=0
while IFS= read -r line; do
  if [[ $line =~ ^(fuzz_[a-z_]+):\ ([0-9]+)\ executions,\ ([0-9]+)\ crashes,\ corpus\ ([0-9]+),\ regressions\ replayed\ ([0-9]+) ]]; then
    t=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]} c=${BASH_REMATCH[3]} corpus=${BASH_REMATCH[4]}
    r=${BASH_REMATCH[5]}
    fuzz_lines=$((fuzz_lines + 1))
    result="no crash, leak, UB or timeout; corpus $corpus inputs"
    ((r > 0)) && result+="; $r saved crash input(s) replayed clean"
    if ((c > 0)); then result="**$c crash** (build-asan/artifacts/$t/)"; failed=1; fi
    row "fuzz: ${fuzz_what[$t]:-$t} (\`$t\`)" "$n generated inputs in ${fuzz_seconds} s" "$result"
  fi
done <"$work/fuzz.log"
if ((fuzz_lines == 0)); then
  row "fuzz: all targets" "build or run failed" "**failed** (see scripts/fuzz.sh output)"
  failed=1
  tail -20 "$work/fuzz.log" >&2
elif ((fuzz_rc != 0)) && grep -q "crashes again" "$work/fuzz.log"; then
  row "fuzz: saved crash inputs" "fuzz/regressions/" "**a saved input crashes again**"
  failed=1
fi

# ---- 2 + 3. hostile unit tests and fault e2e cases (one build) ----
echo "reliability: building unit tests and phalanx in $build_dir"
if [[ ! -f $build_dir/build.ninja ]]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$build_dir" -j"${JOBS:-2}" phalanx phalanx_api_test phalanx_client_test \
  phalanx_metrics_test phalanx_sim_test >"$work/build.log" 2>&1 || {
  tail -30 "$work/build.log" >&2
  echo "reliability: build failed" >&2
  exit 1
}
export ASAN_OPTIONS="halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
for entry in "${HOSTILE_SUITES[@]}"; do
  suite=${entry%%|*} what=${entry#*|}
  echo "reliability: $suite"
  (cd "$build_dir" && ctest -R "^${suite}\." --output-on-failure --timeout 900) \
    >"$work/$suite.log" 2>&1 || true
  read -r p f s < <(ctest_counts "$work/$suite.log")
  if ((p + f == 0)); then
    result="**no test ran**"; failed=1
  elif ((f > 0)); then
    result="**$f of $((p + f)) tests failed**"; failed=1
  else
    result="$p of $p tests pass: clear error or graceful handling"
  fi
  row "hostile input: \`$suite\`" "$what" "$result"
done

# e2e.fault_load_churn at full scale (10,000 pods per round; CTest's default is 2,000).
export LOAD_CHURN_SCALE=full
for entry in "${E2E_FAULT_CASES[@]}"; do
  c=${entry%%|*} what=${entry#*|}
  echo "reliability: e2e.$c"
  # -V: the case's own output (FAULT-REPORT) is in the log even when it passes.
  (cd "$build_dir" && ctest -R "^e2e\.${c}\$" -V --timeout 2400) >"$work/e2e.$c.log" 2>&1 || true
  line=$(grep -E "Test +#[0-9]+: e2e\.${c} " "$work/e2e.$c.log" || true)
  report=$(grep -oE 'FAULT-REPORT .*' "$work/e2e.$c.log" | tail -1 || true)
  if [[ $report =~ injected=([0-9]+).*pods_bound=([0-9]+).*violations=([0-9]+) ]]; then
    what+="; ${BASH_REMATCH[1]} faults injected, ${BASH_REMATCH[2]} pods bound, ${BASH_REMATCH[3]} invariant violations"
  fi
  # Cases that check memory print MEMORY <case> rss_round1_kib=.. rss_round2_kib=.. rss_peak_kib=.. limit_kib=..
  mem=$(grep -oE 'MEMORY .*' "$work/e2e.$c.log" | tail -1 || true)
  if [[ $mem =~ rss_round1_kib=([0-9]+).*rss_round2_kib=([0-9]+).*rss_peak_kib=([0-9]+).*limit_kib=([0-9]+) ]]; then
    what+="; VmRSS $((BASH_REMATCH[1] / 1024)) MiB after round 1, $((BASH_REMATCH[2] / 1024)) MiB after round 2 (limit $((BASH_REMATCH[4] / 1024)) MiB), peak $((BASH_REMATCH[3] / 1024)) MiB"
  fi
  if [[ -z $line ]]; then
    result="**not run** (no such test in $build_dir)"; failed=1
  elif [[ $line == *Passed* ]]; then
    secs=$(echo "$line" | grep -oE '[0-9.]+ sec' || true)
    result="pass ($secs)"
  elif [[ $line == *Skipped* ]]; then
    result="skipped: no control plane on this machine (CI=true makes it run)"
  else
    result="**failed**"; failed=1
    tail -20 "$work/e2e.$c.log" >&2
  fi
  row "fault: \`e2e.$c\`" "$what" "$result"
done

# ---- 4. container hardening ----
hard=$(python3 - <<'PY'
import re, yaml
checks = []
df = open("deploy/Dockerfile").read()
users = re.findall(r"^USER\s+(\S+)", df, re.M)
checks.append(("image USER is non-root", bool(users) and users[-1].split(":")[0] not in ("0", "root")))
dep = next(d for d in yaml.safe_load_all(open("deploy/deployment.yaml")) if d and d.get("kind") == "Deployment")
pod = dep["spec"]["template"]["spec"]
psc = pod.get("securityContext", {})
checks.append(("pod runAsNonRoot", psc.get("runAsNonRoot") is True))
checks.append(("pod seccompProfile RuntimeDefault", psc.get("seccompProfile", {}).get("type") == "RuntimeDefault"))
for c in pod["containers"]:
    sc = c.get("securityContext", {})
    checks.append((c["name"] + " readOnlyRootFilesystem", sc.get("readOnlyRootFilesystem") is True))
    checks.append((c["name"] + " allowPrivilegeEscalation false", sc.get("allowPrivilegeEscalation") is False))
    checks.append((c["name"] + " drops ALL capabilities", "ALL" in sc.get("capabilities", {}).get("drop", [])))
    checks.append((c["name"] + " not privileged", not sc.get("privileged", False)))
    checks.append((c["name"] + " binds metrics via --bind-address", any(a.startswith("--bind-address") for a in c.get("args", []))))
bad = [n for n, ok in checks if not ok]
print(len(checks), len(checks) - len(bad), "; ".join(bad))
PY
)
read -r total ok bad <<<"$hard"
if [[ $total == "$ok" ]]; then
  row "container hardening (deploy/)" "$total settings checked" "all $ok present"
else
  row "container hardening (deploy/)" "$total settings checked" "**missing: $bad**"; failed=1
fi

# ---- 5. sanitizers (optional: a full second build) ----
if ((sanitize)); then
  echo "reliability: unit suite under ASan/UBSan"
  san_rc=0
  scripts/sanitize.sh >"$work/sanitize.log" 2>&1 || san_rc=$?
  read -r p f s < <(ctest_counts "$work/sanitize.log")
  if ((san_rc == 0)); then
    result="$p tests pass, no sanitizer report"
  else
    result="**$f failed** (exit $san_rc)"; failed=1
  fi
  row "memory safety: unit, CLI and simulation tests under ASan + UBSan" \
      "$((p + f + s)) tests (e2e and out-of-tree excluded)" "$result"
fi

# ---- the table ----
{
  echo "# Reliability: hostile input and faults"
  echo
  echo "Generated by \`scripts/reliability.sh$( ((sanitize)) && echo " --sanitize") --fuzz-seconds $fuzz_seconds\`"
  echo "on $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "($(nproc) cores; build dir \`$build_dir\`). Do not edit by hand: rerun the script."
  echo "The threat model these classes come from is [security.md](security.md)."
  echo
  echo "| class | injected / tried | result |"
  echo "|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Fuzzing runs libFuzzer with ASan + UBSan (clang, \`scripts/fuzz.sh\`); a crash fails"
  echo "the run, and every crash found so far is fixed, kept under \`fuzz/regressions/\` and"
  echo "has a unit test: a yaml-cpp \`LoadAll\` endless loop on a stray \`,\` (manifest"
  echo "decoder), a yaml-cpp exception escaping \`LoadKubeconfig\` for a \`users[]\` entry"
  echo "without \`user\`, and a null dereference on a LIST body that is JSON but not an object."
  echo "CI runs the fuzzers for a short bound on every run (\`scripts/test.sh\`)."
} >"$out"
echo "reliability: wrote $out"
cat "$out"
exit "$failed"
