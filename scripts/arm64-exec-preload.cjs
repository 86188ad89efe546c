// Preloaded (NODE_OPTIONS=--require) into an aarch64 Node run under qemu-user on an x86_64 host
// by scripts/arm64.sh: without binfmt_misc the kernel cannot exec an aarch64 binary, so a child
// that Node starts as `process.execPath` (ava's workers, the examples the specs spawn, a spec's
// own child processes) is started as `qemu-aarch64 <process.execPath> ...` instead. Every child
// inherits NODE_OPTIONS, so this holds at every depth. Test harness only: never packaged.
'use strict'
const childProcess = require('node:child_process')

const qemu = process.env.NETLOOP_QEMU_AARCH64
if (qemu && process.arch === 'arm64') {
  // Asynchronous children (spawn, fork, execFile, exec) all pass through ChildProcess#spawn.
  const spawn = childProcess.ChildProcess.prototype.spawn
  childProcess.ChildProcess.prototype.spawn = function (options) {
    if (options && options.file === process.execPath) {
      options = { ...options, file: qemu, args: [qemu, process.execPath, ...options.args.slice(1)] }
    }
    return spawn.call(this, options)
  }
  // Synchronous ones do not: the exported functions are wrapped (then synced to ESM importers).
  for (const name of ['spawnSync', 'execFileSync']) {
    const original = childProcess[name]
    childProcess[name] = function (file, args, ...rest) {
      if (file === process.execPath) {
        if (Array.isArray(args)) return original.call(this, qemu, [process.execPath, ...args], ...rest)
        return original.call(this, qemu, [process.execPath], ...(args === undefined ? rest : [args, ...rest]))
      }
      return original.call(this, file, args, ...rest)
    }
  }
  require('node:module').syncBuiltinESMExports()
}
