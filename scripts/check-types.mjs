// Fails when the committed index.d.ts differs from what tsc makes of index.ts.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const out = mkdtempSync(join(tmpdir(), 'netloop-dts-'))
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--emitDeclarationOnly', '--outDir', out], { stdio: 'inherit' })
const fresh = readFileSync(join(out, 'index.d.ts'), 'utf8')
const committed = readFileSync('index.d.ts', 'utf8')
if (fresh !== committed) {
  console.error('index.d.ts is out of date with index.ts: run `npm run build:ts` and commit index.d.ts')
  process.exit(1)
}
console.log('index.d.ts matches index.ts')
