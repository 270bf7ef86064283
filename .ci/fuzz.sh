#!/usr/bin/env bash
# Builds every fuzz target on stable (no sanitizer), replays the committed
# corpora and regression files, then fuzzes each target briefly. The seed is
# fixed, so a run explores the same inputs for the same code and corpora: a
# local `bash .ci/fuzz.sh` that passes predicts CI. Discovery runs belong to
# fuzz/campaign.sh; set FUZZ_SEED=0 for a random seed here.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
# The fuzz build has its own target directory (instrumented, other flags):
# under $TGM_CI_CACHE when .ci/run sets it, fuzz/target otherwise.
unset CARGO_TARGET_DIR
FUZZ_TARGET_DIR="${TGM_CI_CACHE:+$TGM_CI_CACHE/fuzz-target}"
FUZZ_TARGET_DIR="${FUZZ_TARGET_DIR:-$PWD/target}"
SECONDS_PER_TARGET="${FUZZ_SECONDS:-45}"
SEED="${FUZZ_SEED:-20261122}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked --quiet
fi

targets=$(cargo fuzz list)
cargo fuzz build -s none --release --target-dir "$FUZZ_TARGET_DIR" >/dev/null

# One target: replay its corpus and regression files, then fuzz it for
# SECONDS_PER_TARGET; the report goes to $out/$t.txt, the exit code to
# $out/$t.rc.
out=$(mktemp -d)
run_target() {
    local t=$1 work rc=0
    mkdir -p "corpus/$t"
    work=$(mktemp -d)
    cp -r "corpus/$t/." "$work/"
    for f in ../testdata/regress/"$t"-*; do
        [ -e "$f" ] && cp "$f" "$work/"
    done
    cargo fuzz run -s none --release --target-dir "$FUZZ_TARGET_DIR" "$t" "$work" -- \
        -seed="$SEED" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 >"$out/$t.log" 2>&1 || rc=$?
    {
        echo "--- $t: replay + ${SECONDS_PER_TARGET}s"
        grep -E "stat::number_of_executed_units|SUMMARY|panicked|ERROR" "$out/$t.log" || true
        if [ "$rc" != "0" ]; then
            tail -n 40 "$out/$t.log"
            echo "fuzz target $t found a failure (see fuzz/artifacts/$t)"
        fi
    } >"$out/$t.txt"
    echo "$rc" >"$out/$t.rc"
    rm -rf "$work"
}

# libFuzzer runs one thread per target: FUZZ_JOBS targets at a time (default
# the number of cores), reported in the targets' order.
jobs_max="${FUZZ_JOBS:-$(nproc)}"
for t in $targets; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
        wait -n || true
    done
    run_target "$t" &
done
wait
status=0
for t in $targets; do
    cat "$out/$t.txt"
    [ "$(cat "$out/$t.rc")" = "0" ] || status=1
done
rm -rf "$out"
exit $status
