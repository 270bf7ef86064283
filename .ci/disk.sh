#!/usr/bin/env bash
# Checks that the build cache's file system has room for a cold build before
# anything is compiled. A linker that runs out of space dies with SIGBUS
# ("ld terminated with signal 7"), long after the cause; this names it first.
#
# When less than TGM_CI_MIN_FREE_GIB (default 30) is free, the parts of the
# cache that a run rebuilds anyway when they are missing (the debug target
# directory, the fuzz targets' build) are removed, oldest cost first, and
# the space is checked again.
set -euo pipefail
cache="${TGM_CI_CACHE:?TGM_CI_CACHE is unset}"
target="${CARGO_TARGET_DIR:?CARGO_TARGET_DIR is unset}"
need="${TGM_CI_MIN_FREE_GIB:-30}"
mkdir -p "$cache" "$target"

free_gib() { df -BG --output=avail "$1" | tail -n 1 | tr -dc '0-9'; }

report() {
    echo "free on the cache's file system: $(free_gib "$cache") GiB (a cold run needs about $need GiB)"
    du -sh "$target" "$cache/fuzz-target" 2>/dev/null || true
}

report
for stale in "$target/debug" "$cache/fuzz-target" "$target/release"; do
    [ "$(free_gib "$cache")" -ge "$need" ] && exit 0
    if [ -d "$stale" ]; then
        echo "removing $stale to make room (rebuilt by the stages that need it)"
        rm -rf "$stale"
    fi
done
report
if [ "$(free_gib "$cache")" -lt "$need" ]; then
    echo "warning: only $(free_gib "$cache") GiB free after emptying the build cache; links may fail for lack of space" >&2
fi
