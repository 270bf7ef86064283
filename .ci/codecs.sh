#!/usr/bin/env bash
# The optional compressors built from vendored C/C++ sources (cargo features
# blosc2, zfp, sz3; spec/pipeline.md §4.5-§4.7): their unit tests, the CLI
# flags, and the conformance suite against tensogram 0.24.0 with the same
# codecs (tools/codec-conformance: identical message bytes, values both
# ways, range decoding). bindgen needs libclang (installed by .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
# In CI, the debug stage's feature set (.ci/run), whose build these share.
features=${TGM_CI_FEATURES:-tgm-cli/blosc2,tgm-cli/zfp,tgm-cli/sz3}

echo "--- library: codec, frame parser and pipeline-spec unit tests"
cargo test -q --features "$features" --lib -- \
    pipeline:: pipeline_spec:: sz3_child::
echo "--- library: sz3 through its helper process (crashes, time, memory ceiling, threads)"
cargo test -q --features "$features" --test sz3 --test sz3_child
echo "--- CLI: --compression blosc2|zfp|sz3 and their flags"
cargo test -q --features "$features" --test codecs
echo "--- conformance with the reference (tools/codec-conformance)"
cargo test -q -p codec-conformance
