// Bundles a TypeScript example to one CommonJS file for the benchmarks, with the library itself
// (`netloop`, which the examples import as an application does) left to the compiled index.js:
// the benchmarks run plain node (no tsx) and one copy of netloop.
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

export function bundleExample(root, src, out) {
  const esbuild = join(root, 'node_modules', '.bin', 'esbuild')
  const indexJs = JSON.stringify(join(root, 'index.js'))
  const js = execFileSync(esbuild, [src, '--bundle', '--format=cjs', '--platform=node', '--target=node20', '--external:netloop', '--log-level=error'], { encoding: 'utf8' })
  const linked = js.replaceAll('require("netloop")', `require(${indexJs})`)
  if (linked.includes('require("netloop")') || /require\("(\.\.\/)+index"\)/.test(linked) || linked.includes('netloop.linux-x64-gnu.node')) {
    throw new Error(`${src}: the bundle still holds a copy of the library`)
  }
  writeFileSync(out, linked)
}
