// Fails when a committed .d.ts (index.d.ts, src/*.d.ts, src/generated/*.d.ts) differs from what tsc makes of the
// TypeScript sources.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const out = mkdtempSync(join(tmpdir(), 'netloop-dts-'))
try {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--emitDeclarationOnly', '--outDir', out], { stdio: 'inherit' })
  const dts = (dir) => readdirSync(join(out, dir)).filter((f) => f.endsWith('.d.ts')).map((f) => `${dir}/${f}`)
  const files = ['index.d.ts', ...dts('src'), ...dts('src/generated')]
  const stale = files.filter((f) => !existsSync(f) || readFileSync(join(out, f), 'utf8') !== readFileSync(f, 'utf8'))
  if (stale.length > 0) {
    console.error(`out of date with the TypeScript sources: ${stale.join(', ')}; run \`npm run build:ts\` and commit them`)
    process.exitCode = 1 // not process.exit(): the finally below removes the temporary directory
  } else {
    console.log(`${files.length} declaration files match the TypeScript sources`)
  }
} finally {
  rmSync(out, { recursive: true, force: true })
}
