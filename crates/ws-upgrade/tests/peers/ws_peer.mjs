// A real peer for crates/ws-upgrade/tests/it/peers.rs: the `ws` package's client, plus raw
// sockets for the frames no library sends. Prints one JSON object: what it observed per case
// (the Rust test compares it with what RFC 6455 asks). Every wait is bounded.
// Usage: node ws_peer.mjs HOST:PORT
import net from 'node:net'
import crypto from 'node:crypto'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const WebSocket = require('ws')
const addr = process.argv[2]
const [host, port] = [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))]
const url = `ws://${addr}/echo`

const within = (ms, promise, what) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`timeout: ${what}`)), ms))])

function open(protocols) {
  return within(5000, new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols)
    ws.once('open', () => resolve(ws))
    ws.once('error', reject)
  }), 'open')
}

function nextMessage(ws) {
  return within(5000, new Promise((resolve) => ws.once('message', (data, isBinary) => resolve({ data, isBinary }))), 'message')
}

async function echoCases(out) {
  const ws = await open()
  ws.send('héllo €')
  let m = await nextMessage(ws)
  out.text = { data: m.data.toString('utf8'), isBinary: m.isBinary }
  ws.send(Buffer.from([0, 1, 2, 255]))
  m = await nextMessage(ws)
  out.binary = { hex: m.data.toString('hex'), isBinary: m.isBinary }
  const big = crypto.randomBytes(200_000)
  ws.send(big)
  m = await nextMessage(ws)
  out.large = { length: m.data.length, same: Buffer.compare(m.data, big) === 0 }
  ws.send('frag', { fin: false })
  ws.send('men', { fin: false })
  ws.send('ted', { fin: true })
  m = await nextMessage(ws)
  out.fragmented = { data: m.data.toString('utf8'), isBinary: m.isBinary }
  const pong = within(5000, new Promise((resolve) => ws.once('pong', (d) => resolve(d.toString()))), 'pong')
  ws.ping('p1')
  out.ping = { pong: await pong }
  const closed = within(5000, new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }))), 'close')
  ws.close(4001, 'bye')
  out.close = await closed
}

/** Opens a raw socket with a valid handshake (or `version`), sends `frame`, records the
 * status, the first frame the server sends (opcode, close code) and whether it ends. */
function raw(frame, { version = '13', end = false } = {}) {
  return within(5000, new Promise((resolve, reject) => {
    const key = crypto.randomBytes(16).toString('base64')
    const sock = net.connect(port, host)
    let buf = Buffer.alloc(0)
    let status = null
    let accepted = false
    sock.on('connect', () => {
      sock.write(`GET /echo HTTP/1.1\r\nHost: ${addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: ${version}\r\n\r\n`)
    })
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      if (status === null) {
        const at = buf.indexOf('\r\n\r\n')
        if (at < 0) return
        const head = buf.subarray(0, at).toString()
        status = Number(head.split(' ')[1])
        const expected = crypto.createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64')
        accepted = head.includes(`Sec-WebSocket-Accept: ${expected}`)
        buf = buf.subarray(at + 4)
        if (status === 101 && frame) {
          sock.write(frame)
          if (end) sock.end()
        } else {
          sock.end()
        }
      }
    })
    sock.on('error', () => {})
    sock.on('close', () => {
      const result = { status, accepted, ended: true }
      if (status === 101 && buf.length >= 2) {
        result.opcode = buf[0] & 0x0f
        if (result.opcode === 8 && buf.length >= 4) result.closeCode = buf.readUInt16BE(2)
      }
      resolve(result)
    })
    setTimeout(() => reject(new Error('no close')), 4500).unref()
  }), 'raw')
}

/** A masked client frame from raw parts. */
function masked(b0, payload, lengthBytes) {
  const key = Buffer.from([0x37, 0xfa, 0x21, 0x3d])
  const body = Buffer.from(payload)
  for (let i = 0; i < body.length; i++) body[i] ^= key[i % 4]
  let len
  if (lengthBytes) len = lengthBytes
  else if (body.length < 126) len = Buffer.from([0x80 | body.length])
  else { len = Buffer.alloc(3); len[0] = 0x80 | 126; len.writeUInt16BE(body.length, 1) }
  return Buffer.concat([Buffer.from([b0]), len, key, body])
}

const out = {}
try {
  await echoCases(out)
  out.unmasked = await raw(Buffer.from([0x81, 0x02, 0x68, 0x69]))
  out.badUtf8 = await raw(masked(0x81, [0x68, 0xce, 0xba, 0xff]))
  out.badUtf8Fragments = await raw(Buffer.concat([masked(0x01, [0xce, 0xba, 0xe1, 0xbd, 0xb9, 0xf4]), masked(0x80, [0x90, 0x80, 0x80])]))
  out.reservedOpcode = await raw(masked(0x83, [1, 2, 3]))
  out.reservedBits = await raw(masked(0xc1, [0x68]))
  out.longPing = await raw(masked(0x89, Buffer.alloc(126, 1)))
  out.fragmentedPing = await raw(masked(0x09, [1]))
  const huge = Buffer.alloc(9); huge[0] = 0x80 | 127; huge.writeBigUInt64BE(1n << 40n, 1)
  out.tooBig = await raw(masked(0x82, [], huge))
  const short = Buffer.from([0x80 | 126, 0x01, 0x00])
  out.shortPayload = await raw(masked(0x82, Buffer.alloc(10, 7), short), { end: true })
  out.version8 = await raw(null, { version: '8' })
} catch (e) {
  out.error = String(e && e.stack || e)
}
console.log(JSON.stringify(out))
process.exit(0)
