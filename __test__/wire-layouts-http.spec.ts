/**
 * The HTTP layouts, both directions (wire-layouts-helpers.ts says how): requests, body pieces
 * and client responses written natively and read by JS; responses, body pieces and client
 * requests written by JS and read natively; a request or body piece read natively, passed on
 * by JS (changed or not) and read natively again.
 */
import test from 'ava'

import * as native from '../native'
import { HttpContent, HttpRequest, HttpResponse } from '../src/http'
import { HttpClientRequest, HttpClientResponse } from '../src/http-client'
import { httpBytes, httpInboundBytes, readHttp } from '../src/http-wire'
import { MAX_ID, body, echo, hex, latin1, samples } from './wire-layouts-helpers'

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

test('a layout cut short is refused by the native reader, not misread', (t) => {
  const full = httpBytes(new HttpResponse(200, [['A', 'b']], 'body'))
  for (let n = 0; n < full.length; n++) t.throws(() => native.wireEcho('http', full.subarray(0, n)), { message: /truncated|unknown|empty/ }, `cut at ${n}`)
})
