#!/usr/bin/env bash
# The second step of CI (.ci/run calls it after `npm test`): where netloop runs besides this
# machine's Node (docs/release.md, "Node lines" and "linux-arm64-gnu").
#
#   1. the ava suite on the other Node lines (scripts/node-lines.sh);
#   2. linux-arm64-gnu: the cross toolchain (installed if missing), every crate's tests built for
#      aarch64 and run under qemu, the addon (debug profile: it reuses the tests' build; the
#      release profile is `npm run pack:release`'s), the packed tarballs installed as an arm64
#      user would and a program run through them, and the channel/TLS/examples specs on aarch64
#      Node (scripts/arm64.sh).
#
# Each part prints `<what>: N passed, N failed`; the aarch64 crates' `test result:` lines are
# cargo's own. NETLOOP_SKIP_ARM64=1 leaves part 2 out (a machine without apt). Exits non-zero
# if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0
step() { # name, command...
  local name=$1 start
  shift
  start=$(date +%s)
  "$@" || rc=1
  echo "platforms: $name took $(($(date +%s) - start))s"
}

step "node lines" bash scripts/node-lines.sh

if [ "${NETLOOP_SKIP_ARM64:-}" = 1 ]; then
  echo "platforms: linux-arm64-gnu skipped (NETLOOP_SKIP_ARM64=1)"
  exit "$rc"
fi
if ! bash scripts/arm64-toolchain.sh; then
  echo "aarch64 toolchain: 0 passed, 1 failed (could not install it)"
  exit 1
fi

# Cargo's summary lines are counted by .ci/run as they are; this adds them up for the reader.
log=$(mktemp)
step "aarch64 crates' tests" bash -c 'bash scripts/arm64.sh test 2>&1 | tee "$1"; exit "${PIPESTATUS[0]}"' _ "$log"
python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
p = sum(int(m.group(1)) for m in re.finditer(r"test result: \w+\. (\d+) passed", text))
f = sum(int(m.group(1)) for m in re.finditer(r"test result: \w+\. \d+ passed; (\d+) failed", text))
i = sum(int(m.group(1)) for m in re.finditer(r"test result: \w+\. \d+ passed; \d+ failed; (\d+) ignored", text))
print(f"platforms: aarch64 crates (counted above, under qemu): {p} pass, {f} fail, {i} ignored")
PY
rm -f "$log"

step "aarch64 addon (debug profile)" bash scripts/arm64.sh build --dev
step "aarch64 package" bash scripts/arm64.sh package
# On aarch64 Node under qemu the JS suite runs ~10x slower than natively: CI runs one spec of
# each kind (channels, TLS, an example with child processes, loading); `bash scripts/arm64.sh
# specs` (every channel, TLS and examples spec) is run by hand before a release (release.md).
step "aarch64 node specs" bash scripts/arm64.sh specs __test__/channel-lifecycle.spec.ts __test__/tls.spec.ts \
  __test__/examples-echo-proxy.spec.ts __test__/binding.spec.ts
exit "$rc"
