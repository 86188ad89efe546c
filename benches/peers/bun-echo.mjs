// Bun's JS echo over TCP (Bun.listen), a peer of benches/node/peers.mjs: issue 38's target is the
// netloop TS echo at or below Bun's JS echo in the same run. Run with bun; prints its port.
const server = Bun.listen({
  hostname: '127.0.0.1',
  port: 0,
  socket: {
    data(socket, data) {
      // A short write keeps the rest (a copy: the read buffer is not ours after the callback),
      // and later reads queue behind it, in order, until the socket drains (bulk, stream).
      const q = socket.data
      if (q?.length) {
        q.push(Buffer.from(data))
        return
      }
      const n = socket.write(data)
      if (n < data.byteLength) (socket.data ??= []).push(Buffer.from(data.subarray(n)))
    },
    drain(socket) {
      const q = socket.data
      while (q?.length) {
        const b = q[0]
        const n = socket.write(b)
        if (n < b.byteLength) {
          q[0] = b.subarray(n)
          return
        }
        q.shift()
      }
    },
    error() {},
  },
})
process.stdout.write(`${server.port}\n`)
process.on('SIGTERM', () => process.exit(0))
