// The pure parts of benches/node/instructions.mjs (no I/O): a callgrind profile's self cost
// summed by object file and by function, and JIT code addresses named from V8's perf map.
// Tested by __test__/bench-harness.spec.ts.
//
// The profile is callgrind's text format (valgrind's docs, "Callgrind Format Specification"), as
// written with `--dump-instr=no` (positions are source lines) and one event (Ir):
//   ob=(3) /path/lib.so        object, file and function names are compressed: `(id) name` the
//   fl=(7) src/x.rs            first time, `(id)` after; fi=/fe= switch the file for inlined code
//   fn=(12) name
//   15 120                     a cost line: position (a number, or +n / -n / * relative to the
//   +2 40                      last one) and the instructions there: self cost of `fn`
//   cob=(4) ... cfn=(13) ...   a call from `fn` to `cfn`;
//   calls=100 20               `calls=` then one cost line: the call's inclusive cost, which is
//   16 900                     the callee's (counted in its own `fn=` block), so it is skipped.
// V8 (`node --perf-basic-prof`) writes /tmp/perf-PID.map: `START SIZE name` per code object, in
// hex; callgrind names JIT code `0xADDRESS` in object `???`.

/** A name as `(id) name` or `(id)`, remembered in `names` by id. */
function compressed(rest, names) {
  const m = /^\((\d+)\)(?: (.*))?$/.exec(rest)
  if (!m) return rest
  if (m[2] !== undefined) names.set(m[1], m[2])
  return names.get(m[1]) ?? `(${m[1]})`
}

/**
 * The self cost (the first event, Ir) of a callgrind profile: the total, and the sums by
 * object and by function (`object\tfunction` keys), each a Map sorted by cost, highest first.
 */
export function parseCallgrind(text) {
  const objects = new Map()
  const functions = new Map()
  const byObject = new Map()
  const byFunction = new Map()
  let ob = '???'
  let fn = '???'
  let skipNext = false
  let total = 0
  for (const line of text.split('\n')) {
    if (line === '') continue
    const c = line.charCodeAt(0)
    const isCost = (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 42 // 0-9 + - *
    if (isCost) {
      if (skipNext) {
        skipNext = false
        continue
      }
      const cost = Number(line.split(' ', 3)[1])
      if (!Number.isFinite(cost)) continue
      total += cost
      byObject.set(ob, (byObject.get(ob) ?? 0) + cost)
      const key = `${ob}\t${fn}`
      byFunction.set(key, (byFunction.get(key) ?? 0) + cost)
      continue
    }
    const eq = line.indexOf('=')
    if (eq < 0) continue
    const key = line.slice(0, eq)
    const rest = line.slice(eq + 1)
    if (key === 'ob') ob = compressed(rest, objects)
    else if (key === 'fn') fn = compressed(rest, functions)
    else if (key === 'cob') compressed(rest, objects)
    else if (key === 'cfn') compressed(rest, functions)
    else if (key === 'calls') skipNext = true
  }
  const sorted = (m) => new Map([...m].sort((a, b) => b[1] - a[1]))
  return { total, byObject: sorted(byObject), byFunction: sorted(byFunction) }
}

/** V8's perf map (`START SIZE name` in hex), as a lookup: address → the code object's name. */
export function perfMap(text) {
  const entries = []
  for (const line of text.split('\n')) {
    const m = /^([0-9a-fA-F]+) ([0-9a-fA-F]+) (.*)$/.exec(line)
    if (m) entries.push([parseInt(m[1], 16), parseInt(m[2], 16), m[3]])
  }
  entries.sort((a, b) => a[0] - b[0])
  return (address) => {
    let lo = 0
    let hi = entries.length - 1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      const [start, size, name] = entries[mid]
      if (address < start) hi = mid - 1
      else if (address >= start + size) lo = mid + 1
      else return name
    }
    return undefined
  }
}

/** What an object file is, for the report: the addon, JIT code, node, libc, or its base name. */
export function objectKind(object, addonFile) {
  if (object === '???') return 'JIT code'
  if (addonFile && object === addonFile) return 'addon'
  if (object.endsWith('.node')) return 'addon'
  const base = object.slice(object.lastIndexOf('/') + 1)
  if (base === 'node') return 'node'
  if (base.startsWith('libc.so')) return 'libc'
  return base
}

/**
 * Instructions per request of a parsed profile: by kind of object, and the `top` functions
 * (JIT code named through `jitName`, the same code object's addresses summed).
 */
export function perRequest(parsed, requests, { addonFile, jitName, top = 25 } = {}) {
  const kinds = new Map()
  for (const [object, n] of parsed.byObject) {
    const k = objectKind(object, addonFile)
    kinds.set(k, (kinds.get(k) ?? 0) + n)
  }
  const fns = new Map()
  for (const [key, n] of parsed.byFunction) {
    const [object, fn] = key.split('\t')
    const kind = objectKind(object, addonFile)
    let name = fn
    if (kind === 'JIT code' && jitName) {
      const m = /^0x([0-9a-fA-F]+)/.exec(fn)
      name = (m && jitName(parseInt(m[1], 16))) ?? 'JIT code (unnamed)'
    }
    const k = `${kind}\t${name}`
    fns.set(k, (fns.get(k) ?? 0) + n)
  }
  const per = (n) => n / requests
  return {
    total: per(parsed.total),
    byKind: [...kinds].sort((a, b) => b[1] - a[1]).map(([kind, n]) => ({ kind, perRequest: per(n), share: n / parsed.total })),
    top: [...fns]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, n]) => {
        const [kind, name] = k.split('\t')
        return { kind, name, perRequest: per(n) }
      }),
  }
}
