#!/usr/bin/env bash
# A long fuzzing campaign, outside CI: every target (or the ones named) for
# SECONDS_PER_TARGET, JOBS targets at a time. Corpora grow in $OUT/corpus
# and persist between campaigns; crashes land in $OUT/artifacts/<target>/;
# one summary row per target run is appended to $OUT/summary.tsv.
#
#   fuzz/campaign.sh                      # every target, 1 hour each, 2 at a time
#   SECONDS_PER_TARGET=600 JOBS=1 fuzz/campaign.sh decode scan
#
# A crash ends that target's run early (its row says so); turn the artifact
# into testdata/regress/<target>-<id>.bin with a test in tests/regress.rs.
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_PER_TARGET="${SECONDS_PER_TARGET:-3600}"
JOBS="${JOBS:-2}"
OUT="$(mkdir -p "${OUT:-campaign}" && cd "${OUT:-campaign}" && pwd)"

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked --quiet
fi
cargo fuzz build -s none --release >/dev/null

if [ "$#" -gt 0 ]; then targets="$*"; else targets=$(cargo fuzz list); fi
[ -s "$OUT/summary.tsv" ] ||
    printf 'started\ttarget\tseconds\texecutions\texec_per_s\tpeak_rss_mb\tcoverage\tfeatures\tcorpus\tresult\n' >"$OUT/summary.tsv"

run_one() {
    local t="$1" corpus="$OUT/corpus/$1" art="$OUT/artifacts/$1/"
    mkdir -p "$corpus" "$art"
    cp -rn "corpus/$t/." "$corpus/"
    for f in ../testdata/regress/"$t"-*; do
        [ -e "$f" ] && cp -n "$f" "$corpus/"
    done
    local started log rc=0 t0=$SECONDS
    started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    log="$OUT/$t-$(date -u +%Y%m%dT%H%M%S).log"
    cargo fuzz run -s none --release "$t" "$corpus" -- \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$art" -print_final_stats=1 >"$log" 2>&1 || rc=$?
    local execs secs rate rss cov ft size result
    stat() { grep -o "stat::$1: *[0-9]*" "$log" | awk '{print $2}' | tail -1; }
    execs=$(stat number_of_executed_units)
    secs=$((SECONDS - t0))
    rate=$(stat average_exec_per_sec)
    rss=$(stat peak_rss_mb)
    cov=$(grep -o 'cov: [0-9]*' "$log" | awk '{print $2}' | tail -1)
    ft=$(grep -o 'ft: [0-9]*' "$log" | awk '{print $2}' | tail -1)
    size=$(find "$corpus" -type f | wc -l)
    if [ "$rc" = "0" ]; then result=clean; else result="FAILED(rc=$rc, see $log)"; fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$started" "$t" "$secs" "${execs:-?}" \
        "${rate:-?}" "${rss:-?}" "${cov:-?}" "${ft:-?}" "$size" "$result" >>"$OUT/summary.tsv"
    echo "$t: $result, ${execs:-?} executions"
}
export -f run_one
export OUT SECONDS_PER_TARGET

printf '%s\n' $targets | xargs -P "$JOBS" -I{} bash -c 'run_one {}'
column -t -s $'\t' "$OUT/summary.tsv"
