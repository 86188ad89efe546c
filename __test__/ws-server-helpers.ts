// Helpers of the WebSocketServer specs (ws-server.spec.ts, ws-server-upgrade.spec.ts): a server
// on a free port, the `ws` package's client, and a raw client after a valid handshake.
import * as crypto from 'node:crypto'
import { once } from 'node:events'
import * as net from 'node:net'
import WsClient from 'ws'
import { EventLoop, type WebSocket, WebSocketServer, type WebSocketRequest } from '../index'

export const within = <T>(ms: number, p: Promise<T>, what: string): Promise<T> =>
  Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timeout: ${what}`)), ms).unref())])

export type Teardown = { teardown(fn: () => unknown): void }

/** A WebSocketServer on a free port of 127.0.0.1, on a loop of the test's; closed at teardown. */
export async function server(t: Teardown, options: Partial<ConstructorParameters<typeof WebSocketServer>[0]> = {}): Promise<{ wss: WebSocketServer; port: number }> {
  const loop = new EventLoop()
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', group: loop, ...options })
  t.teardown(async () => {
    for (const c of wss.clients ?? []) c.terminate()
    await new Promise<void>((r) => wss.close(() => r()))
    await loop.shutdownGracefully(0, 1000)
  })
  await within(10_000, once(wss, 'listening'), 'listening')
  return { wss, port: wss.address()!.port }
}

export function client(port: number, path = '/', protocols?: string[]): Promise<WsClient> {
  return within(10_000, new Promise((resolve, reject) => {
    const w = new WsClient(`ws://127.0.0.1:${port}${path}`, protocols)
    w.once('open', () => resolve(w))
    w.once('error', reject)
  }), 'open')
}

export const connection = (wss: WebSocketServer): Promise<[WebSocket, WebSocketRequest]> => within(10_000, once(wss, 'connection') as Promise<[WebSocket, WebSocketRequest]>, 'connection')
export const closeOf = (ws: { once(e: 'close', l: (code: number, reason: Buffer) => void): unknown }): Promise<[number, string]> =>
  within(10_000, new Promise((resolve) => ws.once('close', (code, reason) => resolve([code, String(reason)]))), 'close')

/** A raw client after a valid handshake: the socket and the bytes read after the 101. */
export async function rawClient(port: number): Promise<{ s: net.Socket; read: () => Buffer; ended: Promise<void> }> {
  const s = net.connect(port, '127.0.0.1')
  let buf = Buffer.alloc(0)
  let upgraded = false
  const ended = new Promise<void>((r) => s.on('close', () => r()))
  s.on('error', () => {})
  await within(10_000, new Promise<void>((resolve) => {
    s.on('connect', () => s.write(`GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`))
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      if (upgraded) return
      const at = buf.indexOf('\r\n\r\n')
      if (at < 0) return
      upgraded = true
      buf = buf.subarray(at + 4)
      resolve()
    })
  }), 'raw handshake')
  return { s, read: () => buf, ended }
}
