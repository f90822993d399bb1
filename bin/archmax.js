#!/usr/bin/env node
// The `archmax` command: a shim over the addon's runCli.
import { interruptCli, runCli } from '../js/native.js'

// Node leaves piped stdio non-blocking; the addon writes to the file
// descriptors directly and would lose output to EAGAIN (napi-rs #1630).
for (const stream of [process.stdout, process.stderr]) {
  if (!stream.isTTY) stream._handle?.setBlocking?.(true)
}

// Ctrl-C or SIGTERM: the first cancels the turn in flight (the CLI says so and reports
// the cancelled turn); a second one, or one while no turn runs, exits at once.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
  process.on(signal, () => {
    if (interruptCli()) process.exit(code)
  })
}

try {
  process.exitCode = await runCli(process.argv.slice(2))
} catch (error) {
  // Only an internal failure of the CLI lands here; usage and command errors are exit codes.
  console.error('archmax failed:', error)
  process.exitCode = 1
}
