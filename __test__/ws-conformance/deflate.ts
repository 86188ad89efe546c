// permessage-deflate (RFC 7692) on the client's side of the conformance driver: what the
// server's answer agreed, a compressor honouring it (window bits, context takeover) and an
// inflater that checks the server honoured it (a window no larger than agreed, a fresh
// window per message without context takeover).
//
// node:zlib's raw DEFLATE streams hold the context between messages; each message ends with a
// sync flush whose `00 00 ff ff` tail is taken off (sending) or put back (receiving).
import * as zlib from 'node:zlib'

export interface Agreement {
  serverNoContextTakeover: boolean
  clientNoContextTakeover: boolean
  serverMaxWindowBits: number
  clientMaxWindowBits: number
}

/** The agreed parameters from the server's Sec-WebSocket-Extensions, or undefined if it agreed none. */
export function parseAgreement(header: string | undefined): Agreement | string | undefined {
  if (!header) return undefined
  const offers = header.split(',').map((s) => s.trim()).filter(Boolean)
  if (offers.length !== 1) return `answer with ${offers.length} extensions: ${header}`
  const [name, ...params] = offers[0].split(';').map((s) => s.trim())
  if (name !== 'permessage-deflate') return `unknown extension in the answer: ${header}`
  const a: Agreement = { serverNoContextTakeover: false, clientNoContextTakeover: false, serverMaxWindowBits: 15, clientMaxWindowBits: 15 }
  for (const p of params) {
    const [k, v] = p.split('=').map((s) => s.trim().replace(/^"|"$/g, ''))
    if (k === 'server_no_context_takeover') a.serverNoContextTakeover = true
    else if (k === 'client_no_context_takeover') a.clientNoContextTakeover = true
    else if (k === 'server_max_window_bits') a.serverMaxWindowBits = Number(v)
    else if (k === 'client_max_window_bits') a.clientMaxWindowBits = v === undefined ? 15 : Number(v)
    else return `unknown parameter in the answer: ${header}`
  }
  return a
}

const TAIL = Buffer.from([0x00, 0x00, 0xff, 0xff])

/** A raw DEFLATE stream run one message at a time (a sync flush ends each). */
class Stream {
  private out: Buffer[] = []
  private failure: Error | undefined
  constructor(private readonly z: zlib.DeflateRaw | zlib.InflateRaw) {
    z.on('data', (c: Buffer) => this.out.push(c))
    z.on('error', (e: Error) => (this.failure = e))
  }
  run(data: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure)
      this.z.write(data)
      this.z.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        if (this.failure) return reject(this.failure)
        const all = Buffer.concat(this.out)
        this.out = []
        resolve(all)
      })
    })
  }
  close(): void {
    this.z.close()
  }
}

/** Compresses the client's messages and inflates the server's, per the agreement. */
export class DeflateSession {
  private deflater: Stream | undefined
  private inflater: Stream | undefined
  constructor(readonly agreement: Agreement) {}

  async compress(message: Buffer): Promise<Buffer> {
    // zlib's raw deflate has no 2^8 window; a client told to use 8 sends uncompressed (RFC 7692 allows it).
    const bits = Math.max(9, this.agreement.clientMaxWindowBits)
    this.deflater ??= new Stream(zlib.createDeflateRaw({ windowBits: bits }))
    const out = await this.deflater.run(message)
    if (this.agreement.clientNoContextTakeover) this.drop('deflater')
    // An empty message compresses to a lone empty stored block after the tail is removed.
    return out.subarray(0, out.length - 4).length === 0 ? Buffer.from([0x00]) : out.subarray(0, out.length - 4)
  }

  /** Inflates one message from the server; fails when it needed more window than agreed or an old window. */
  async inflate(payload: Buffer): Promise<Buffer> {
    const bits = Math.max(9, this.agreement.serverMaxWindowBits)
    this.inflater ??= new Stream(zlib.createInflateRaw({ windowBits: bits }))
    try {
      return await this.inflater.run(Buffer.concat([payload, TAIL]))
    } finally {
      if (this.agreement.serverNoContextTakeover) this.drop('inflater')
    }
  }

  private drop(which: 'deflater' | 'inflater'): void {
    this[which]?.close()
    this[which] = undefined
  }

  dispose(): void {
    this.drop('deflater')
    this.drop('inflater')
  }
}
