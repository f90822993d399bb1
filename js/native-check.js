// Hand-written (index.js is generated). Runs before the generated loader (native.js imports it
// first) and loads the native addon the way index.js will: `./harness.<platform>.node` beside it
// (a local build), else the platform package `@archmax-ai/harness-<platform>`. Node caches the
// addon, so index.js then gets the same module. When nothing loads, it throws an error that
// names this platform, the package that was expected and how to install it, instead of
// napi's "npm has a bug related to optional dependencies".
import { createRequire } from 'node:module'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { currentPlatform, isMusl, SUPPORTED } from './native-platform.js'

const require = createRequire(import.meta.url)
const pkg = require('../package.json')

function describe() {
  const libc = process.platform === 'linux' ? (isMusl() ? ', musl' : ', glibc') : ''
  return `${process.platform} ${process.arch}${libc}, Node ${process.version}`
}

function fail(message, cause) {
  const error = new Error(message)
  error.code = 'ERR_ARCHMAX_NATIVE_BINDING'
  if (cause) error.cause = cause
  return error
}

function check() {
  // napi's own override (a binding at a path of the user's choosing): index.js handles it.
  if (process.env.NAPI_RS_NATIVE_LIBRARY_PATH) return
  const platform = currentPlatform()
  const binary = `${pkg.napi.binaryName}.${platform}.node`
  const expected = `${pkg.napi.packageName ?? pkg.name}-${platform}`
  const local = fileURLToPath(new URL(`../${binary}`, import.meta.url))
  if (existsSync(local)) {
    try {
      require(local)
      return
    } catch (e) {
      throw fail(`${pkg.name}: the native addon ${local} does not load on this machine (${describe()}): ${e.message}`, e)
    }
  }
  if (!SUPPORTED.includes(platform)) {
    throw fail(
      `${pkg.name} ${pkg.version} has no native build for this platform (${platform}: ${describe()}). ` +
        `Supported: ${SUPPORTED.join(', ')}. ` +
        `On another platform, build it from source (Rust and Node: npm ci && npm run build in a clone of ${pkg.repository?.url ?? 'the repository'}).`,
    )
  }
  let entry
  try {
    entry = require.resolve(expected)
  } catch (e) {
    throw fail(
      `${pkg.name} ${pkg.version}: the native addon for this platform (${platform}: ${describe()}) is missing: ` +
        `the package ${expected} is not installed. npm installs it through ${pkg.name}'s optionalDependencies; ` +
        `it is left out when optional dependencies are omitted (--omit=optional, --no-optional) or the lockfile ` +
        `was made on another platform. Install it: npm install ${expected}@${pkg.version}`,
      e,
    )
  }
  try {
    require(entry)
  } catch (e) {
    let version = '?'
    try {
      version = require(`${expected}/package.json`).version
    } catch {}
    throw fail(
      `${pkg.name} ${pkg.version}: ${expected} ${version} is installed but its addon does not load on this machine ` +
        `(${describe()}): ${e.message}` +
        (version !== pkg.version ? `. Its version differs from ${pkg.name}'s: npm install ${expected}@${pkg.version}` : ''),
      e,
    )
  }
}

check()
