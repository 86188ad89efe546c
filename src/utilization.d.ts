/**
 * Event-loop utilization readings, as `performance.eventLoopUtilization()` gives them: what
 * `EventLoop.utilization()` and `EventLoopGroup.utilization()` return.
 */
/**
 * What `EventLoop.utilization()` reports, as `performance.eventLoopUtilization()`: ms the
 * loop's iterations took on its thread (`active`), ms of the rest (`idle`), and
 * `active / (idle + active)`.
 */
export interface LoopUtilization {
    idle: number;
    active: number;
    utilization: number;
}
