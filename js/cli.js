// `@archmax-ai/harness/cli`: the `archmax` command line as a function.
export { runCli } from './native.js'
