// Session resumption against openssl s_client: -sess_out/-sess_in (TLS 1.2 and 1.3), the end
// of resumption at sessionTimeout, and servers sharing ticketKeys.
import test from 'ava'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SslContext } from '../index'
import { until } from './channel-helpers'
import { pem } from './tls-helpers'
import { echoServer, sClient } from './tls-interop-helpers'

for (const [flag, version] of [['-tls1_2', 'TLSv1.2'], ['-tls1_3', 'TLSv1.3']] as const) {
  test(`openssl s_client ${flag} -sess_out then -sess_in resumes the session (Reused)`, async (t) => {
    const { port, sessions } = await echoServer(t)
    const sess = join(mkdtempSync(join(tmpdir(), 'netloop-sess-')), 'session.pem')
    const first = await sClient(port, [flag, '-servername', 'localhost', '-sess_out', sess])
    t.regex(first, new RegExp(`New, ${version.replace('.', '\\.')}`))
    const second = await sClient(port, [flag, '-servername', 'localhost', '-sess_in', sess])
    t.regex(second, new RegExp(`Reused, ${version.replace('.', '\\.')}`), second)
    t.true(second.split('\n').includes('ping-netloop'))
    t.false(sessions[0].resumed)
    await until(() => sessions.length === 2)
    t.true(sessions[1].resumed)
  })
}

test('openssl s_client: sessions resume until sessionTimeout, then get a full handshake (TLS 1.2 ids, TLS 1.3 tickets)', async (t) => {
  const { port } = await echoServer(t, { sessionTimeout: 1 })
  const dir = mkdtempSync(join(tmpdir(), 'netloop-sess-'))
  const flags = [['-tls1_2', 'TLSv1\\.2'], ['-tls1_3', 'TLSv1\\.3']] as const
  for (const [flag, v] of flags) {
    const sess = join(dir, `${flag}.pem`)
    t.regex(await sClient(port, [flag, '-servername', 'localhost', '-sess_out', sess]), new RegExp(`New, ${v}`))
    t.regex(await sClient(port, [flag, '-servername', 'localhost', '-sess_in', sess]), new RegExp(`Reused, ${v}`), `${flag}: in time`)
  }
  // The issue time has whole seconds: a little over two of them.
  await new Promise((r) => setTimeout(r, 2100))
  for (const [flag, v] of flags) {
    const late = await sClient(port, [flag, '-servername', 'localhost', '-sess_in', join(dir, `${flag}.pem`)])
    t.regex(late, new RegExp(`New, ${v}`), `${flag}: expired`)
    t.true(late.split('\n').includes('ping-netloop'))
  }
  t.throws(() => SslContext.forServer({ cert: pem('server.pem'), key: pem('server.key'), sessionTimeout: 0 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => SslContext.forServer({ cert: pem('server.pem'), key: pem('server.key'), sessionTimeout: 1.5 }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => SslContext.forClient({ sessionTimeout: 60 }), { code: 'ERR_INVALID_ARG_VALUE' })
})

for (const [flag, version] of [['-tls1_2', 'TLSv1.2'], ['-tls1_3', 'TLSv1.3']] as const) {
  test(`openssl s_client ${flag}: a session of one server resumes on another given the same ticketKeys, not on one with other keys`, async (t) => {
    const keys = randomBytes(48)
    // Tickets only: no session cache that a server could resume from on its own.
    const a = await echoServer(t, { ticketKeys: keys, sessionCacheSize: 0 })
    const b = await echoServer(t, { ticketKeys: Buffer.from(keys), sessionCacheSize: 0 })
    const c = await echoServer(t, { ticketKeys: randomBytes(48), sessionCacheSize: 0 })
    const sess = join(mkdtempSync(join(tmpdir(), 'netloop-sess-')), 'session.pem')
    const v = version.replace('.', '\\.')
    const first = await sClient(a.port, [flag, '-servername', 'localhost', '-sess_out', sess])
    t.regex(first, new RegExp(`New, ${v}`))
    const onB = await sClient(b.port, [flag, '-servername', 'localhost', '-sess_in', sess])
    t.regex(onB, new RegExp(`Reused, ${v}`), onB)
    t.true(onB.split('\n').includes('ping-netloop'))
    await until(() => b.sessions.length === 1)
    t.true(b.sessions[0].resumed)
    const onC = await sClient(c.port, [flag, '-servername', 'localhost', '-sess_in', sess])
    t.regex(onC, new RegExp(`New, ${v}`), 'other keys: a full handshake, no error')
    t.true(onC.split('\n').includes('ping-netloop'))
  })
}
