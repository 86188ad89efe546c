/**
 * The file region layout written by JS and read natively, alone and as the body of an HTTP
 * response or client request (wire-layouts-helpers.ts says how).
 */
import test from 'ava'
import { fstatSync } from 'node:fs'

import { HttpResponse } from '../src/http'
import { HttpClientRequest } from '../src/http-client'
import { FileRegion, REGION_BYTES, writeRegion } from '../src/file-region'
import { httpBytes } from '../src/http-wire'
import { echo, hex, openFile } from './wire-layouts-helpers'

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
