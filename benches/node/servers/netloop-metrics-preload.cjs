// Preload (`node -r`) for running an unmodified netloop example under the harness: remembers
// every EventLoop that calls ref() (a server loop does) and, on SIGTERM, prints their metrics
// as `{"metrics":{...}}` on stderr before the example's own SIGTERM handler shuts down.
const { EventLoop } = require('../../../index.js')

const loops = new Set()
const ref = EventLoop.prototype.ref
EventLoop.prototype.ref = function (...args) {
  loops.add(this)
  return ref.apply(this, args)
}
process.prependOnceListener('SIGTERM', () => {
  for (const loop of loops) process.stderr.write(`${JSON.stringify({ metrics: loop.metrics() })}\n`)
})
