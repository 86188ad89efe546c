// Packs the package as it would be published, installs the tarball into an empty project
// (no Rust, no build step: the prebuilt addon for this platform is inside), and runs a task
// and a timer through it.
//
//   npm run check:pack
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const dir = mkdtempSync(join(tmpdir(), 'netloop-pack-'))
const [{ filename }] = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', dir], { encoding: 'utf8' }))
writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true }))
execFileSync(npm, ['install', '--no-audit', '--no-fund', '--offline', join(dir, filename)], { cwd: dir, stdio: 'inherit' })
const out = execFileSync(
  process.execPath,
  [
    '-e',
    `const { EventLoop } = require('netloop')
     const loop = new EventLoop()
     loop.execute(() => console.log('task'))
     loop.schedule(() => { console.log('timer'); loop.shutdownGracefully(0, 100).then(() => console.log(loop.state)) }, 5)`,
  ],
  { cwd: dir, encoding: 'utf8', env: { ...process.env, PATH: '/usr/bin:/bin' } },
)
if (out !== 'task\ntimer\nterminated\n') {
  console.error(`unexpected output from the installed package:\n${out}`)
  process.exit(1)
}
// Channels too: a native line decoder and a JS handler, a netloop client talking to it.
const echo = execFileSync(
  process.execPath,
  [
    '-e',
    `const { EventLoop, ServerBootstrap, Bootstrap, LineBasedFrameDecoder } = require('netloop')
     ;(async () => {
       const loop = new EventLoop()
       const server = await new ServerBootstrap().group(loop).childHandler((ch) => {
         ch.pipeline.addLast('lines', new LineBasedFrameDecoder(64)).addLast('echo', { channelRead: (ctx, m) => ctx.writeAndFlush(m) })
       }).bind(0, '127.0.0.1')
       const ch = await new Bootstrap().group(loop).handler((c) => c.pipeline.addLast('print', {
         channelRead: async (ctx, m) => { console.log(m.toString()); await ctx.close(); await loop.shutdownGracefully(0, 100) },
       })).connect(server.localAddress.port, '127.0.0.1')
       ch.writeAndFlush('line echoed\\n')
     })()`,
  ],
  { cwd: dir, encoding: 'utf8', timeout: 20_000, env: { ...process.env, PATH: '/usr/bin:/bin' } },
)
if (echo !== 'line echoed\n') {
  console.error(`unexpected channel output from the installed package:\n${echo}`)
  process.exit(1)
}
rmSync(dir, { recursive: true, force: true })
console.log(`the packed package (${filename}) installs without a build and runs`)
