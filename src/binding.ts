/**
 * The native addon, loaded once, through Node's CommonJS loader. On a platform without a prebuilt binary the napi-rs loader's
 * message ("npm has a bug related to optional dependencies") is misleading: this says which
 * platform is missing and which ones exist.
 */
import { createRequire } from 'node:module'
import type * as Native from '../native'

/** Targets a prebuilt binary exists for (package.json `napi.targets`). */
export const SUPPORTED_PLATFORMS = ['linux-x64-gnu', 'linux-arm64-gnu']

function platformName(): string {
  let abi = ''
  if (process.platform === 'linux') {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined
    abi = report?.header?.glibcVersionRuntime ? '-gnu' : '-musl'
  }
  return `${process.platform}-${process.arch}${abi}`
}

function load(): typeof Native {
  try {
    // Node's own CommonJS `require`, not the module's: when an ES module loader (tsx running
    // a `.cts` file on Node 20) loads this file, the `require` it gets cannot load a `.node`
    // file, so the napi-rs loader would find no binary although one is installed.
    return createRequire(__filename)('../native') as typeof Native
  } catch (cause) {
    const here = platformName()
    const err = new Error(
      `netloop: no native binary for ${here} (Node ${process.version}). Prebuilt binaries exist for: ${SUPPORTED_PLATFORMS.join(', ')}. ` +
        `On a supported platform, reinstall so that the optional dependency netloop-${here} is installed; elsewhere, build from source with Rust (npm run build).`,
    ) as Error & { code: string; cause: unknown }
    err.code = 'ERR_NETLOOP_UNSUPPORTED_PLATFORM'
    err.cause = cause
    throw err
  }
}

export const native = load()
