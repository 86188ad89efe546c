// The raw client of the conformance corpus: node:net, its own frames (any header bits,
// opcodes and declared lengths, masked or not, chopped into several socket writes), the
// server's frames read back into events (messages, pongs), its close code, and who ended
// TCP. One connection per case; verdict.ts judges what it saw.
//
// Ground rules: one case runs at a time on a connection; all state is owned by `Run` and
// touched only from node's event loop.
import * as crypto from 'node:crypto'
import * as net from 'node:net'
import { type Agreement, DeflateSession, parseAgreement } from './deflate'
import type { Case, Event, FrameSpec, RoundTrips, Step } from './types'

/** What one case's connection saw. */
export interface Seen {
  handshake: string | undefined
  events: Event[]
  /** The client sent its close frame before the server's arrived. */
  closedByMe: boolean
  /** A close frame went each way. */
  handshakeDone: boolean
  /** The code in the server's close frame (undefined: none sent, or sent without a code). */
  remoteCode: number | undefined
  serverSentClose: boolean
  /** The client had to destroy TCP (the server left it open). */
  droppedByMe: boolean
  /** The server broke the protocol towards the client (masked frame, bad RSV1, bad deflate ...). */
  serverFault: string | undefined
  agreement: Agreement | undefined
}

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'

/** The bytes of one client frame. */
export function encodeFrame(f: FrameSpec): Buffer {
  const payload = typeof f.payload === 'string' ? Buffer.from(f.payload) : (f.payload ?? Buffer.alloc(0))
  const len = f.len ?? payload.length
  const mask = f.mask ?? true
  const head: number[] = [((f.fin ?? true) ? 0x80 : 0) | ((f.rsv ?? 0) << 4) | (f.opcode & 0x0f)]
  const m = mask ? 0x80 : 0
  if (len < 126) head.push(m | len)
  else if (len < 65536) head.push(m | 126, len >> 8, len & 0xff)
  else {
    head.push(m | 127)
    const b = Buffer.alloc(8)
    b.writeBigUInt64BE(BigInt(len))
    head.push(...b)
  }
  if (!mask) return Buffer.concat([Buffer.from(head), payload])
  const key = crypto.randomBytes(4)
  const body = Buffer.allocUnsafe(payload.length)
  for (let i = 0; i < payload.length; i++) body[i] = payload[i] ^ key[i & 3]
  return Buffer.concat([Buffer.from(head), key, body])
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve))
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Runs `c` against the server on 127.0.0.1:`port`. */
export async function runCase(port: number, c: Case): Promise<Seen> {
  const run = new Run(port, c)
  try {
    await run.play()
  } finally {
    run.dispose()
  }
  return run.seen
}

class Run {
  readonly seen: Seen = {
    handshake: undefined,
    events: [],
    closedByMe: false,
    handshakeDone: false,
    remoteCode: undefined,
    serverSentClose: false,
    droppedByMe: false,
    serverFault: undefined,
    agreement: undefined,
  }
  private readonly socket: net.Socket
  private buf: Buffer = Buffer.alloc(0)
  private upgraded = false
  private tcpClosed = false
  private sentClose = false
  private deflate: DeflateSession | undefined
  /** Fragments of the server's message being received. */
  private parts: Buffer[] = []
  private partOpcode = 0
  private partCompressed = false
  /** Inbound processing is serialized (inflation is asynchronous). */
  private inbound: Promise<void> = Promise.resolve()
  private wake: () => void = () => {}
  private readonly opened: Promise<void>

  constructor(port: number, private readonly c: Case) {
    this.socket = net.connect(port, '127.0.0.1')
    this.socket.setNoDelay(true)
    this.socket.on('error', () => {})
    this.socket.on('close', () => {
      this.tcpClosed = true
      this.poke()
    })
    const key = crypto.randomBytes(16).toString('base64')
    this.opened = new Promise((resolve) => {
      this.socket.on('connect', () => {
        const ext = c.offer ? `Sec-WebSocket-Extensions: ${c.offer}\r\n` : ''
        this.socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n${ext}\r\n`)
      })
      this.socket.on('data', (d: Buffer) => {
        this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d
        if (!this.upgraded) {
          const at = this.buf.indexOf('\r\n\r\n')
          if (at < 0) return
          const head = this.buf.subarray(0, at).toString('latin1')
          this.buf = this.buf.subarray(at + 4)
          const accept = crypto.createHash('sha1').update(key + GUID).digest('base64')
          const fields = new Map(head.split('\r\n').slice(1).map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
          if (!/^HTTP\/1\.1 101/.test(head) || fields.get('sec-websocket-accept') !== accept) {
            this.seen.handshake = `handshake refused: ${head.split('\r\n')[0]}`
          } else {
            const a = parseAgreement(fields.get('sec-websocket-extensions'))
            if (typeof a === 'string') this.seen.handshake = a
            else if (a && !c.offer) this.seen.handshake = 'an extension agreed without an offer'
            else if (a) {
              this.seen.agreement = a
              this.deflate = new DeflateSession(a)
            }
          }
          this.upgraded = true
          resolve()
        }
        this.inbound = this.inbound.then(() => this.parse())
      })
      this.socket.on('close', () => resolve())
    })
  }

  dispose(): void {
    this.deflate?.dispose()
    if (!this.tcpClosed) this.socket.destroy()
  }

  private poke(): void {
    const w = this.wake
    this.wake = () => {}
    w()
  }

  /** Resolves when `cond` holds, TCP closed, or after `ms`; true if `cond` held. */
  private async until(cond: () => boolean, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms
    while (!cond()) {
      if (this.tcpClosed) return cond()
      const left = deadline - Date.now()
      if (left <= 0) return false
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
    return true
  }

  /** The server started to close (a close frame or the end of TCP). */
  private get serverClosing(): boolean {
    return this.seen.serverSentClose || this.tcpClosed
  }

  async play(): Promise<void> {
    await this.opened
    if (!this.upgraded || this.seen.handshake) {
      this.seen.handshake ??= 'no handshake answer'
      return
    }
    for (const step of this.c.steps) {
      if (this.serverClosing) break
      const go = await this.step(step)
      if (!go) break
    }
    const wait = this.c.waitMs ?? 3000
    const { ok } = this.c
    if (this.c.close.byClient && !this.c.close.suppressClose) {
      // Autobahn closes once the events match; else it waits and drops the connection.
      const matched = await this.until(() => this.serverClosing || (ok !== undefined && sameEvents(this.seen.events, ok)), wait)
      if (matched && !this.serverClosing && !this.sentClose) this.sendClose(1000)
      // Events that never matched: the case has failed already, no need to wait it out again.
      if (!matched) await this.until(() => this.tcpClosed, 200)
      else await this.until(() => this.tcpClosed, wait)
    } else {
      // The server must end TCP (after the close handshake, or when it fails the connection).
      await this.until(() => this.tcpClosed, wait)
    }
    await this.inbound
    if (!this.tcpClosed) {
      this.seen.droppedByMe = true
      this.socket.destroy()
    }
  }

  private write(bytes: Buffer): void {
    if (!this.tcpClosed) this.socket.write(bytes)
  }

  private async writeChopped(bytes: Buffer, chop: number | undefined): Promise<void> {
    if (!chop) return this.write(bytes)
    for (let at = 0; at < bytes.length && !this.tcpClosed; at += chop) {
      this.write(bytes.subarray(at, at + chop))
      await tick()
    }
  }

  private sendClose(code: number | undefined, reason: Buffer | string = ''): void {
    let payload = Buffer.from(reason)
    if (code !== undefined) {
      payload = Buffer.alloc(2)
      payload.writeUInt16BE(code)
      payload = Buffer.concat([payload, Buffer.from(reason)])
    }
    if (!this.seen.serverSentClose && !this.sentClose) this.seen.closedByMe = true
    this.sentClose = true
    this.write(encodeFrame({ opcode: 8, payload }))
  }

  /** One step; false to skip the rest. */
  private async step(s: Step): Promise<boolean> {
    if ('frame' in s) {
      const bytes = encodeFrame(s.frame)
      await this.writeChopped(bytes, s.frame.chop)
      // Autobahn's `sync`: the frame leaves alone, so the server reads it apart from the next.
      if (s.frame.sync) await delay(2)
    } else if ('raw' in s) {
      await this.writeChopped(s.raw, s.chop)
    } else if ('message' in s) {
      await this.sendMessage(Buffer.from(s.message), s.binary ?? typeof s.message !== 'string', s.fragment ?? 0, s.compress ?? false, s.chop)
    } else if ('awaitEvents' in s) {
      await this.until(() => this.seen.events.length >= s.awaitEvents, 5000)
    } else if ('probe' in s) {
      await this.until(() => this.serverClosing, s.ms)
      if (this.serverClosing) return false
      this.seen.events.push(['timeout', s.probe])
    } else if ('close' in s) {
      this.sendClose(s.close, s.reason)
    } else if ('roundTrips' in s) {
      return this.roundTrips(s.roundTrips)
    }
    return true
  }

  private async sendMessage(m: Buffer, binary: boolean, fragment: number, compress: boolean, chop?: number): Promise<void> {
    const deflated = compress && this.deflate !== undefined
    const payload = deflated ? await this.deflate!.compress(m) : m
    const size = fragment > 0 ? fragment : Math.max(payload.length, 1)
    const frames: Buffer[] = []
    for (let at = 0, first = true; first || at < payload.length; at += size, first = false) {
      const last = at + size >= payload.length
      frames.push(encodeFrame({ opcode: first ? (binary ? 2 : 1) : 0, fin: last, rsv: first && deflated ? 4 : 0, payload: payload.subarray(at, at + size) }))
    }
    await this.writeChopped(Buffer.concat(frames), chop)
  }

  /** Sends messages one at a time, each after the previous echo; false (and a note) on a wrong echo. */
  private async roundTrips(r: RoundTrips): Promise<boolean> {
    for (let i = 0; i < r.count; i++) {
      const m = r.message(i)
      const before = this.seen.events.length
      await this.sendMessage(m, r.binary, r.fragment ?? 0, r.compress ?? false)
      if (!(await this.until(() => this.seen.events.length > before, 10_000))) {
        this.seen.serverFault ??= `round trip ${i + 1}/${r.count}: no echo`
        return false
      }
      const got = this.seen.events[before]
      if (got[0] !== 'message' || got[2] !== r.binary || !got[1].equals(m)) {
        this.seen.serverFault ??= `round trip ${i + 1}/${r.count}: the echo differs (${describe(got)}, sent ${m.length} bytes)`
        return false
      }
    }
    // The messages were checked one by one; keep the events short for the verdict.
    this.seen.events = []
    return true
  }

  /** Reads the server's frames from `buf`. */
  private async parse(): Promise<void> {
    for (;;) {
      const b = this.buf
      if (b.length < 2 || this.seen.serverFault) return
      const fin = (b[0] & 0x80) !== 0
      const rsv = (b[0] >> 4) & 7
      const opcode = b[0] & 0x0f
      if (b[1] & 0x80) return this.fault('the server masked a frame')
      let len = b[1] & 0x7f
      let at = 2
      if (len === 126) {
        if (b.length < 4) return
        len = b.readUInt16BE(2)
        at = 4
      } else if (len === 127) {
        if (b.length < 10) return
        len = Number(b.readBigUInt64BE(2))
        at = 10
      }
      if (b.length < at + len) return
      const payload = b.subarray(at, at + len)
      this.buf = b.subarray(at + len)
      await this.frame(fin, rsv, opcode, payload)
      this.poke()
    }
  }

  private fault(what: string): void {
    this.seen.serverFault ??= what
    this.buf = Buffer.alloc(0)
  }

  private async frame(fin: boolean, rsv: number, opcode: number, payload: Buffer): Promise<void> {
    const rsv1Allowed = this.deflate !== undefined && (opcode === 1 || opcode === 2)
    if ((rsv & 3) !== 0 || (rsv === 4 && !rsv1Allowed)) return this.fault(`the server set RSV bits ${rsv} on opcode ${opcode}`)
    if (this.seen.serverSentClose) return this.fault(`the server sent opcode ${opcode} after its close frame`)
    if (opcode === 8) {
      this.seen.serverSentClose = true
      if (payload.length >= 2) this.seen.remoteCode = payload.readUInt16BE(0)
      if (this.sentClose) this.seen.handshakeDone = true
      else {
        // Answer as Autobahn does, with the server's code.
        this.sendClose(payload.length >= 2 ? payload.readUInt16BE(0) : undefined)
        this.seen.handshakeDone = true
      }
      return
    }
    if (opcode === 9) return this.write(encodeFrame({ opcode: 10, payload }))
    if (opcode === 10) return void this.seen.events.push(['pong', Buffer.from(payload)])
    if (opcode === 1 || opcode === 2) {
      if (this.parts.length) return this.fault('a new message inside a fragmented one from the server')
      this.partOpcode = opcode
      this.partCompressed = rsv === 4
    } else if (opcode === 0) {
      if (!this.parts.length) return this.fault('a continuation without a message from the server')
    } else return this.fault(`the server sent opcode ${opcode}`)
    this.parts.push(Buffer.from(payload))
    if (!fin) return
    let data: Buffer = Buffer.concat(this.parts)
    this.parts = []
    if (this.partCompressed) {
      try {
        data = await this.deflate!.inflate(data)
      } catch (e) {
        return this.fault(`a compressed message from the server does not inflate under the agreement: ${(e as Error).message}`)
      }
    }
    this.seen.events.push(['message', data, this.partOpcode === 2])
  }
}

export function sameEvents(a: Event[], b: Event[]): boolean {
  return a.length === b.length && a.every((e, i) => e[0] === b[i][0] && (e[0] === 'timeout' ? e[1] === b[i][1] : (e[1] as Buffer).equals(b[i][1] as Buffer) && (e[0] !== 'message' || e[2] === b[i][2])))
}

export function describe(e: Event): string {
  if (e[0] === 'timeout') return `timeout ${e[1]}`
  const p = e[1]
  const ascii = /^[\x20-\x7e]*$/.test(p.toString('latin1'))
  const shown = p.length > 24 ? `${p.length} bytes` : ascii ? JSON.stringify(p.toString('latin1')) : `0x${p.toString('hex')}`
  return e[0] === 'pong' ? `pong ${shown}` : `${e[2] ? 'binary' : 'text'} ${shown}`
}
