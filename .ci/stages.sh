# Sourced by .ci/run: `stage NAME COMMAND…` runs one CI stage under a
# heading, records its wall time, and on exit (success or failure) prints
# the time of every stage that ran and the total.

_stage_names=()
_stage_secs=()
_stage_start_all=$SECONDS
_stage_running_since=

_stage_summary() {
    local rc=$?
    printf '\n=== stage times ===\n'
    local i
    if [ -n "$_stage_running_since" ]; then
        _stage_secs[-1]=$((SECONDS - _stage_running_since))
        _stage_names[-1]="${_stage_names[-1]} (failed)"
    fi
    for i in "${!_stage_names[@]}"; do
        printf '%6ds  %s\n' "${_stage_secs[$i]}" "${_stage_names[$i]}"
    done
    printf '%6ds  total (exit %d)\n' "$((SECONDS - _stage_start_all))" "$rc"
}
trap _stage_summary EXIT

stage() {
    local name=$1
    shift
    printf '\n=== %s ===\n' "$name"
    _stage_running_since=$SECONDS
    _stage_names+=("$name")
    _stage_secs+=(0)
    "$@"
    _stage_secs[-1]=$((SECONDS - _stage_running_since))
    _stage_running_since=
}
