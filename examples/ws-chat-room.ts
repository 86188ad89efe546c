// The connections of the WebSocket chat (ws-chat.ts runs it): each connection's pipeline, and
// the rooms, which are topics.
//
//   HttpServerCodec (native)                 HTTP/1.1: `GET /` is answered with the page
//                                            (ws-chat.html), other requests 404 (426 on /ws)
//   WebSocketServerProtocolHandler (native)  the handshake on /ws, then frames (pings, the
//                                            close handshake, bad frames closed natively)
//   ChatHandler (JS)                         JSON messages: join a room, say something
//
// A room is a topic (`room:<name>`): joining subscribes the connection, what someone says is
// published to it. The frame is encoded once natively and written to every member on every
// loop — with `--threads N` to the members on every worker thread — without a JS call per
// member and without JS passing messages between threads. A connection that closes leaves
// its room by itself.
//
// Messages (JSON text frames):
//   client -> server   {"type":"join","room":"lobby","name":"ann"}   (again to change rooms)
//                      {"type":"say","text":"hello"}
//   server -> client   {"type":"welcome","room","name","members"}   to the one who joined
//                      {"type":"joined"|"left","room","name"}        to the room
//                      {"type":"message","room","name","text"}       to the room
//                      {"type":"error","message"}                    to the sender
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  type Channel,
  type ChannelHandler,
  type ChannelHandlerContext,
  HttpRequest,
  HttpResponse,
  HttpServerCodec,
  TextWebSocketFrame,
  WebSocketServerProtocolHandler,
  publish,
  subscribe,
  subscriberCount,
  unsubscribe,
} from 'netloop'
import { addWorkerTls } from './lib/tls'

/** The page a browser opens (inline JS; it connects to /ws on the same host and port). */
const PAGE = readFileSync(join(__dirname, 'ws-chat.html'))

const ROOM = /^[\w-]{1,64}$/u
const MAX_NAME = 32
const MAX_TEXT = 4096

interface Member {
  room: string
  name: string
}

/** Who each connection of this thread is (a thread only sees its own connections). */
const members = new WeakMap<Channel, Member>()

const topicOf = (room: string) => `room:${room}`

function send(ctx: ChannelHandlerContext, m: object): void {
  ctx.writeAndFlush(JSON.stringify(m))
}

function leave(ch: Channel, m: Member): void {
  unsubscribe(ch, topicOf(m.room))
  publish(topicOf(m.room), JSON.stringify({ type: 'left', room: m.room, name: m.name }))
}

function onMessage(ctx: ChannelHandlerContext, text: string): void {
  let m: { type?: unknown; room?: unknown; name?: unknown; text?: unknown }
  try {
    m = JSON.parse(text)
  } catch {
    return send(ctx, { type: 'error', message: 'not JSON' })
  }
  const ch = ctx.channel
  const me = members.get(ch)
  if (m?.type === 'join') {
    const { room, name } = m
    if (typeof room !== 'string' || !ROOM.test(room)) return send(ctx, { type: 'error', message: 'room: 1 to 64 letters, digits, _ or -' })
    if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME) return send(ctx, { type: 'error', message: `name: 1 to ${MAX_NAME} characters` })
    if (me) leave(ch, me)
    members.set(ch, { room, name })
    subscribe(ch, topicOf(room))
    send(ctx, { type: 'welcome', room, name, members: subscriberCount(topicOf(room)) })
    publish(topicOf(room), JSON.stringify({ type: 'joined', room, name }))
  } else if (m?.type === 'say') {
    if (!me) return send(ctx, { type: 'error', message: 'join a room first' })
    if (typeof m.text !== 'string' || m.text.length > MAX_TEXT) return send(ctx, { type: 'error', message: `text: a string of at most ${MAX_TEXT} characters` })
    publish(topicOf(me.room), JSON.stringify({ type: 'message', room: me.room, name: me.name, text: m.text }))
  } else {
    send(ctx, { type: 'error', message: 'type: join or say' })
  }
}

const chat: ChannelHandler = {
  channelRead(ctx, msg: unknown) {
    if (msg instanceof TextWebSocketFrame) return onMessage(ctx, msg.text)
    if (msg instanceof HttpRequest) {
      const path = msg.url.split('?')[0]
      if (msg.method === 'GET' && (path === '/' || path === '/index.html')) {
        ctx.writeAndFlush(new HttpResponse(200, [['content-type', 'text/html; charset=utf-8'], ['cache-control', 'no-store']], PAGE))
      } else if (path === '/ws') {
        ctx.writeAndFlush(new HttpResponse(426, [['upgrade', 'websocket']], 'this path speaks WebSocket\n'))
      } else {
        ctx.writeAndFlush(new HttpResponse(404, [['content-type', 'text/plain']], 'not found\n'))
      }
      return
    }
    // Binary frames are not part of the protocol: ignored.
  },
  channelInactive(ctx) {
    const me = members.get(ctx.channel)
    // The closed channel has left its topic already; tell the others.
    if (me) publish(topicOf(me.room), JSON.stringify({ type: 'left', room: me.room, name: me.name }))
    members.delete(ctx.channel)
    ctx.fireChannelInactive()
  },
  exceptionCaught(ctx, err) {
    // A protocol violation (ERR_WS_*) is already closing the connection with its close code.
    if (!String((err as { code?: string }).code).startsWith('ERR_WS_')) console.error(`ws-chat: channel ${ctx.channel.id}: ${err.message}`)
    ctx.close()
  },
}

export function childHandler(ch: Channel): void {
  addWorkerTls(ch) // --tls --threads N: TLS first, from the main thread's context
  ch.pipeline
    .addLast('http', new HttpServerCodec())
    .addLast('ws', new WebSocketServerProtocolHandler('/ws'))
    .addLast('chat', chat)
}
