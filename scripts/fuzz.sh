#!/usr/bin/env bash
# Bounded fuzzing of the native decoders (see docs/fuzzing.md): netloop-codec's frame decoders,
# netloop-resp's RESP decoder, netloop-http's request and response decoders and netloop-ws's
# frame decoder and permessage-deflate inflater.
#
# Builds the cargo-fuzz targets of crates/{codec,resp,http,tls,ws}/fuzz into one target directory
# (target/fuzz: the netloop crates they share are instrumented and compiled once, not once per
# fuzz workspace) and runs them FUZZ_JOBS at a time (default: the number of cores), each on one
# core for FUZZ_SECONDS seconds (default 20), starting from the committed seeds plus the
# local, ignored corpus of earlier runs. A target fails on a crash (a panic: decoder bug,
# disagreement with the reference model, memory bound exceeded) or on an input slower than
# 10 s; the input is saved under crates/codec/fuzz/artifacts/ and the command that replays
# it is printed. The last line is a cargo-style `test result:` line counting the targets.
#
# On a fresh machine cargo-fuzz is installed when missing; without a nightly toolchain the
# run is skipped with a message (exit 0): libFuzzer instrumentation needs nightly.
#
# Usage: scripts/fuzz.sh [dir:target...]      (default: every target, e.g. crates/codec/fuzz:line)
#        FUZZ_SECONDS=600 FUZZ_LOG_DIR=/tmp/fuzz-logs scripts/fuzz.sh line   (keeps libFuzzer's logs)
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-20}
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
target_dir=${FUZZ_TARGET_DIR:-$PWD/target/fuzz}
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  targets=(crates/codec/fuzz:line crates/codec/fuzz:delimiter crates/codec/fuzz:fixed_length
    crates/codec/fuzz:length_field crates/codec/fuzz:prepender_round_trip crates/codec/fuzz:haproxy
    crates/resp/fuzz:split_decode crates/http/fuzz:request_decoder crates/http/fuzz:response_decoder
    crates/tls/fuzz:server_handler crates/ws/fuzz:frame_decoder crates/ws/fuzz:inflater)
fi
# No sanitizer: crates/codec has no unsafe code, and without ASan a target runs about 2.5
# times as many inputs in the same time. `-s address` still works by hand.
sanitizer=none
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: skipped: no nightly Rust toolchain (cargo-fuzz needs one; rustup toolchain install nightly)"
  exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz: cargo-fuzz missing, installing it (cargo install cargo-fuzz --locked)"
  if ! cargo install cargo-fuzz --locked >"$log" 2>&1; then
    tail -n 20 "$log"
    echo "fuzz: could not install cargo-fuzz"
    echo "test result: FAILED. 0 passed; ${#targets[@]} failed; fuzz targets not built"
    exit 1
  fi
fi

dirs=$(printf '%s\n' "${targets[@]}" | cut -d: -f1 | sort -u)
for dir in $dirs; do
  echo "fuzz: building $dir ($(cargo +nightly fuzz --version), sanitizer $sanitizer)"
  if ! (cd "$dir" && cargo +nightly fuzz build -s "$sanitizer" --target-dir "$target_dir") >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "fuzz: build of $dir failed"
    echo "test result: FAILED. 0 passed; ${#targets[@]} failed; fuzz targets not built"
    exit 1
  fi
done

# One target's run; its report goes to $out_dir/<n>.report (printed in order below) and its
# verdict to $out_dir/<n>.rc.
out_dir=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$out_dir"' EXIT
run_target() { # index, dir:target
  local n=$1 entry=$2 dir target corpora tlog rc status artifact
  dir=${entry%%:*}
  target=${entry#*:}
  corpora=("corpus/$target")
  mkdir -p "$dir/corpus/$target"
  [ -d "$dir/seeds/$target" ] && corpora+=("seeds/$target")
  tlog="$out_dir/$n.log"
  (cd "$dir" && cargo +nightly fuzz run -s "$sanitizer" --target-dir "$target_dir" "$target" "${corpora[@]}" -- \
    -max_total_time="$seconds" -timeout=10 -workers=1 -print_final_stats=1) >"$tlog" 2>&1
  rc=$?
  [ -n "${FUZZ_LOG_DIR:-}" ] && mkdir -p "$FUZZ_LOG_DIR" && cp "$tlog" "$FUZZ_LOG_DIR/$target.log"
  # libFuzzer's last status line: "#runs DONE cov: N ft: N corp: N/size ... exec/s: N".
  status=$(grep -E '^#[0-9]+' "$tlog" | tail -n 1)
  {
    if [ "$rc" -eq 0 ]; then
      echo "fuzz $target: ok, ${seconds}s: $status"
    else
      echo "fuzz $target: FAILED (exit $rc) after: $status"
      grep -E "panicked at|assertion|^  left|^ right|grew the heap|stay buffered|capacity|ERROR:|SUMMARY" "$tlog" | head -n 20
      artifact=$(grep -oE "artifacts/$target/[a-z]+-[0-9a-f]+" "$tlog" | tail -n 1)
      if [ -n "$artifact" ]; then
        echo "fuzz $target: input saved as $dir/$artifact; replay with:"
        echo "  (cd $dir && cargo +nightly fuzz run -s $sanitizer --target-dir $target_dir $target $artifact)"
      else
        tail -n 30 "$tlog"
      fi
    fi
  } >"$out_dir/$n.report"
  echo "$rc" >"$out_dir/$n.rc"
}

i=0
for entry in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  run_target "$i" "$entry" &
  i=$((i + 1))
done
wait

passed=0
failed=0
for ((n = 0; n < i; n++)); do
  cat "$out_dir/$n.report"
  if [ "$(cat "$out_dir/$n.rc" 2>/dev/null)" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done

verdict=ok
[ "$failed" -gt 0 ] && verdict=FAILED
echo "test result: $verdict. $passed passed; $failed failed; fuzz targets, ${seconds}s each"
[ "$failed" -eq 0 ]
