export * from './index.js'
