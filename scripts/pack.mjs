// Packs netloop the way it is published (docs/release.md): the main package and one package per
// platform binary (napi-rs's layout; each platform's package.json and README are made here from
// the main package.json, nothing of them is committed).
//
//   npm run pack:release [-- --out <dir>] [-- --require-all]
//   node scripts/pack.mjs --sync-optional-dependencies   (part of the `version` script)
//
// Nothing is packed from the repository itself. Each package is copied into a staging directory
// and packed there with `npm pack --ignore-scripts`:
// - main: the files `npm pack --dry-run` lists for the repository (package.json `files`, README,
//   LICENSE), and a package.json rewritten from a whitelist of fields: no `scripts`,
//   `devDependencies`, `overrides`, `ava` or `napi` reach users (so no `prepare` for npm to run
//   or warn about);
// - per target in package.json `napi.targets`: a package.json and README.md made by
//   `platformPackage` (name `<name>-<platform>`, the main package's version, `os`/`cpu`/`libc`
//   of the target, the binary as `main` and only file), the LICENSE, and
//   `<binaryName>.<platform>.node`, taken from npm/<platform>/ (where `napi artifacts` puts the
//   binaries a release CI downloaded; the folder is not committed) or else from the repository
//   root (where `npm run build` puts the binary for this machine).
// A target whose binary is missing is skipped with a note, or fails with --require-all (release).
// Versions agree by construction; every optionalDependencies entry must have the main package's
// version (`npm version` runs `--sync-optional-dependencies`).
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { parseTriple } from '@napi-rs/cli'

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/** The fields of the repository's package.json that the published one keeps. */
const PUBLISHED_FIELDS = [
  'name', 'version', 'description', 'keywords', 'homepage', 'bugs', 'repository', 'license', 'author',
  'contributors', 'funding', 'type', 'main', 'module', 'types', 'exports', 'engines', 'os', 'cpu', 'libc',
  'files', 'dependencies', 'peerDependencies', 'peerDependenciesMeta', 'optionalDependencies',
]

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'))
}

function pack(dir, dest) {
  const [{ filename }] = JSON.parse(
    execFileSync(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', dest], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }),
  )
  return join(dest, filename)
}

/** The fields a platform package shares with the main package. */
const SHARED_FIELDS = ['description', 'keywords', 'homepage', 'license', 'engines', 'repository', 'bugs']

/**
 * The package of `target`'s binary: `{ platform, binary, manifest, readme }` (napi-rs's layout
 * and field order, as `napi create-npm-dirs` made it).
 */
export function platformPackage(pkg, target) {
  const t = parseTriple(target)
  const binary = `${pkg.napi.binaryName}.${t.platformArchABI}.node`
  const manifest = { name: `${pkg.name}-${t.platformArchABI}`, version: pkg.version, cpu: [t.arch], main: binary, files: [binary] }
  for (const field of SHARED_FIELDS) if (pkg[field] !== undefined) manifest[field] = pkg[field]
  manifest.os = [t.platform]
  if (t.abi === 'gnu') manifest.libc = ['glibc']
  else if (t.abi === 'musl') manifest.libc = ['musl']
  const readme = `# \`${manifest.name}\`\n\nThis is the **${target}** binary for \`${pkg.name}\`\n`
  return { platform: t.platformArchABI, binary, manifest, readme }
}

/** The published package.json of the main package. */
export function publishedManifest(pkg = readJson(join(root, 'package.json'))) {
  const out = {}
  for (const field of PUBLISHED_FIELDS) if (pkg[field] !== undefined) out[field] = pkg[field]
  return out
}

/**
 * Packs the main package and the platform packages into `dest`. Returns the tarball paths:
 * `{ main, platforms: [{ name, target, tarball }] }`.
 */
export function packRelease({ dest, requireAll = false } = {}) {
  const pkg = readJson(join(root, 'package.json'))
  const staging = mkdtempSync(join(tmpdir(), 'netloop-stage-'))
  try {
    mkdirSync(dest, { recursive: true })
    const platforms = []
    for (const target of pkg.napi.targets) {
      // napi-rs's own naming: x86_64-unknown-linux-gnu → linux-x64-gnu
      const { platform, binary, manifest, readme } = platformPackage(pkg, target)
      const dir = join(root, 'npm', platform)
      if (pkg.optionalDependencies?.[manifest.name] !== pkg.version) {
        throw new Error(`pack: package.json optionalDependencies must list ${manifest.name} at ${pkg.version}`)
      }
      const source = [join(dir, binary), join(root, binary)].find((p) => existsSync(p))
      if (!source) {
        if (requireAll) throw new Error(`pack: no ${binary} (neither in npm/${platform}/ nor in the repository root)`)
        console.log(`pack: skipping ${manifest.name}: no ${binary} built on this machine`)
        continue
      }
      const stage = join(staging, platform)
      mkdirSync(stage)
      writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
      writeFileSync(join(stage, 'README.md'), readme)
      copyFileSync(join(root, 'LICENSE'), join(stage, 'LICENSE'))
      copyFileSync(source, join(stage, binary))
      platforms.push({ name: manifest.name, target, tarball: pack(stage, dest) })
    }
    if (platforms.length === 0) throw new Error('pack: no platform binary found: run `npm run build` first')

    // The main package: exactly the files npm would publish from the repository, package.json aside.
    const [{ files }] = JSON.parse(
      execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    )
    const stage = join(staging, 'main')
    for (const { path } of files) {
      if (path === 'package.json') continue
      if (path.endsWith('.node')) throw new Error(`pack: the main package must not carry a binary (${path}): check package.json files`)
      mkdirSync(dirname(join(stage, path)), { recursive: true })
      copyFileSync(join(root, path), join(stage, path))
    }
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(publishedManifest(pkg), null, 2)}\n`)
    return { main: pack(stage, dest), platforms }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

/**
 * Sets package.json `optionalDependencies` to every platform package at the package's version
 * (run by the `version` script).
 */
export function syncOptionalDependencies() {
  const path = join(root, 'package.json')
  const pkg = readJson(path)
  pkg.optionalDependencies = { ...pkg.optionalDependencies }
  for (const target of pkg.napi.targets) pkg.optionalDependencies[platformPackage(pkg, target).manifest.name] = pkg.version
  writeFileSync(path, `${JSON.stringify(pkg, null, 2)}\n`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  if (args.includes('--sync-optional-dependencies')) {
    syncOptionalDependencies()
    process.exit(0)
  }
  const out = args.includes('--out') ? resolve(args[args.indexOf('--out') + 1]) : root
  const { main, platforms } = packRelease({ dest: out, requireAll: args.includes('--require-all') })
  for (const p of [...platforms.map((p) => p.tarball), main]) console.log(p)
}
