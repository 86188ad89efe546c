// node:net echo server for the side-by-side harness: `node net-echo-server.mjs PORT`.
import net from 'node:net'

const port = Number(process.argv[2] ?? 8008)
net
  .createServer({ noDelay: true }, (s) => {
    s.on('data', (d) => s.write(d))
    s.on('error', () => {})
  })
  .listen(port, '127.0.0.1', () => console.log('ready'))
