// Hand-written: the generated binding (index.js), reached only through here. native-check.js
// runs first (ES modules evaluate their imports in order) and fails with a clear message when
// this platform's addon is missing or does not load.
import './native-check.js'
export * from '../index.js'
