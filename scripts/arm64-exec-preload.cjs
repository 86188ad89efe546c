// Preloaded (NODE_OPTIONS=--require) into an aarch64 Node run under qemu-user on an x86_64 host
// by scripts/arm64.sh: without binfmt_misc the kernel cannot exec an aarch64 binary, so a child
// that Node starts as `process.execPath` (ava's workers, the examples the specs spawn) is started
// as `qemu-aarch64 <process.execPath> ...` instead. Every child inherits NODE_OPTIONS, so this
// holds at every depth. Test harness only: never part of the package.
'use strict'
const { ChildProcess } = require('node:child_process')

const qemu = process.env.NETLOOP_QEMU_AARCH64
if (qemu && process.arch === 'arm64') {
  const spawn = ChildProcess.prototype.spawn
  ChildProcess.prototype.spawn = function (options) {
    if (options && options.file === process.execPath) {
      options = { ...options, file: qemu, args: [qemu, process.execPath, ...options.args.slice(1)] }
    }
    return spawn.call(this, options)
  }
}
