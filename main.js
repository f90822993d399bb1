// The package entry: the generated binding (index.js) and the hand-written agent API (agent.js).
export * from './index.js'
export * from './agent.js'
