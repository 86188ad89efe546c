// Libraries that take a socket-like stream, over channel.toDuplex(): node:tls's TLSSocket and a
// `ws` WebSocket server upgrade.
import test from 'ava'
import { once } from 'node:events'
import * as http from 'node:http'
import * as tls from 'node:tls'
import WebSocket, { WebSocketServer } from 'ws'
import { checkWsEcho, netloopServer } from './duplex-helpers'
import { pem } from './tls-helpers'

test('tls.TLSSocket over a netloop channel answers a node:tls client', async (t) => {
  const port = await netloopServer(t, (ch) => {
    const secure = new tls.TLSSocket(ch.toDuplex(), { isServer: true, cert: pem('server.pem'), key: pem('server.key'), ALPNProtocols: ['shout/1'] })
    secure.on('error', () => undefined)
    secure.on('data', (d: Buffer) => secure.write(`${d.toString().toUpperCase()} over ${secure.getProtocol()}`))
  })
  const client = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: pem('ca.pem'), ALPNProtocols: ['shout/1'] })
  t.teardown(() => client.destroy())
  await once(client, 'secureConnect')
  t.true(client.authorized)
  t.is(client.alpnProtocol, 'shout/1')
  client.write('hello')
  const [reply] = await once(client, 'data')
  t.is(reply.toString(), 'HELLO over TLSv1.3')
  // A second exchange on the same session, then a clean close from the client.
  client.write('again')
  t.is((await once(client, 'data'))[0].toString(), 'AGAIN over TLSv1.3')
  const closed = once(client, 'close')
  client.end()
  await closed
  t.pass()
})

test('ws: a WebSocket server upgrade over toDuplex() exchanges messages with a ws client', async (t) => {
  const wss = new WebSocketServer({ noServer: true })
  const server = http.createServer((_req, res) => res.end('plain http\n'))
  server.on('upgrade', (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (data, isBinary) => ws.send(isBinary ? data : `echo: ${data.toString()}`, { binary: isBinary }))
    })
  })
  t.teardown(() => wss.close())
  const port = await netloopServer(t, (ch) => void server.emit('connection', ch.toDuplex()))
  const ws = new WebSocket(`ws://127.0.0.1:${port}/chat`)
  t.teardown(() => ws.terminate())
  await once(ws, 'open')
  await checkWsEcho(t, ws)
})
