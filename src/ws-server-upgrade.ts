/**
 * The handshake `WebSocketServer` answers in JS (`handleUpgrade`, and so with
 * `handleProtocols`): the upgrade request checked as `ws` checks it (400, 405, 426 otherwise),
 * the subprotocol and permessage-deflate chosen, the native frame handler and the socket's
 * bridge put in before the handler that read the request, the `101` written through the
 * HTTP codec, and the codec taken out (the bytes it held go to the frame handler). Also the answer to a request that is no upgrade for the server.
 */
import { createHash } from 'node:crypto'
import type { ChannelHandlerContext } from './context'
import { HttpRequest } from './http-request'
import { HttpResponse } from './http-response'
import { HttpServerCodec } from './http'
import { NativeHandler } from './codecs'
import { NativeHandlerKind } from './protocol'
import { markWebSocketChannel } from './ws'
import { WebSocketHandshakeEvent } from './ws-client'
import { WebSocket } from './ws-socket'
import { attach, bridge, opened } from './ws-socket-lifecycle'
import { negotiateDeflate } from './ws-deflate-offer'
import { requestOf, type WebSocketRequest, type WebSocketServerOptions } from './ws-server-options'

const KEY = /^[A-Za-z0-9+/]{21}[AQgw]==$/
const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'

function hasToken(value: string | undefined, token: string): boolean {
  return value !== undefined && value.split(',').some((t) => t.trim().toLowerCase() === token)
}

/** The native frame handler alone (server role), for a handshake JS answered. */
class WebSocketFramesHandler extends NativeHandler {
  constructor(p: number[]) {
    super(NativeHandlerKind.WebSocketFrames, p)
  }
  /** @internal */
  override _attach(ch: unknown): void {
    markWebSocketChannel(ch)
  }
}

/**
 * Answers upgrade `request`, read by the handler of `ctx`: refused (undefined), or the open
 * socket and its request. `params` are the frame handler's, `deflateParams` the server's
 * permessage-deflate settings (`deflateParams` of src/ws.ts).
 */
export function acceptUpgrade(
  request: HttpRequest,
  ctx: ChannelHandlerContext,
  options: Readonly<WebSocketServerOptions>,
  params: number[],
  deflateParams: readonly number[],
  shouldHandle: (request: HttpRequest) => boolean,
): [WebSocket, WebSocketRequest] | undefined {
  const refuse = (status: number, message: string, extra: Array<[string, string]> = []): undefined => {
    ctx.writeAndFlush(new HttpResponse(status, [['content-type', 'text/plain'], ...extra], message).forRequest(request))
    return undefined
  }
  const h = (name: string): string | undefined => request.header(name)
  if (request.method !== 'GET') return refuse(405, 'a WebSocket handshake must be a GET', [['allow', 'GET']])
  if (!hasToken(h('upgrade'), 'websocket') || !hasToken(h('connection'), 'upgrade')) return refuse(400, 'not a WebSocket upgrade request')
  if (h('sec-websocket-version')?.trim() !== '13') return refuse(426, 'Sec-WebSocket-Version must be 13', [['sec-websocket-version', '13']])
  const key = h('sec-websocket-key')?.trim()
  if (key === undefined || !KEY.test(key)) return refuse(400, 'missing or invalid Sec-WebSocket-Key')
  if (!shouldHandle(request)) return refuse(400, 'no WebSocket at this path')
  const ch = ctx.channel
  const raw = request.rawHeaders
  const ev = new WebSocketHandshakeEvent(request.url, '', raw)
  const info = requestOf(ch, request.url, ev)
  const offered = new Set((h('sec-websocket-protocol') ?? '').split(',').map((p) => p.trim()).filter((p) => p !== ''))
  let protocol: string | false = false
  if (options.handleProtocols) protocol = offered.size > 0 ? options.handleProtocols(offered, info) : false
  else if (options.protocols) protocol = [...offered].find((p) => options.protocols!.includes(p)) ?? false
  else protocol = offered.values().next().value ?? false
  const headers: Array<[string, string]> = [
    ['upgrade', 'websocket'],
    ['connection', 'Upgrade'],
    ['sec-websocket-accept', createHash('sha1').update(key + GUID).digest('base64')],
  ]
  if (protocol !== false) headers.push(['sec-websocket-protocol', protocol])
  const deflate = negotiateDeflate(deflateParams, h('sec-websocket-extensions'))
  if (deflate) headers.push(['sec-websocket-extensions', deflate.response])
  const ws = new WebSocket(null)
  const p = ch.pipeline
  const name = p.names().includes('ws') ? `ws-${ch.id}-${Date.now()}` : 'ws'
  p.addBefore(ctx.name, name, new WebSocketFramesHandler([...params, ...(deflate ? [1, deflateParams[1], ...deflate.agreed] : [0])])).addBefore(ctx.name, `${name}-app`, bridge(ws, false))
  ws._wsName = name
  ctx.writeAndFlush(new HttpResponse(101, headers).forRequest(request))
  // The HTTP codec leaves behind its 101 (as Netty's handshaker removes it): its removal fires
  // the bytes it held after the request to the frame handler, and frees it.
  p.removeIfExists(HttpServerCodec)
  attach(ws, ch)
  opened(ws, new WebSocketHandshakeEvent(request.url, protocol === false ? '' : protocol, raw), false)
  return [ws, info]
}

/** A request that is not a WebSocket upgrade for this server: 426 (400 for an upgrade to another path), as `ws`. */
export function answerPlain(ctx: ChannelHandlerContext, req: HttpRequest): void {
  const status = req.upgrade ? 400 : 426
  ctx.writeAndFlush(new HttpResponse(status, [['content-type', 'text/plain']], status === 426 ? 'Upgrade Required' : 'Bad Request').forRequest(req))
}
