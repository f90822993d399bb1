// Shared helpers for the node:test suites.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
/** The example workspace. */
export const EXAMPLE = join(ROOT, 'examples', 'customer-support')

/** A temp workspace holding `files` (workspace-relative path → text). */
export function workspace(files) {
  const dir = mkdtempSync(join(tmpdir(), 'archmax-test-'))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

/** A workflow that fails validation: a transition to an undefined state (line 9). */
export const BROKEN_SPEC = `title: Broken
instructions: Fails on purpose.
mounts:
  allow_always: []
states:
  start:
    triggers: { manual: }
    transitions:
      - to: nowhere
`
