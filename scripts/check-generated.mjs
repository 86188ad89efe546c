// Fails when a file the native build generates differs from the committed one: `native.d.ts`
// and `native.js` (napi-rs, from crates/node) and `src/generated/` (scripts/gen-protocol.mjs,
// from native.d.ts). Run by `npm test` after the build (`npm install` runs `npm run build`),
// so a change to crates/wire/src/protocol/ (or any #[napi] item) that was built but whose
// generated files were not committed fails here. Compared against git's index, so `git add`
// of the regenerated files is enough; outside a git checkout (an unpacked tarball) it has
// nothing to compare with and says so.
import { spawnSync } from 'node:child_process'

import { readdirSync } from 'node:fs'

const files = ['native.d.ts', 'native.js', ...readdirSync('src/generated').filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => `src/generated/${f}`)]
const inGit = spawnSync('git', ['rev-parse', '--is-inside-work-tree'], { encoding: 'utf8' })
if (inGit.status !== 0 || inGit.stdout.trim() !== 'true') {
  console.log(`not a git checkout: ${files.join(', ')} not compared`)
} else {
  const diff = spawnSync('git', ['diff', '--exit-code', '--stat', '--', ...files], { encoding: 'utf8' })
  if (diff.status !== 0) {
    console.error(`${diff.stdout}${diff.stderr}generated files differ from the committed ones; run \`npm run build:native\` and commit them`)
    process.exitCode = 1
  } else {
    console.log(`${files.join(', ')} match the committed files`)
  }
}
