// The connections of the HTTP server (http-hello.ts runs it): the pipeline of each connection.
//
// The pipeline (default):
//   idle timeout (lib/idle.ts)    closes a connection without traffic for `--idle` seconds
//                                 (default 60; 0: never): a kept-alive client that went silent.
//   HttpServerCodec (native)      netloop's HTTP/1.1 codec (crates/http): requests are parsed in
//                                 Rust and reach JS once each as an `HttpRequest`; responses are
//                                 framed natively (Content-Length, Date, Connection), in request
//                                 order (pipelining), with the keep-alive rules of HTTP/1.0 and
//                                 1.1. Malformed requests are answered natively (400, 413, 431...)
//                                 and the connection closes. A request head must arrive whole
//                                 within `--header-timeout` seconds (default 10; 0: no limit) of
//                                 the connection's start or of its first byte, or the answer is
//                                 408 and the connection closes: a client that trickles its
//                                 headers in (slowloris) cannot hold a connection.
//   NativeHelloHandler            answers each request with a frozen `HttpResponse` ("Hello,
//                                 World!", encoded natively once), flushed once per read batch.
//
// With `--js-codec` the protocol is done in JS instead (an example of a JS decoder, and the
// baseline for benchmark comparisons), with lib/backpressure.ts's `readWhileWritable` last
// (reading stops while the responses do not drain: the native codec does that itself):
//   HttpRequestDecoder (inbound)  bytes -> Request objects: the request line and headers up to
//                                 the empty line, then a Content-Length body skipped; requests
//                                 split across reads wait in a cumulation, several in one read
//                                 (pipelining) come out one by one. The same `--header-timeout`.
//   HelloHandler                  one response per request, written with ctx.write and flushed
//                                 once per read batch; `Connection: close` (or HTTP/1.0 without
//                                 keep-alive) closes once the response is written.
//
// With `--threads N` every worker thread imports this module and runs `childHandler` for the
// connections of its loop (each thread keeps its own `Date` header).
import { isMainThread, workerData } from 'node:worker_threads'
import { type Channel, type ChannelHandler, type ChannelHandlerContext, HttpContent, HttpRequest, HttpResponse, HttpServerCodec, type ScheduledTask } from 'netloop'
import { readWhileWritable } from './lib/backpressure'
import { addIdleTimeout, idleSeconds, secondsArg } from './lib/idle'
import { addWorkerProxyProtocol } from './lib/proxy'
import { addWorkerTls } from './lib/tls'

/** Seconds without traffic before a connection is closed (`--idle`). */
export const IDLE_DEFAULT = 60
/** Seconds a request head may take to arrive (`--header-timeout`). */
export const HEADER_TIMEOUT_DEFAULT = 10
const idle = idleSeconds(IDLE_DEFAULT)
const passed = workerData as { headerTimeoutSeconds?: number; jsCodec?: boolean } | undefined
const headerTimeout = isMainThread ? secondsArg('--header-timeout', HEADER_TIMEOUT_DEFAULT) : (passed?.headerTimeoutSeconds ?? HEADER_TIMEOUT_DEFAULT)
/** `--js-codec`: parse and frame HTTP in JS instead of the native codec. */
const jsCodec = isMainThread ? process.argv.includes('--js-codec') : passed?.jsCodec === true

interface Request {
  method: string
  target: string
  version: '1.0' | '1.1'
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Map<string, string>
}

/** A request that cannot be served: `status` is sent, then the connection closes. */
class BadRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

const MAX_HEAD = 16 * 1024
const MAX_BODY = 64 * 1024 * 1024
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/1\.([01])$/
const HEADER = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/

class HttpRequestDecoder implements ChannelHandler {
  #cum: Buffer | undefined
  /** Body bytes of the current request still to skip. */
  #skip = 0
  #failed = false
  /** Armed while a request head is awaited: at the start, and while a partial head waits. */
  #headTimer: ScheduledTask | undefined

  #armHeadTimer(ctx: ChannelHandlerContext) {
    if (headerTimeout <= 0 || this.#headTimer || this.#failed) return
    this.#headTimer = ctx.executor.schedule(() => {
      this.#headTimer = undefined
      this.#failed = true
      ctx.fireExceptionCaught(new BadRequest(408, 'the request head did not arrive in time'))
    }, headerTimeout * 1000)
  }

  #disarmHeadTimer() {
    this.#headTimer?.cancel()
    this.#headTimer = undefined
  }

  channelActive(ctx: ChannelHandlerContext) {
    this.#armHeadTimer(ctx)
    ctx.fireChannelActive()
  }

  channelInactive(ctx: ChannelHandlerContext) {
    this.#disarmHeadTimer()
    ctx.fireChannelInactive()
  }

  channelRead(ctx: ChannelHandlerContext, msg: Buffer) {
    if (this.#failed) return
    let buf = this.#cum ? Buffer.concat([this.#cum, msg]) : msg
    this.#cum = undefined
    while (buf.length > 0) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, buf.length)
        this.#skip -= n
        buf = buf.subarray(n)
        continue
      }
      let parsed: { request: Request; bodyLength: number; end: number } | undefined
      try {
        parsed = parseHead(buf)
      } catch (e) {
        this.#failed = true
        ctx.fireExceptionCaught(e)
        return
      }
      if (!parsed) {
        if (buf.length > MAX_HEAD) {
          this.#failed = true
          ctx.fireExceptionCaught(new BadRequest(431, 'request header fields too large'))
          return
        }
        this.#cum = buf
        this.#armHeadTimer(ctx)
        return
      }
      this.#disarmHeadTimer()
      buf = buf.subarray(parsed.end)
      this.#skip = parsed.bodyLength
      ctx.fireChannelRead(parsed.request)
    }
  }
}

/** The request head at the start of `buf`, or undefined while its empty line has not arrived. */
function parseHead(buf: Buffer): { request: Request; bodyLength: number; end: number } | undefined {
  let pos = 0
  const lines: string[] = []
  for (;;) {
    const nl = buf.indexOf(0x0a, pos)
    if (nl < 0 || nl > MAX_HEAD) return undefined
    const line = buf.toString('latin1', pos, nl > pos && buf[nl - 1] === 0x0d ? nl - 1 : nl)
    pos = nl + 1
    if (line === '') {
      if (lines.length === 0) continue // empty lines before a request line are ignored (RFC 9112 §2.2)
      break
    }
    lines.push(line)
  }
  const m = REQUEST_LINE.exec(lines[0])
  if (!m) throw new BadRequest(400, `bad request line: ${JSON.stringify(lines[0].slice(0, 80))}`)
  const headers = new Map<string, string>()
  for (const line of lines.slice(1)) {
    const h = HEADER.exec(line)
    if (!h) throw new BadRequest(400, `bad header line: ${JSON.stringify(line.slice(0, 80))}`)
    const name = h[1].toLowerCase()
    const prev = headers.get(name)
    headers.set(name, prev === undefined ? h[2] : `${prev}, ${h[2]}`)
  }
  const te = headers.get('transfer-encoding')
  if (te !== undefined && te.toLowerCase() !== 'identity') throw new BadRequest(501, `transfer-encoding ${te} is not supported here`)
  const cl = headers.get('content-length')
  let bodyLength = 0
  if (cl !== undefined) {
    if (!/^[0-9]{1,15}$/.test(cl)) throw new BadRequest(400, `bad content-length: ${cl}`)
    bodyLength = Number(cl)
    if (bodyLength > MAX_BODY) throw new BadRequest(413, 'content too large')
  }
  const request: Request = { method: m[1], target: m[2], version: m[3] === '0' ? '1.0' : '1.1', headers }
  return { request, bodyLength, end: pos }
}

/** True when the connection stays open after this request's response. */
function keepAlive(req: Request): boolean {
  const tokens = (req.headers.get('connection') ?? '').toLowerCase().split(',').map((s) => s.trim())
  if (tokens.includes('close')) return false
  return req.version === '1.1' || tokens.includes('keep-alive')
}

const STATUS: Record<number, string> = {
  200: 'OK',
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
}

/** The `Date` header's value, refreshed once a second by the loop. */
let date = new Date().toUTCString()

function response(status: number, body: string, keep: boolean, head = false): Buffer {
  const b = Buffer.from(body)
  const h =
    `HTTP/1.1 ${status} ${STATUS[status]}\r\n` +
    `Date: ${date}\r\n` +
    'Content-Type: text/plain; charset=utf-8\r\n' +
    `Content-Length: ${b.length}\r\n` +
    `Connection: ${keep ? 'keep-alive' : 'close'}\r\n\r\n`
  return head ? Buffer.from(h) : Buffer.concat([Buffer.from(h), b])
}

/** The usual responses, rebuilt when the date changes. */
let hello = { keep: response(200, 'Hello, World!', true), close: response(200, 'Hello, World!', false) }
function refreshDate(): void {
  const now = new Date().toUTCString()
  if (now === date) return
  date = now
  hello = { keep: response(200, 'Hello, World!', true), close: response(200, 'Hello, World!', false) }
}

const QUIET_ERRORS = new Set(['ERR_CHANNEL_CLOSED', 'ECONNRESET', 'EPIPE'])

class HelloHandler implements ChannelHandler {
  #closing = false

  channelRead(ctx: ChannelHandlerContext, req: Request) {
    if (this.#closing) return // requests pipelined after `Connection: close` are not answered
    const keep = keepAlive(req)
    const res = req.method === 'HEAD' ? response(200, 'Hello, World!', keep, true) : keep ? hello.keep : hello.close
    if (keep) {
      ctx.write(res)
    } else {
      this.#closing = true
      ctx.writeAndFlush(res, ctx.newPromise()).addListener(() => ctx.close())
    }
  }

  channelReadComplete(ctx: ChannelHandlerContext) {
    ctx.flush()
  }

  exceptionCaught(ctx: ChannelHandlerContext, e: Error) {
    if (e instanceof BadRequest) {
      if (this.#closing) return
      this.#closing = true
      ctx.writeAndFlush(response(e.status, `${e.message}\n`, false), ctx.newPromise()).addListener(() => ctx.close())
      return
    }
    if (!QUIET_ERRORS.has((e as NodeJS.ErrnoException).code ?? '')) console.error(`http-hello: channel ${ctx.channel.id}: ${e.message}`)
    ctx.close()
  }
}

// ---- the native codec's application handler ----

const HELLO = Buffer.from('Hello, World!')
const TEXT: [string, string] = ['Content-Type', 'text/plain; charset=utf-8']
/**
 * The two responses, frozen: checked and encoded natively once, each write is then a reference
 * (they answer the oldest unanswered request; the codec adds Date, Content-Length, Connection).
 */
const nativeHello = {
  keep: new HttpResponse(200, [TEXT, ['Connection', 'keep-alive']], HELLO).freeze(),
  close: new HttpResponse(200, [TEXT], HELLO).freeze(),
}

/**
 * The message classes as constants of this module: an imported binding read per request goes
 * through the export getters of each module that re-exports it (three here, bundled), a few
 * hundred instructions per request that a constant does not cost.
 */
const RequestClass = HttpRequest
const ContentClass = HttpContent

class NativeHelloHandler implements ChannelHandler {
  /** keepAlive of a request whose (large) body is still streaming in. */
  #streamingKeep = true

  channelRead(ctx: ChannelHandlerContext, msg: HttpRequest | HttpContent) {
    if (msg instanceof RequestClass) {
      if (msg.streaming) this.#streamingKeep = msg.keepAlive // answered after its last piece
      else ctx.write(msg.keepAlive ? nativeHello.keep : nativeHello.close)
    } else if (msg instanceof ContentClass && msg.last) {
      ctx.write(this.#streamingKeep ? nativeHello.keep : nativeHello.close)
    }
  }

  channelReadComplete(ctx: ChannelHandlerContext) {
    ctx.flush()
  }

  exceptionCaught(ctx: ChannelHandlerContext, e: Error) {
    const code = (e as NodeJS.ErrnoException).code ?? ''
    // HPE_* and ERR_HTTP_*: a request the codec refused; it answered natively and closes
    if (code.startsWith('HPE_') || code.startsWith('ERR_HTTP_')) return
    if (!QUIET_ERRORS.has(code)) console.error(`http-hello: channel ${ctx.channel.id}: ${e.message}`)
    ctx.close()
  }
}

/** Refreshes `date` once a second, on the loop of this thread's first connection. */
let dateTimer: ScheduledTask | undefined

/**
 * Sets up each connection's pipeline, on the loop that serves it: the main thread's loop, or
 * (--threads N) a worker's loop, where netloop's worker calls it for every connection.
 */
export function childHandler(ch: Channel): void {
  addWorkerTls(ch) // --tls --threads N: TLS first, from the main thread's context
  addWorkerProxyProtocol(ch) // --proxy-protocol --threads N: the PROXY header decoder before it
  if (jsCodec) {
    if (!dateTimer) {
      refreshDate() // the module may have been loaded long before
      dateTimer = ch.eventLoop.scheduleAtFixedRate(refreshDate, 1000, 1000)
    }
    // Backpressure: no reading while the responses do not drain (a client pipelining without
    // reading them costs at most the responses to one read's requests past the high mark).
    ch.pipeline.addLast('decoder', new HttpRequestDecoder()).addLast('hello', new HelloHandler()).addLast('backpressure', readWhileWritable)
  } else {
    const ms = headerTimeout > 0 ? Math.max(1, Math.round(headerTimeout * 1000)) : 0
    ch.pipeline.addLast('http', new HttpServerCodec({ headerTimeout: ms })).addLast('hello', new NativeHelloHandler())
  }
  addIdleTimeout(ch, idle, 'reads') // a request/response server: the peer's silence is idleness
}

/** What the main thread passes to the workers (--threads N). */
export const workerSettings = { headerTimeoutSeconds: headerTimeout, jsCodec }
