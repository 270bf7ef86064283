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

status=0
for t in $targets; do
    mkdir -p "corpus/$t"
    work=$(mktemp -d)
    cp -r "corpus/$t/." "$work/"
    for f in ../testdata/regress/"$t"-*; do
        [ -e "$f" ] && cp "$f" "$work/"
    done
    echo "--- $t: replay + ${SECONDS_PER_TARGET}s"
    log="$work.log"
    rc=0
    cargo fuzz run -s none --release --target-dir "$FUZZ_TARGET_DIR" "$t" "$work" -- \
        -seed="$SEED" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 >"$log" 2>&1 || rc=$?
    grep -E "stat::number_of_executed_units|SUMMARY|panicked|ERROR" "$log" || true
    if [ "$rc" != "0" ]; then
        tail -n 40 "$log"
        echo "fuzz target $t found a failure (see fuzz/artifacts/$t)"
        status=1
    fi
    rm -f "$log"
    rm -rf "$work"
done
exit $status
