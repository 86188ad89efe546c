// HTTP/1.1 "Hello, World!" with keep-alive and pipelining, on netloop (curl and wrk work).
//
//   node --import tsx examples/http-hello.ts [--port 8080]   # PORT=... works too; --port 0 picks one
//   curl -v http://127.0.0.1:8080/ http://127.0.0.1:8080/     # the second request reuses the connection
//   wrk -t2 -c64 -d5s http://127.0.0.1:8080/
//
// The pipeline:
//   HttpRequestDecoder (inbound)  bytes -> Request objects: the request line and headers up to
//                                 the empty line, then a Content-Length body skipped; requests
//                                 split across reads wait in a cumulation, several in one read
//                                 (pipelining) come out one by one.
//   HelloHandler                  one response per request, written with ctx.write and flushed
//                                 once per read batch; `Connection: close` (or HTTP/1.0 without
//                                 keep-alive) closes once the response is written.
import { type Channel, type ChannelHandler, type ChannelHandlerContext, EventLoop, ServerBootstrap } from '../index'

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
        return
      }
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

function portArg(fallback: number): number {
  const i = process.argv.indexOf('--port')
  const raw = i >= 0 ? process.argv[i + 1] : process.env.PORT
  const port = raw === undefined ? fallback : Number(raw)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad port: ${raw}`)
  return port
}

async function main(): Promise<void> {
  const loop = new EventLoop({ name: 'http' })
  loop.ref() // keep the process alive until the loop terminates
  loop.scheduleAtFixedRate(refreshDate, 1000, 1000)
  const channels = new Set<Channel>()

  const server = await new ServerBootstrap()
    .group(loop)
    .childOption('tcpNoDelay', true)
    .childHandler((ch) => {
      channels.add(ch)
      ch.closeFuture.then(() => channels.delete(ch))
      ch.pipeline.addLast('decoder', new HttpRequestDecoder()).addLast('hello', new HelloHandler())
    })
    .bind(portArg(8080), '127.0.0.1')
  const { address, port } = server.localAddress!
  console.log(`listening on ${address}:${port}`)

  const stop = async () => {
    await server.close()
    await Promise.all([...channels].map((ch) => ch.close()))
    await loop.shutdownGracefully(0, 1000)
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
