// Fails when the declarations the package publishes differ from what tsc makes of the
// TypeScript sources. The .d.ts files are build output (`npm run build:ts`, which `npm install`
// runs through `prepare`), not committed: this packs the main package the way a release does
// (scripts/pack.mjs) and compares every declaration file in the tarball with a fresh
// `tsc --emitDeclarationOnly`: each emitted file must be packed with the same text, and the
// tarball must carry no tsc declaration that the sources no longer make (a stale file left in
// the working tree). Hand-written or napi-generated ones (`index.d.mts`, `native.d.ts`) are
// not tsc's and are checked by check:pack and check:generated instead.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { packRelease, root } from './pack.mjs'

/** The .d.ts files under `dir` (relative paths): index.d.ts and those of src/ and src/generated/. */
function declarations(dir) {
  const list = (sub) => (existsSync(join(dir, sub)) ? readdirSync(join(dir, sub)).filter((f) => f.endsWith('.d.ts')).map((f) => `${sub}/${f}`) : [])
  return [...(existsSync(join(dir, 'index.d.ts')) ? ['index.d.ts'] : []), ...list('src'), ...list('src/generated')]
}

const work = mkdtempSync(join(tmpdir(), 'netloop-dts-'))
try {
  const emitted = join(work, 'emitted')
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json'), '--emitDeclarationOnly', '--outDir', emitted], { stdio: 'inherit' })
  const packs = join(work, 'packs')
  const { main } = packRelease({ dest: packs })
  const unpacked = join(work, 'unpacked')
  mkdirSync(unpacked)
  execFileSync('tar', ['-xzf', main, '-C', unpacked])
  const published = join(unpacked, 'package')
  const fresh = declarations(emitted)
  const packed = new Set(declarations(published))
  const stale = fresh.filter((f) => !packed.has(f) || readFileSync(join(emitted, f), 'utf8') !== readFileSync(join(published, f), 'utf8'))
  const extra = [...packed].filter((f) => !fresh.includes(f))
  if (stale.length > 0 || extra.length > 0) {
    if (stale.length > 0) console.error(`the packed declarations are out of date with the TypeScript sources: ${stale.join(', ')}; run \`npm run build:ts\``)
    if (extra.length > 0) console.error(`the package would publish declarations the sources no longer make: ${extra.join(', ')}; delete them`)
    process.exitCode = 1 // not process.exit(): the finally below removes the temporary directory
  } else {
    console.log(`the packed package's ${fresh.length} declaration files match the TypeScript sources`)
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
