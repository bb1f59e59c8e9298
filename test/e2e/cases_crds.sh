# The projects' own CRDs, as their releases ship them (../shared/upstream/crds/: KAI,
# Volcano, scheduler-plugins, Koordinator), installed in the API server instead of
# hand-written ones, so that the server prunes and validates Phalanx's status writes as a
# cluster running that project would. A gang of each dialect binds; every status field
# Phalanx wrote (each PATCH body, from the API server's audit log) is read back from the
# server unchanged. Sourced by cases.sh (lib.sh helpers).
# e2e-cases: real_crds

# The CRD directory: $PHALANX_UPSTREAM_CRDS, else the source tree's ../shared/upstream/crds.
crds_dir() { echo "${PHALANX_UPSTREAM_CRDS:-$ROOT/../shared/upstream/crds}"; }

# install_project_crd FILE: POSTs one CRD file of crds_dir. A file whose whole content is a
# relative path is a git symbolic link checked out as text: it is followed; when its target
# is not in this copy of the reference data (scheduler-plugins' manifests/crds links), it
# returns 1, saying so, and the case leaves that dialect out. A missing file skips the case
# (exit 77) in a user's clone and fails it under CI=true.
install_project_crd() {
  local f
  f="$(crds_dir)/$1"
  if [[ -f "$f" ]] && (($(wc -c <"$f") < 512)) && ! grep -q ':' "$f"; then
    local target
    target="$(dirname "$f")/$(tr -d '\n' <"$f")"
    if [[ ! -f "$target" ]]; then
      log "NOT TESTED: $1 is a git symbolic link to $(tr -d '\n' <"$f"), which this copy of the reference data lacks"
      return 1
    fi
    f="$target"
  fi
  if [[ ! -f "$f" ]]; then
    if [[ "${CI:-}" == "true" ]]; then fail "project CRD missing in CI: $(crds_dir)/$1 ($f)"; fi
    echo "SKIP: needs the projects' CRDs ($(crds_dir)/$1 -> $f); not in a user's clone"
    exit 77
  fi
  api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions "@$f" application/yaml \
    >/dev/null || fail "create CRD from $f"
  log "installed CRD $(basename "$f") ($1)"
}

case_real_crds() {
  [[ -n "${PHALANX_E2E_AUDIT_LOG:-}" ]] ||
    fail "the control plane has no audit log (scripts/control-plane.sh start with PHALANX_E2E_AUDIT=1)"
  # One gang of 3 per dialect, as each project's users write them.
  local -A groups=(
    [cosched]="scheduling.x-k8s.io/v1alpha1"
    [koord]="scheduling.sigs.k8s.io/v1alpha1"
    [volcano]="scheduling.volcano.sh/v1beta1"
    [kai]="scheduling.run.ai/v2alpha2"
  )
  local -A crd_files=(
    [cosched]=scheduler-plugins/scheduling.x-k8s.io_podgroups.yaml
    [koord]=koordinator/scheduling.sigs.k8s.io_podgroups.yaml
    [volcano]=volcano/scheduling.volcano.sh_podgroups.yaml
    [kai]=kai/scheduling.run.ai_podgroups.yaml
  )
  local g dialects=() untested=()
  for g in cosched koord volcano kai; do
    if install_project_crd "${crd_files[$g]}"; then
      dialects+=("$g")
    else
      untested+=("$g (${groups[$g]} PodGroup): $(crds_dir)/${crd_files[$g]} is a dangling symbolic link")
    fi
  done
  ((${#dialects[@]} >= 3)) || fail "fewer than 3 of the projects' PodGroup CRDs could be installed"
  for g in "${dialects[@]}"; do
    wait_until 60 "/apis/${groups[$g]}/podgroups served" api GET "/apis/${groups[$g]}/podgroups"
  done
  create_namespace e2e
  create_node node-a 4 8Gi
  create_node node-b 4 8Gi
  write_config "$STATE/sched.yaml" false
  start_phalanx main "$STATE/cp/phalanx.kubeconfig" "$STATE/sched.yaml"
  wait_until 60 "/readyz" http_get "$METRICS_PORT_main" /readyz

  for g in "${dialects[@]}"; do
    local spec='{"minMember":3}'
    [[ $g == kai ]] && spec='{"minMember":3,"queue":"default"}'
    api POST "/apis/${groups[$g]}/namespaces/e2e/podgroups" \
      "{\"apiVersion\":\"${groups[$g]}\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"$g\",\"namespace\":\"e2e\"},\"spec\":$spec}" \
      >/dev/null || fail "create PodGroup $g (${groups[$g]})"
  done
  # Pods name their gang the way each dialect does.
  gang_pod() {  # NAME GANG: a pod of the gang
    local meta
    case $2 in
      cosched) meta='"labels":{"scheduling.x-k8s.io/pod-group":"cosched"}' ;;
      koord) meta='"labels":{"pod-group.scheduling.sigs.k8s.io":"koord"}' ;;
      volcano) meta='"annotations":{"scheduling.k8s.io/group-name":"volcano"}' ;;
      kai) meta='"annotations":{"pod-group-name":"kai"}' ;;
    esac
    api POST /api/v1/namespaces/e2e/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"e2e\",$meta},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.9\",\"resources\":{\"requests\":{\"cpu\":\"200m\",\"memory\":\"64Mi\"}}}]}}" \
      >/dev/null || fail "create pod e2e/$1"
  }
  local i
  for g in "${dialects[@]}"; do
    for i in 0 1 2; do gang_pod "$g-$i" "$g"; done
  done
  for g in "${dialects[@]}"; do
    for i in 0 1 2; do wait_until 60 "pod e2e/$g-$i bound" pod_bound e2e "$g-$i"; done
  done
  # The status writes settle (asynchronous, coalesced): wait for each gang's placed status.
  placed() {  # GANG: its status says the gang is placed
    local st
    st="$(api GET "/apis/${groups[$1]}/namespaces/e2e/podgroups/$1" | jq -c '.status // {}')"
    case $1 in
      cosched | koord) [[ "$(jq -r '.phase // ""' <<<"$st")" == Scheduled ]] ;;
      volcano) [[ "$(jq -r '.phase // ""' <<<"$st")" == Running ]] ;;
      kai) [[ "$(jq -r '.schedulingConditions | length' <<<"$st")" == 0 && "$(jq -r '.running // -1' <<<"$st")" != -1 ]] ;;
    esac
  }
  for g in "${dialects[@]}"; do wait_until 30 "PodGroup e2e/$g status placed" placed "$g"; done
  stop_phalanx main

  # Every PodGroup status PATCH phalanx sent (audit log, level Request): each field of its
  # body's status must be in the object read back with the value sent, unless a later
  # patch changed it; so compare the fields of the last patch, and check every field name
  # of every patch is kept (a pruned field is a field name the read-back object lacks).
  local audit="$PHALANX_E2E_AUDIT_LOG"
  local n=0
  for g in "${dialects[@]}"; do
    local obj bodies last
    obj="$(api GET "/apis/${groups[$g]}/namespaces/e2e/podgroups/$g")"
    bodies="$(jq -c --arg g "$g" 'select(.verb == "patch" and .user.username == "phalanx" and
                  .objectRef.resource == "podgroups" and .objectRef.name == $g and
                  (.responseStatus.code // 200) < 300) | .requestObject.status' "$audit")"
    [[ -n "$bodies" ]] || fail "no status patch of PodGroup $g in the audit log"
    local count
    count=$(wc -l <<<"$bodies")
    n=$((n + count))
    local keys
    keys="$(jq -r 'keys[]' <<<"$bodies" | sort -u)"
    local k
    for k in $keys; do
      jq -e --arg k "$k" '.status | has($k)' <<<"$obj" >/dev/null ||
        fail "PodGroup $g (${groups[$g]}): status.$k was written but the server did not keep it (pruned by the CRD's schema); status read back: $(jq -c .status <<<"$obj")"
    done
    last="$(tail -1 <<<"$bodies")"
    jq -e --argjson want "$last" '.status as $s | $want | to_entries |
            all(.key as $k | .value as $v | ($s[$k] == $v) or ($k == "conditions" or $k == "schedulingConditions"))' \
      <<<"$obj" >/dev/null || fail "PodGroup $g: the last status written $last is not what the server holds: $(jq -c .status <<<"$obj")"
    # Conditions: the server keeps every field of each condition written last.
    for k in conditions schedulingConditions; do
      if jq -e --arg k "$k" 'has($k)' <<<"$last" >/dev/null; then
        jq -e --argjson want "$last" --arg k "$k" '.status[$k] == $want[$k]' <<<"$obj" >/dev/null ||
          fail "PodGroup $g: status.$k written $(jq -c --arg k "$k" '.[$k]' <<<"$last"), read back $(jq -c --arg k "$k" '.status[$k]' <<<"$obj")"
      fi
    done
    log "PodGroup $g (${groups[$g]}): $count status write(s), fields [$(tr '\n' ' ' <<<"$keys")] all kept: $(jq -c .status <<<"$obj")"
  done
  log "$n PodGroup status writes checked against the projects' CRDs"
  # Say again, last, which dialects this run could not check against their real CRD.
  local u
  for u in "${untested[@]}"; do log "NOT TESTED against its real CRD: $u"; done
}
