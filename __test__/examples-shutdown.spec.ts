import test from 'ava'
import { connect, reader, resp, sleep, startExample } from './example-helpers'

// ---- shutdown ----

for (const name of ['echo', 'resp-server', 'http-hello', 'chat', 'proxy']) {
  test.serial(`${name}: SIGINT closes the connections and exits 0, quietly`, async (t) => {
    const args: string[] = []
    if (name === 'proxy') {
      const echo = await startExample(t, 'echo')
      args.push('--target', `127.0.0.1:${echo.port}`)
    }
    const ex = await startExample(t, name, args)
    const s = await connect(t, ex.port)
    const r = reader(s)
    s.write(name === 'http-hello' ? 'GET / HTTP/1.1\r\n\r\n' : name === 'resp-server' ? 'PING\r\n' : 'hi\n')
    await r.bytes(1)
    ex.proc.kill('SIGINT')
    const code = await Promise.race([ex.exited, sleep(10_000).then(() => 'still running after 10 s')])
    t.is(code, 0)
    await r.closed()
    t.is(ex.stderr(), '')
  })
}
