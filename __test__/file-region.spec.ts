// FileRegion: files written to channels without passing through JS, as a plain write (sendfile)
// between byte writes, and as an HTTP response's body (Content-Length, HEAD, pipelining) read by
// node:http; the descriptor's ownership (closed after the write, on a closed channel, on
// close()); and the errors of bad regions.
import test from 'ava'
import { createHash } from 'node:crypto'
import { closeSync, mkdtempSync, openSync, readdirSync, readlinkSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FileRegion, HttpResponse, HttpServerCodec, type HttpRequest } from '../index'
import { collect, loopFor, netClient, pattern, serve, until } from './channel-helpers'
import { keptAliveGet } from './http-helpers'

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')
const openFds = () => readdirSync('/proc/self/fd').length
/** Descriptors of this process open on `path`. */
const fdsOn = (path: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path
    } catch {
      return false
    }
  }).length

function tempFile(t: { teardown(f: () => void): void }, bytes: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'netloop-region-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'data.bin')
  writeFileSync(path, bytes)
  return path
}

test.serial('a file region between byte writes reaches the peer in order and intact, and its descriptor is closed', async (t) => {
  const loop = loopFor(t)
  const content = pattern(4 * 1024 * 1024 + 7, 5)
  const path = tempFile(t, content)
  const results: Array<Promise<void>> = []
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('send', {
      channelActive: (ctx) => {
        results.push(ctx.write(Buffer.from('HEAD'), ctx.newPromise()).then(() => {}))
        results.push(ctx.write(FileRegion.open(path, { position: 100, count: content.length - 200 }), ctx.newPromise()).then(() => {}))
        results.push(ctx.writeAndFlush(Buffer.from('TAIL'), ctx.newPromise()).then(() => void ctx.close()))
      },
    })
  })
  const fds = openFds()
  const s = await netClient(t, port)
  const got = collect(s)
  await got.ended
  const data = got.data()
  t.is(data.length, 8 + content.length - 200)
  t.is(data.subarray(0, 4).toString(), 'HEAD')
  t.is(sha(data.subarray(4, data.length - 4)), sha(content.subarray(100, content.length - 100)))
  t.is(data.subarray(data.length - 4).toString(), 'TAIL')
  await Promise.all(results)
  await until(() => openFds() <= fds, 'the region\'s descriptor closed')
  t.pass()
})

test.serial('an HTTP response with a FileRegion body is framed by Content-Length; HEAD gets the length and no body', async (t) => {
  const loop = loopFor(t)
  const content = pattern(1_500_000, 9)
  const path = tempFile(t, content)
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('files', {
      channelRead: (ctx, req: HttpRequest) => {
        const res = req.url === '/file' ? new HttpResponse(200, { 'content-type': 'application/octet-stream' }, FileRegion.open(path)) : new HttpResponse(200, {}, req.url)
        ctx.writeAndFlush(res)
      },
    }),
  )
  const get = await keptAliveGet(t, port)
  const [a, file, head, z] = await Promise.all([get('/a'), get('/file'), get('/file', 'HEAD'), get('/z')])
  t.is(a.body.toString(), '/a')
  t.is(file.status, 200)
  t.is(file.length, String(content.length))
  t.is(sha(file.body), sha(content))
  t.is(head.length, String(content.length))
  t.is(head.body.length, 0)
  t.is(z.body.toString(), '/z')
})

test.serial('a region is sent once: a second write throws ERR_FILE_REGION_SENT; close() releases an unsent one', async (t) => {
  const loop = loopFor(t)
  const path = tempFile(t, pattern(1000, 1))
  const sent: Array<Promise<void>> = []
  let second: unknown
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('send', {
      channelActive: (ctx) => {
        const r = FileRegion.open(path)
        sent.push(ctx.writeAndFlush(r, ctx.newPromise()).then(() => {}))
        try {
          ctx.writeAndFlush(r)
        } catch (e) {
          second = e
        }
        t.is(r.fd, -1)
      },
    })
  })
  const s = await netClient(t, port)
  const got = collect(s)
  await until(() => got.data().length === 1000, 'the first write arrived')
  await Promise.all(sent)
  t.is((second as { code?: string })?.code, 'ERR_FILE_REGION_SENT')
  const fds = openFds()
  const unsent = FileRegion.open(path)
  t.is(openFds(), fds + 1)
  unsent.close()
  unsent.close()
  t.is(openFds(), fds)
  t.is(unsent.fd, -1)
})

test.serial('a region written to a closed channel fails with ERR_CHANNEL_CLOSED and its descriptor is closed', async (t) => {
  const loop = loopFor(t)
  const path = tempFile(t, pattern(1000, 2))
  const { port, children } = await serve(t, loop, () => {})
  const s = await netClient(t, port)
  await until(() => children.length === 1, 'accepted')
  const ch = children[0]
  s.destroy()
  await until(() => !ch.isActive, 'the server side saw the close')
  await ch.closeFuture
  const fds = openFds()
  const r = FileRegion.open(path)
  const err = await t.throwsAsync(async () => void (await ch.writeAndFlush(r, ch.newPromise())))
  t.is((err as { code?: string }).code, 'ERR_CHANNEL_CLOSED')
  await until(() => openFds() === fds, 'the descriptor closed')
  t.pass()
})

test.serial('a file truncated after its region was made fails the write and closes the channel', async (t) => {
  const loop = loopFor(t)
  const path = tempFile(t, pattern(200_000, 3))
  let failure: unknown
  const { port } = await serve(t, loop, (ch) => {
    ch.pipeline.addLast('send', {
      channelActive: (ctx) => {
        const r = FileRegion.open(path)
        truncateSync(path, 50_000)
        ctx.writeAndFlush(r, ctx.newPromise()).then(undefined, (e: unknown) => (failure = e))
      },
    })
  })
  const s = await netClient(t, port)
  const got = collect(s)
  await got.ended
  t.is(got.data().length, 50_000)
  await until(() => failure !== undefined, 'the write failed')
  t.regex(String((failure as Error).message), /truncated/)
})

test.serial('bad regions are refused when made, with node:fs codes and NetloopErrors', (t) => {
  const path = tempFile(t, pattern(100, 4))
  t.is(t.throws(() => FileRegion.open(path + '.missing'))?.code, 'ENOENT')
  t.is(t.throws(() => FileRegion.open(tmpdir()))?.code, 'ERR_INVALID_ARG_VALUE')
  t.is(t.throws(() => FileRegion.open(path, { position: 101 }))?.code, 'ERR_OUT_OF_RANGE')
  t.is(t.throws(() => FileRegion.open(path, { position: 50, count: 51 }))?.code, 'ERR_OUT_OF_RANGE')
  t.is(t.throws(() => FileRegion.open(path, { count: -1 }))?.code, 'ERR_OUT_OF_RANGE')
  const fd = openSync(path, 'r')
  const r = new FileRegion(fd, 10)
  t.is(r.count, 90)
  t.is(t.throws(() => new HttpResponse(200, {}, r).streamed())?.code, 'ERR_HTTP_FILE_BODY')
  t.is(t.throws(() => new HttpResponse(200, {}, r).freeze())?.code, 'ERR_HTTP_FROZEN_FILE')
  r.close()
  t.throws(() => closeSync(fd), { code: 'EBADF' })
})

test.serial('behind an SslHandler a FileRegion body is read and encrypted in pieces; node:https reads it whole', async (t) => {
  const { SslHandler } = await import('../index')
  const { pem, serverContext } = await import('./tls-helpers')
  const loop = loopFor(t)
  const content = pattern(5 * 1024 * 1024 + 3, 6)
  const path = tempFile(t, content)
  const ctx = serverContext()
  const { port } = await serve(t, loop, (ch) =>
    void ch.pipeline
      .addLast('tls', new SslHandler(ctx))
      .addLast('http', new HttpServerCodec())
      .addLast('files', { channelRead: (c, req: HttpRequest) => c.writeAndFlush(req.url === '/file' ? new HttpResponse(200, {}, FileRegion.open(path)) : new HttpResponse(200, {}, req.url)) }),
  )
  const get = await keptAliveGet(t, port, { ca: pem('ca.pem'), host: 'localhost' })
  const [a, file, z] = await Promise.all([get('/a'), get('/file'), get('/z')])
  t.is(a.body.toString(), '/a')
  t.is(sha(file.body), sha(content))
  t.is(z.body.toString(), '/z')
})

test.serial('a SharedFile is opened once for many regions, each written any number of times; close() frees it after the writes made', async (t) => {
  const { SharedFile } = await import('../index')
  const loop = loopFor(t)
  const content = pattern(300_000, 11)
  const path = tempFile(t, content)
  const file = SharedFile.open(path)
  t.is(file.size, content.length)
  const whole = file.region()
  const tail = file.region(content.length - 10)
  t.is(tail.count, 10)
  t.is(t.throws(() => file.region(0, content.length + 1))?.code, 'ERR_OUT_OF_RANGE')
  const server = await serve(t, loop, (ch) =>
    void ch.pipeline.addLast('http', new HttpServerCodec()).addLast('files', {
      channelRead: (ctx, req: HttpRequest) => ctx.writeAndFlush(new HttpResponse(200, {}, req.url === '/tail' ? tail : whole)),
    }),
  )
  const get = await keptAliveGet(t, server.port)
  const bodies = await Promise.all(Array.from({ length: 20 }, (_, i) => get(i % 5 === 4 ? '/tail' : '/')))
  bodies.forEach((b, i) => t.is(sha(b.body), sha(i % 5 === 4 ? content.subarray(content.length - 10) : content)))
  t.is(fdsOn(path), 1, 'one descriptor for the file, whatever the number of regions and writes')
  t.is(whole.fd, -1)
  whole.close() // nothing to close: the shared file is the region's
  t.true(file.isOpen)
  file.close()
  t.false(file.isOpen)
  t.is(t.throws(() => file.region())?.code, 'ERR_FILE_CLOSED')
  await until(() => fdsOn(path) === 0, 'the shared file closed')
  t.pass()
})

test.serial('an HttpClientRequest whose body is a FileRegion uploads the file with Content-Length; node:http receives it whole', async (t) => {
  const http = await import('node:http')
  const { HttpClientCodec, HttpClientRequest, HttpClientResponse, Bootstrap } = await import('../index')
  const { listenNode } = await import('./http-helpers')
  const loop = loopFor(t)
  const content = pattern(2 * 1024 * 1024 + 5, 12)
  const path = tempFile(t, content)
  const port = await listenNode(
    t,
    http.createServer((req, res) => {
      const h = createHash('sha256')
      let n = 0
      req.on('data', (d: Buffer) => {
        h.update(d)
        n += d.length
      })
      req.on('end', () => res.end(`${req.headers['content-length']} ${n} ${h.digest('hex')}`))
    }),
  )
  const answers: string[] = []
  const ch = await new Bootstrap()
    .group(loop)
    .handler((c) => void c.pipeline.addLast('http', new HttpClientCodec({ host: '127.0.0.1' })).addLast('app', { channelRead: (_ctx, res: HttpClientResponse) => void answers.push(res.body.toString()) }))
    .connect(port, '127.0.0.1')
  t.teardown(() => ch.close())
  ch.write(new HttpClientRequest('PUT', '/a', {}, FileRegion.open(path)))
  ch.writeAndFlush(new HttpClientRequest('PUT', '/b', {}, FileRegion.open(path, { position: 5, count: 100 })))
  await until(() => answers.length === 2, 'both answers')
  t.is(answers[0], `${content.length} ${content.length} ${sha(content)}`)
  t.is(answers[1], `100 100 ${sha(content.subarray(5, 105))}`)
  t.is(t.throws(() => new HttpClientRequest('PUT', '/c', {}, FileRegion.open(path)).streamed())?.code, 'ERR_HTTP_FILE_BODY')
})
