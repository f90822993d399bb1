export * from './index.js'
export * from './agent.js'
