# e2e-cases: metrics_secure
# The HTTPS metrics endpoint against kube-apiserver v1.20.2 (app/serving.h): delegated
# authentication (TokenReview) and authorization (SubjectAccessReview) through the API
# server, as kube-scheduler's --secure-port. Sourced by cases.sh (lib.sh helpers).
# shellcheck shell=bash

# https_code PORT PATH [TOKEN]: the HTTP status of a GET on the HTTPS endpoint (self-signed
# certificate: -k), with the bearer TOKEN when given.
https_code() {
  local args=(-sk -o /dev/null -w '%{http_code}' --max-time 10)
  [[ -n "${3:-}" ]] && args+=(-H "Authorization: Bearer $3")
  curl "${args[@]}" "https://127.0.0.1:$1$2"
}
https_get() {
  curl -skf --max-time 10 -H "Authorization: Bearer $3" "https://127.0.0.1:$1$2"
}

# A ServiceAccount bound to deploy/metrics-reader.yaml's ClusterRole (get /metrics) and a
# token for it from the TokenRequest API; prints the token.
metrics_reader_token() {
  create_namespace monitoring
  api POST /api/v1/namespaces/monitoring/serviceaccounts \
    '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"prometheus"}}' >/dev/null ||
    fail "create ServiceAccount monitoring/prometheus"
  local f="$STATE/metrics-reader.txt" resource doc
  # Each document of deploy/metrics-reader.yaml: "<resource> <JSON>".
  python3 - "$ROOT/deploy/metrics-reader.yaml" "$f" <<'PY' || fail "read deploy/metrics-reader.yaml"
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
with open(sys.argv[2], "w") as out:
    for d in docs:
        out.write(d["kind"].lower() + "s " + json.dumps(d) + "\n")
PY
  while read -r resource doc; do
    api POST "/apis/rbac.authorization.k8s.io/v1/$resource" "$doc" >/dev/null ||
      fail "create $resource of deploy/metrics-reader.yaml"
  done <"$f"
  api POST /api/v1/namespaces/monitoring/serviceaccounts/prometheus/token \
    '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}' |
    jq -er '.status.token' || fail "TokenRequest for monitoring/prometheus"
}

# Phalanx runs as the `phalanx` user (deploy/rbac.yaml's ClusterRole, which grants the
# reviews) with --secure-port: /metrics without a token is refused (403: the anonymous user
# may not get it), with a bad token 401, with the token of a ServiceAccount allowed `get` on
# /metrics it is served; /healthz needs no token. The plain endpoint of lib.sh still works.
case_metrics_secure() {
  create_namespace e2e
  create_node node-a 4 8Gi
  local token
  token="$(metrics_reader_token)"
  [[ -n "$token" ]] || fail "no ServiceAccount token"
  write_config "$STATE/sched.yaml" false
  local sport
  sport=$(free_port)
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml" --secure-port "$sport"
  local port=$METRICS_PORT_main
  wait_until 60 "/readyz of phalanx (plain)" http_get "$port" /readyz
  healthz_ok() { [[ "$(https_code "$sport" /healthz)" == 200 ]]; }
  wait_until 30 "HTTPS /healthz without a token" healthz_ok
  [[ "$(https_code "$sport" /readyz)" == 200 ]] || fail "HTTPS /readyz without a token was refused"
  local code
  code="$(https_code "$sport" /metrics)"
  log "HTTPS /metrics without a token: $code"
  [[ "$code" == 401 || "$code" == 403 ]] || fail "unauthenticated /metrics gave $code, expected 401/403"
  code="$(https_code "$sport" /metrics not-a-valid-token)"
  log "HTTPS /metrics with a bad token: $code"
  [[ "$code" == 401 ]] || fail "/metrics with a bad token gave $code, expected 401"
  # The phalanx user itself may not get /metrics (its ClusterRole has no nonResourceURLs).
  code="$(https_code "$sport" /metrics "$PHALANX_TOKEN")"
  [[ "$code" == 403 ]] || fail "/metrics as the phalanx user gave $code, expected 403"
  code="$(https_code "$sport" /metrics "$token")"
  log "HTTPS /metrics with monitoring/prometheus's token: $code"
  [[ "$code" == 200 ]] || fail "/metrics with an allowed token gave $code, expected 200"
  # A pod bound: the scrape carries upstream's families with their labels.
  create_pod e2e web-0 100m
  wait_until 60 "pod e2e/web-0 bound" pod_bound e2e web-0
  scheduled_sli() {
    https_get "$sport" /metrics "$token" >"$STATE/scrape.txt" &&
      grep -q 'scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"} 1$' "$STATE/scrape.txt"
  }
  wait_until 30 "the scheduling SLI of web-0 over HTTPS" scheduled_sli
  local fam
  for fam in 'scheduler_framework_extension_point_duration_seconds_count{extension_point="Bind",status="Success",profile="default-scheduler"}' \
             'scheduler_queue_incoming_pods_total{queue="active",event="PodAdd"}' \
             'scheduler_pending_pods{queue="active"}' \
             'scheduler_scheduler_cache_size{type="nodes"} 1'; do
    grep -qF -- "$fam" "$STATE/scrape.txt" || fail "HTTPS scrape lacks $fam"
  done
  # The plain endpoint (lib.sh's) serves the same families.
  metrics_match "$port" 'scheduler_pod_scheduling_attempts_count 1$' ||
    fail "plain /metrics lacks scheduler_pod_scheduling_attempts"
  stop_phalanx main
}
