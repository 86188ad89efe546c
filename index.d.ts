/**
 * netloop: Netty's event-loop system for Node.js.
 *
 * The front door: the API lives in `src/`, one module per concept.
 */
export { NetloopError } from './src/errors';
export { EventLoop, ScheduledTask, type EventLoopOptions, type EventLoopState } from './src/loop';
export { EventLoopGroup } from './src/group';
