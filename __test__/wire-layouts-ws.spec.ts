/** The WebSocket frame layouts, both directions (wire-layouts-helpers.ts says how). */
import test from 'ava'

import { BinaryWebSocketFrame, CloseWebSocketFrame, PingWebSocketFrame, PongWebSocketFrame, readWs, TextWebSocketFrame, wsBytes } from '../src/ws'
import { echo, samples } from './wire-layouts-helpers'

test('WebSocket frames written natively read back as their frame classes', (t) => {
  t.deepEqual(
    samples.ws.map((b) => readWs(b, 0, b.length)),
    [
      new TextWebSocketFrame('héllo ✓'),
      new BinaryWebSocketFrame(Buffer.from([0, 0xff, 0x80])),
      new PingWebSocketFrame(Buffer.from('p')),
      new PongWebSocketFrame(Buffer.alloc(0)),
      new CloseWebSocketFrame(4001, 'ç'),
      new CloseWebSocketFrame(),
    ],
  )
})

test('WebSocket frames written by JS are read natively into the frames written', (t) => {
  const frames = [
    new TextWebSocketFrame('héllo ✓'),
    new BinaryWebSocketFrame(Buffer.from([0, 0xff])),
    new PingWebSocketFrame(Buffer.from('p')),
    new PongWebSocketFrame(),
    new CloseWebSocketFrame(4001, 'ç'),
    new CloseWebSocketFrame(),
  ]
  t.deepEqual(
    frames.map((f) => echo('ws', wsBytes(f))),
    [
      { kind: 'text', payload: Buffer.from('héllo ✓').toString('hex') },
      { kind: 'binary', payload: '00ff' },
      { kind: 'ping', payload: '70' },
      { kind: 'pong', payload: '' },
      { kind: 'close', payload: `0fa1${Buffer.from('ç').toString('hex')}` },
      { kind: 'close', payload: '' },
    ],
  )
})
