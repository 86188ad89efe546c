// Preloaded (--require) into a server by benches/node/ws-idle-memory.mjs: on an IPC message
// `measure`, a full collection (the server runs with --expose-gc), then the process's memory
// figures sent back: process.memoryUsage() and the resident set from /proc (KiB).
const { readFileSync } = require('node:fs')

process.on('message', (m) => {
  if (m !== 'measure') return
  for (let i = 0; i < 3; i++) globalThis.gc?.()
  const status = readFileSync('/proc/self/status', 'utf8')
  const kib = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0)
  // malloc's main arena (the [heap] mapping): native allocations of the loop's thread
  let brkKib = 0
  const smaps = readFileSync('/proc/self/smaps', 'utf8')
  const at = smaps.indexOf('[heap]')
  if (at >= 0) brkKib = Number(/Rss:\s+(\d+)/.exec(smaps.slice(at))?.[1] ?? 0)
  const spaces = {}
  for (const sp of require('node:v8').getHeapSpaceStatistics()) {
    spaces[sp.space_name] = { size: sp.space_size, used: sp.space_used_size }
  }
  process.send({ ...process.memoryUsage(), rssAnonKib: kib('RssAnon'), rssFileKib: kib('RssFile'), brkKib, spaces })
})
// The IPC channel must not keep a server alive on its own.
process.channel?.unref()

// `snapshot PATH` (diagnostics): a heap snapshot written to PATH after a collection.
process.on('message', (m) => {
  if (typeof m !== 'string' || !m.startsWith('snapshot ')) return
  globalThis.gc?.()
  require('node:v8').writeHeapSnapshot(m.slice(9))
  process.send({ snapshot: m.slice(9) })
})
