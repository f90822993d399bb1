// Hand-written. The platform names the packages use, with no side effect: native-check.js (which
// loads the addon when imported) and the packaging scripts (scripts/pack.sh,
// scripts/smoke-install.sh, which run where no addon is built) read them from here.
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'

const require = createRequire(import.meta.url)
const pkg = require('../package.json')

const ARCH = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm', riscv64: 'riscv64' }

/** A napi target triple as napi names its package suffix (`x86_64-unknown-linux-gnu` → `linux-x64-gnu`). */
export function platformOfTriple(triple) {
  const parts = triple.split('-')
  const arch = ARCH[parts[0]] ?? parts[0]
  const rest = parts.slice(1).filter((p) => p !== 'unknown' && p !== 'pc' && p !== 'apple')
  const os = rest[0] === 'windows' ? 'win32' : rest[0]
  const abi = rest[1]
  return abi ? `${os}-${arch}-${abi}` : `${os}-${arch}`
}

export function isMusl() {
  try {
    return readFileSync('/usr/bin/ldd', 'utf8').includes('musl')
  } catch {
    // As index.js decides it: a glibc runtime in the report, else a musl library loaded.
    const report = process.report?.getReport?.()
    if (!report || report.header?.glibcVersionRuntime) return false
    return (report.sharedObjects ?? []).some((f) => f.includes('libc.musl-') || f.includes('ld-musl-'))
  }
}

/** This process's platform, spelled as the platform packages are (`linux-x64-gnu`, `darwin-arm64`, …). */
export function currentPlatform() {
  const { platform, arch } = process
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

/** Every platform the package ships a binary for. */
export const SUPPORTED = pkg.napi.targets.map(platformOfTriple)
