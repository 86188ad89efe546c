/**
 * Loading a worker's module. Node 20 does not carry a TypeScript loader given with `--import`
 * into workers, so for TypeScript (a `.ts` module, or netloop itself run from its sources)
 * this registers tsx's hooks in the worker (tsx resolved from the module's location).
 * No netloop module is imported here: the entry shim uses this before it picks the files of
 * netloop to run.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

// TypeScript would turn `import()` into `require()` in CommonJS output; ESM modules need the
// real dynamic import.
export const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<Record<string, unknown>>

let registered = false

/** Registers tsx's CommonJS and ESM hooks in this thread, resolving tsx from `from` (a file URL). */
export async function registerTypeScript(from: string): Promise<void> {
  if (registered) return
  const req = createRequire(from)
  let pkgFile: string
  try {
    pkgFile = req.resolve('tsx/package.json')
  } catch {
    const e = new Error(`${fileURLToPath(from)} is TypeScript: install tsx beside it (npm i -D tsx) or give a compiled .js module`) as Error & { code: string }
    e.code = 'ERR_UNKNOWN_FILE_EXTENSION'
    throw e
  }
  // The ESM entry of `tsx/esm/api` (require.resolve would give its CommonJS variant).
  const pkgExports = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports
  const esmApi = join(dirname(pkgFile), pkgExports['./esm/api'].import.default)
  ;((await importModule(pathToFileURL(esmApi).href)) as { register(): void }).register()
  ;(req('tsx/cjs/api') as { register(): void }).register()
  registered = true
}

/**
 * Loads the module at `url`: CommonJS first, as the main thread loads its modules, so that
 * the module's own imports of netloop resolve to the files this worker already runs (one copy
 * of netloop per thread); an ES module (.mjs/.mts, "type": "module") is imported instead.
 */
export async function loadModule(url: string): Promise<Record<string, unknown>> {
  if (/\.[cm]?tsx?$/.test(new URL(url).pathname)) await registerTypeScript(url)
  if (url.startsWith('file:') && !/\.m[jt]s$/.test(url)) {
    try {
      return createRequire(url)(fileURLToPath(url)) as Record<string, unknown>
    } catch (e) {
      const code = (e as { code?: string }).code
      if (code !== 'ERR_REQUIRE_ESM' && code !== 'ERR_REQUIRE_ASYNC_MODULE') throw e
    }
  }
  return importModule(url)
}
