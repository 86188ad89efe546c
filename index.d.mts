/// <reference types="node" />
// Types of the ESM entry (index.mjs): the same names as the CommonJS entry's types.
import * as netloop from './index.js'

export * from './index.js'
export default netloop
