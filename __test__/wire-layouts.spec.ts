/**
 * One check per byte layout that crosses the JS boundary (decision 0018): the native writers
 * encode fixed samples (`wireSamples`, crates/node/src/channel/wire_samples.rs) that the TS
 * readers the hub uses must read back field by field, and the TS writers' layouts must be
 * read by the native readers the ops use (`wireEcho`) into the values written. The values are
 * stated here once; a field added, moved or resized on one side only fails a test.
 */
import test from 'ava'
import { fstatSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ts from 'typescript'

import * as native from '../native'
import { EVENT_OF_WIRE, WIRE_OF_EVENT } from '../src/event-wire'
import { PROTOCOL } from '../src/protocol'
import { HttpContent, HttpRequest, HttpResponse } from '../src/http'
import { HttpClientRequest, HttpClientResponse } from '../src/http-client'
import { FileRegion, REGION_BYTES, writeRegion } from '../src/file-region'
import { httpBytes, httpInboundBytes, readHttp } from '../src/http-wire'
import { readValue, replyBytes, Resp, RespErrorReply } from '../src/resp'
import { BinaryWebSocketFrame, CloseWebSocketFrame, PingWebSocketFrame, PongWebSocketFrame, readWs, TextWebSocketFrame, wsBytes } from '../src/ws'

const MAX_ID = 2 ** 53 - 1
const latin1 = (b: Buffer) => b.toString('latin1')
const hex = (s: string | Buffer) => (typeof s === 'string' ? Buffer.from(s, 'latin1') : s).toString('hex')
const body = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251))
const samples = native.wireSamples()
const echo = (kind: string, layout: Buffer): unknown => JSON.parse(native.wireEcho(kind, layout))

// ---- native → JS ----

test('an HTTP request written natively reads back field by field', (t) => {
  const r = readHttp(samples.httpRequest, 0)
  if (!(r instanceof HttpRequest)) return t.fail('not a request')
  t.like(r, { id: MAX_ID, httpVersion: '1.1', httpVersionMajor: 1, httpVersionMinor: 1, keepAlive: true, streaming: true, expectContinue: true, upgrade: true })
  t.is(r.method, latin1(Buffer.from('PROP\xc9FIND', 'latin1')))
  t.is(r.url, latin1(Buffer.from(`/${'a'.repeat(9000)}é`)))
  t.deepEqual(r.body, body)
  t.deepEqual(r.rawHeaders, ['Host', 'h', 'X-Empty', '', 'X-Latin', 'caf\xe9', 'X-Dup', '1', 'X-Dup', '2', 'Connection', 'upgrade', 'Upgrade', 'x', 'Expect', '100-continue'])
  t.is(r.header('x-dup'), '1, 2')
  t.deepEqual({ ...r.trailers }, { 'x-t': '\xff', 'x-u': '' })
})

test('an HTTP/1.0 request with every field empty reads back empty', (t) => {
  const r = readHttp(samples.httpRequestEmpty, 0)
  if (!(r instanceof HttpRequest)) return t.fail('not a request')
  t.like(r, { id: 0, httpVersion: '1.0', httpVersionMajor: 1, httpVersionMinor: 0, keepAlive: false, streaming: false, expectContinue: false, upgrade: false, method: '', url: '' })
  t.is(r.body.length, 0)
  t.deepEqual(r.rawHeaders, [])
  t.deepEqual({ ...r.trailers }, {})
})

test('each flag of an HTTP request written natively reads back alone', (t) => {
  const names = ['httpVersion', 'keepAlive', 'streaming', 'expectContinue', 'upgrade'] as const
  t.is(samples.httpRequestFlags.length, names.length)
  samples.httpRequestFlags.forEach((b, i) => {
    const r = readHttp(b, 0) as HttpRequest
    const want = { httpVersion: '1.0', keepAlive: false, streaming: false, expectContinue: false, upgrade: false } as Record<string, unknown>
    want[names[i]] = names[i] === 'httpVersion' ? '1.1' : true
    t.like(r, want, names[i])
  })
})

test('HTTP body pieces written natively read back with their id, last bit and trailers', (t) => {
  const [last, middle, bare] = samples.httpContent.map((b) => readHttp(b, 0))
  if (!(last instanceof HttpContent) || !(middle instanceof HttpContent) || !(bare instanceof HttpContent)) return t.fail('not content')
  t.deepEqual(last.data, Buffer.from([0xe9, 0x6e, 0x64]))
  t.like(last, { last: true, requestId: MAX_ID })
  t.deepEqual({ ...last.trailers }, { 'x-t': '\xe9, 2' })
  t.is(middle.data.length, 0)
  t.like(middle, { last: false, requestId: -1 })
  t.deepEqual({ ...middle.trailers }, {})
  t.like(bare, { data: Buffer.from('x'), last: true, requestId: 0 })
  t.deepEqual({ ...bare.trailers }, {})
})

test('an HTTP client response written natively reads back field by field', (t) => {
  const r = readHttp(samples.httpClientResponse, 0)
  if (!(r instanceof HttpClientResponse)) return t.fail('not a client response')
  t.like(r, { id: MAX_ID, statusCode: 65535, httpVersion: '1.1', keepAlive: true, streaming: true, upgraded: true })
  t.is(r.statusMessage, 'Gr\xfc\xdfe')
  t.deepEqual(r.body, Buffer.from([0, 0xff]))
  t.deepEqual(r.rawHeaders, ['Content-Length', '0', 'X-Latin', '\xe9', 'X-Empty', ''])
  t.deepEqual({ ...r.trailers }, { 'x-t': '1' })
})

test('each flag of an HTTP client response written natively reads back alone', (t) => {
  const names = ['httpVersion', 'keepAlive', 'streaming', 'upgraded'] as const
  t.is(samples.httpClientResponseFlags.length, names.length)
  samples.httpClientResponseFlags.forEach((b, i) => {
    const r = readHttp(b, 0) as HttpClientResponse
    const want = { httpVersion: '1.0', keepAlive: false, streaming: false, upgraded: false } as Record<string, unknown>
    want[names[i]] = names[i] === 'httpVersion' ? '1.1' : true
    t.like(r, want, names[i])
  })
})

test('a RESP value of every kind written natively reads back as its JS value', (t) => {
  t.deepEqual(readValue(samples.resp, 0), [
    'OK é',
    new RespErrorReply('ERR bad'),
    -(2n ** 63n),
    -MAX_ID,
    Buffer.alloc(0),
    Buffer.from([0, 0xff]),
    null,
    null,
    null,
    true,
    false,
    -0.5,
    -123456789012345678901234567890n,
    new RespErrorReply('SYNTAX x'),
    'ünï',
    new Map([[Buffer.from('k'), 1]]),
    new Set([2]),
    Buffer.from('v'),
    [Buffer.from('message'), []],
  ])
})

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

// ---- JS → native ----

test('an HTTP response written by JS is read natively field by field', (t) => {
  const r = new HttpResponse(999, [['X-Latin', 'caf\xe9'], ['X-Empty', '']], body, 'Gr\xfc\xdfe')
  r.requestId = MAX_ID
  r.streaming = true
  t.deepEqual(echo('http', httpBytes(r)), {
    kind: 'response',
    requestId: MAX_ID,
    status: 999,
    reason: hex('Gr\xfc\xdfe'),
    headers: [[hex('X-Latin'), hex('caf\xe9')], [hex('X-Empty'), '']],
    body: hex(body),
    streaming: true,
    file: null,
  })
  t.deepEqual(echo('http', httpBytes(new HttpResponse(100))), { kind: 'response', requestId: null, status: 100, reason: null, headers: [], body: '', streaming: false, file: null })
})

test('HTTP body pieces written by JS are read natively with their id, last bit and trailers', (t) => {
  const last = new HttpContent(Buffer.from([0xe9]), true, MAX_ID, [['X-T', '1'], ['X-T', '\xe9']])
  t.deepEqual(echo('http', httpBytes(last)), { kind: 'content', requestId: MAX_ID, last: true, data: 'e9', trailers: [[hex('x-t'), hex('1, \xe9')]] })
  t.deepEqual(echo('http', httpBytes(new HttpContent(Buffer.alloc(0)))), { kind: 'content', requestId: null, last: false, data: '', trailers: [] })
  t.deepEqual(echo('http', httpBytes(new HttpContent(Buffer.from('x'), true, 0))), { kind: 'content', requestId: 0, last: true, data: '78', trailers: [] })
})

test('an HTTP client request written by JS is read natively field by field', (t) => {
  const r = new HttpClientRequest('PROPFIND', '/a?b=%C3%A9', [['X-Latin', '\xe9'], ['X-Empty', '']], body)
  r.streaming = true
  r.httpVersion = '1.0'
  t.deepEqual(echo('http', httpBytes(r)), {
    kind: 'request',
    method: hex('PROPFIND'),
    target: hex('/a?b=%C3%A9'),
    http10: true,
    headers: [[hex('X-Latin'), 'e9'], [hex('X-Empty'), '']],
    body: hex(body),
    streaming: true,
    file: null,
  })
  t.deepEqual(echo('http', httpBytes(new HttpClientRequest('GET', '/'))), { kind: 'request', method: hex('GET'), target: hex('/'), http10: false, headers: [], body: '', streaming: false, file: null })
  // One flag each: the two bits cannot be swapped unseen.
  const streamed = new HttpClientRequest('GET', '/').streamed()
  t.like(echo('http', httpBytes(streamed)), { http10: false, streaming: true })
  const old = new HttpClientRequest('GET', '/')
  old.httpVersion = '1.0'
  t.like(echo('http', httpBytes(old)), { http10: true, streaming: false })
})

test('an HTTP request read natively and passed on by JS is read natively again field by field', (t) => {
  const full = readHttp(samples.httpRequest, 0) as HttpRequest
  const want = {
    kind: 'serverRequest',
    id: MAX_ID,
    method: hex(Buffer.from('PROP\xc9FIND', 'latin1')),
    target: hex(Buffer.from(`/${'a'.repeat(9000)}é`)),
    http11: true,
    keepAlive: true,
    streaming: true,
    expectContinue: true,
    upgrade: true,
    headers: [['Host', 'h'], ['X-Empty', ''], ['X-Latin', 'caf\xe9'], ['X-Dup', '1'], ['X-Dup', '2'], ['Connection', 'upgrade'], ['Upgrade', 'x'], ['Expect', '100-continue']].map(([n, v]) => [hex(n), hex(v)]),
    body: hex(body),
    trailers: [[hex('X-T'), 'ff'], [hex('X-U'), '']],
  }
  t.deepEqual(echo('http-in', httpInboundBytes(full)), want)
  // Headers read as an object and left as they were: still the fields as read (case, order, repeats).
  t.is(full.headers['x-dup'], '1, 2')
  t.deepEqual(echo('http-in', httpInboundBytes(full)), want)
  t.deepEqual(echo('http-in', httpInboundBytes(readHttp(samples.httpRequestEmpty, 0) as HttpRequest)), {
    kind: 'serverRequest', id: 0, method: '', target: '', http11: false, keepAlive: false, streaming: false, expectContinue: false, upgrade: false, headers: [], body: '', trailers: [],
  })
  const flags = ['http11', 'keepAlive', 'streaming', 'expectContinue', 'upgrade']
  samples.httpRequestFlags.forEach((b, i) => {
    const got = echo('http-in', httpInboundBytes(readHttp(b, 0) as HttpRequest)) as Record<string, unknown>
    t.deepEqual(flags.filter((f) => got[f] === true), [flags[i]], flags[i])
  })
})

test('what a JS handler changed in an HTTP request is what the native reader gets', (t) => {
  const r = readHttp(samples.httpRequest, 0) as HttpRequest
  r.method = 'GET'
  r.url = '/caf\xe9'
  r.headers['x-dup'] = ['3', '4']
  r.headers['x-new'] = 'n\xe9'
  delete r.headers['x-empty']
  t.like(echo('http-in', httpInboundBytes(r)), {
    method: hex('GET'),
    target: hex('/caf\xe9'),
    // As the object holds them now: lower-case names, an array as one field per element.
    headers: [['host', 'h'], ['x-latin', 'caf\xe9'], ['x-dup', '3'], ['x-dup', '4'], ['connection', 'upgrade'], ['upgrade', 'x'], ['expect', '100-continue'], ['x-new', 'n\xe9']].map(([n, v]) => [hex(n), hex(v)]),
    body: hex(body),
    trailers: [[hex('X-T'), 'ff'], [hex('X-U'), '']],
  })
  t.throws(() => {
    r.url = 3 as unknown as string
  }, { code: 'ERR_INVALID_ARG_TYPE' })
})

test('HTTP body pieces read natively and passed on by JS are read natively again with their id, last bit and trailers', (t) => {
  t.deepEqual(
    samples.httpContent.map((b) => echo('http-in', httpInboundBytes(readHttp(b, 0) as HttpContent))),
    [
      { kind: 'content', requestId: MAX_ID, last: true, data: 'e96e64', trailers: [[hex('x-t'), hex('\xe9, 2')]] },
      { kind: 'content', requestId: null, last: false, data: '', trailers: [] },
      { kind: 'content', requestId: 0, last: true, data: '78', trailers: [] },
    ],
  )
  // Cut short anywhere: refused, not misread.
  const full = httpInboundBytes(readHttp(samples.httpRequestEmpty, 0) as HttpRequest)
  for (let n = 0; n < full.length; n++) t.throws(() => native.wireEcho('http-in', full.subarray(0, n)), { message: /truncated|empty/ }, `cut at ${n}`)
})

/** A descriptor of a fresh 100-byte file. */
function openFile(): number {
  const path = join(mkdtempSync(join(tmpdir(), 'netloop-wire-')), 'f')
  writeFileSync(path, Buffer.alloc(100, 1))
  return openSync(path, 'r')
}

test('a file region written by JS is read natively, its descriptor handed over', (t) => {
  const fd = openFile()
  const buf = Buffer.alloc(REGION_BYTES)
  t.is(writeRegion(new FileRegion(fd, 7, 93), buf, 0), REGION_BYTES)
  t.deepEqual(echo('file', buf), { fd, position: 7, count: 93 })
  // The native region owned the descriptor and closed it when dropped.
  t.throws(() => fstatSync(fd), { code: 'EBADF' })
})

test('file bodies of an HTTP response and a client request are read natively at their place', (t) => {
  const fd = openFile()
  const r = new HttpResponse(200, [['A', 'b']], new FileRegion(fd, 100, 0), 'OK')
  t.like(echo('http', httpBytes(r)), { status: 200, reason: hex('OK'), headers: [[hex('A'), hex('b')]], body: '', file: { fd, position: 100, count: 0 } })
  const fd2 = openFile()
  const q = new HttpClientRequest('PUT', '/f', [['A', 'b']], new FileRegion(fd2, 0, 100))
  t.like(echo('http', httpBytes(q)), { method: hex('PUT'), target: hex('/f'), headers: [[hex('A'), hex('b')]], body: '', file: { fd: fd2, position: 0, count: 100 } })
})

test('RESP replies written by JS are read natively into the protocol bytes they stand for', (t) => {
  const reply = Resp.array([
    Resp.simple('OK é'),
    Resp.error('ERR x'),
    Resp.integer(-(2n ** 63n)),
    Resp.integer(MAX_ID),
    Resp.bulk(''),
    Resp.bulk(Buffer.from([0, 0xff])),
    Resp.nullBulk(),
    Resp.nullArray(),
    Resp.null(),
    Resp.boolean(true),
    Resp.boolean(false),
    Resp.double(-0.5),
    Resp.map([[Resp.bulk('k'), Resp.integer(1)]]),
    Resp.array([]),
  ])
  const wire = Buffer.concat([
    Buffer.from('*14\r\n+OK é\r\n-ERR x\r\n:-9223372036854775808\r\n:9007199254740991\r\n$0\r\n\r\n$2\r\n'),
    Buffer.from([0, 0xff]),
    Buffer.from('\r\n$-1\r\n*-1\r\n_\r\n#t\r\n#f\r\n,-0.5\r\n%1\r\n$1\r\nk\r\n:1\r\n*0\r\n'),
  ])
  t.is(echo('resp', replyBytes(reply)), wire.toString('hex'))
  t.is(echo('resp', replyBytes(Resp.sequence([Resp.OK, Resp.PONG]))), Buffer.from('+OK\r\n+PONG\r\n').toString('hex'))
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

test('a layout cut short is refused by the native reader, not misread', (t) => {
  const full = httpBytes(new HttpResponse(200, [['A', 'b']], 'body'))
  for (let n = 0; n < full.length; n++) t.throws(() => native.wireEcho('http', full.subarray(0, n)), { message: /truncated|unknown|empty/ }, `cut at ${n}`)
})

// ---- the pipeline's events and the wire kinds ----

/** `PipelineEvent`'s members (a `const enum`, so read from its source), by name. */
function pipelineEvents(): Record<string, number> {
  const file = join(__dirname, '..', 'src', 'events.ts')
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  const out: Record<string, number> = {}
  source.forEachChild((node) => {
    if (!ts.isEnumDeclaration(node) || node.name.text !== 'PipelineEvent') return
    for (const m of node.members) out[m.name.getText(source)] = Number((m.initializer as ts.NumericLiteral).text)
  })
  return out
}

/** The wire kind a pipeline event travels as, by the names' rule: `Channel` dropped, a read or write as its bytes, the handler method's verb dropped. */
const RENAMED: Record<string, string> = { ChannelRead: 'ReadBytes', Write: 'WriteBytes', UserEventTriggered: 'UserEvent', ExceptionCaught: 'Exception' }
const wireName = (event: string) => RENAMED[event] ?? event.replace(/^Channel/, '')

test('every pipeline event maps to the wire kind of its name, and back', (t) => {
  const events = pipelineEvents()
  const kinds = PROTOCOL.WireKind as Record<string, number>
  t.is(Object.keys(events).length, 13)
  t.is(WIRE_OF_EVENT.length, Object.keys(events).length)
  for (const [name, ev] of Object.entries(events)) {
    const kind = kinds[wireName(name)]
    t.not(kind, undefined, `no wire kind named ${wireName(name)} for ${name}`)
    t.is(WIRE_OF_EVENT[ev], kind, name)
    t.is(EVENT_OF_WIRE[kind], ev, `${wireName(name)} back to ${name}`)
  }
  // The other kinds JS receives as reads and writes: values and codec messages.
  for (const k of ['ReadValue', 'ReadResp', 'ReadHttp', 'ReadWs']) t.is(EVENT_OF_WIRE[kinds[k]], events.ChannelRead, k)
  t.is(EVENT_OF_WIRE[kinds.WriteValue], events.Write)
})
