// Timers on an attached loop: deadline order, delays, cancellation, periodic schedules.
import test from 'ava'

import { EventLoop } from '../index'
import { countTurns, until, withLoop } from './helpers'

test('timers with equal deadlines run in the order they were scheduled', async (t) => {
  const loop = withLoop(t)
  const order: number[] = []
  for (let i = 0; i < 20; i++) loop.schedule(() => order.push(i), 5)
  await until(() => order.length === 20)
  t.deepEqual(order, [...Array(20).keys()])
})

test('earlier deadlines run first whatever the scheduling order', async (t) => {
  const loop = withLoop(t)
  const order: string[] = []
  loop.schedule(() => order.push('late'), 30)
  loop.schedule(() => order.push('early'), 5)
  await until(() => order.length === 2)
  t.deepEqual(order, ['early', 'late'])
})

test('zero and negative delays are due now', async (t) => {
  const loop = withLoop(t)
  const order: string[] = []
  loop.schedule(() => order.push('zero'), 0)
  loop.schedule(() => order.push('negative'), -50)
  await until(() => order.length === 2)
  t.deepEqual(order, ['zero', 'negative'])
})

test('a timer does not fire before its delay', async (t) => {
  const loop = withLoop(t)
  const started = process.hrtime.bigint()
  let firedAfterNs = 0n
  const task = loop.schedule(() => (firedAfterNs = process.hrtime.bigint() - started), 30)
  await until(() => task.isDone)
  t.true(firedAfterNs >= 29_000_000n, `fired after ${firedAfterNs} ns`)
})

test('cancel stops a pending timer and reports whether it did', async (t) => {
  const loop = withLoop(t)
  let ran = 0
  const task = loop.schedule(() => ran++, 10)
  t.true(task.cancel())
  t.false(task.cancel())
  t.true(task.isCancelled)
  // A later timer firing proves the cancelled one's deadline passed without it running.
  const sentinel = loop.schedule(() => {}, 30)
  await until(() => sentinel.isDone)
  t.is(ran, 0)
  t.false(sentinel.cancel(), 'a timer that already ran cannot be cancelled')
})

test('scheduleAtFixedRate repeats until cancelled', async (t) => {
  const loop = withLoop(t)
  let runs = 0
  const task = loop.scheduleAtFixedRate(() => {
    runs++
    if (runs === 3) task.cancel()
  }, 1, 2)
  t.true(task.periodic)
  await until(() => runs === 3)
  // Five more periods: a periodic task that kept running would have run again by then.
  const sentinel = loop.schedule(() => {}, 10)
  await until(() => sentinel.isDone)
  t.is(runs, 3)
})

test('scheduleWithFixedDelay counts the delay from the end of each run', async (t) => {
  const loop = withLoop(t)
  const ends: bigint[] = []
  const starts: bigint[] = []
  const task = loop.scheduleWithFixedDelay(() => {
    starts.push(process.hrtime.bigint())
    const busyUntil = process.hrtime.bigint() + 10_000_000n
    while (process.hrtime.bigint() < busyUntil) {}
    ends.push(process.hrtime.bigint())
    if (ends.length === 3) task.cancel()
  }, 0, 10)
  await until(() => ends.length === 3)
  for (let i = 1; i < 3; i++) t.true(starts[i] - ends[i - 1] >= 9_000_000n, `gap ${starts[i] - ends[i - 1]} ns`)
})

test.serial('a timer scheduled inside a long task counts its delay from the schedule call', async (t) => {
  const loop = withLoop(t)
  let scheduledAt = 0n
  let firedAt = 0n
  const order: string[] = []
  loop.execute(() => {
    scheduledAt = process.hrtime.bigint()
    loop.schedule(() => {
      firedAt = process.hrtime.bigint()
      order.push('100 ms from its call')
    }, 100)
    const busyUntil = scheduledAt + 300_000_000n
    while (process.hrtime.bigint() < busyUntil) {}
    // Due 50 ms after the task's end: before the first timer if that one counted its 100 ms
    // from the end of the task (or from any later point), after it if from its call. Timers
    // run in deadline order however late the loop gets to them, so no wall-clock bound on
    // when the first one fired is needed (a loaded machine may run it long after 300 ms).
    loop.schedule(() => order.push('50 ms from the end of the task'), 50)
  })
  await until(() => order.length === 2)
  const ms = Number(firedAt - scheduledAt) / 1e6
  t.true(ms >= 100, `fired after ${ms} ms`)
  t.deepEqual(order, ['100 ms from its call', '50 ms from the end of the task'], `the first fired after ${ms} ms`)
})

test('many timers scheduled and cancelled in one go leave nothing behind', async (t) => {
  const loop = withLoop(t)
  let fired = 0
  let cancelledFired = 0
  // Every other timer is cancelled; the cancelled ones are due *before* the kept ones.
  const tasks = Array.from({ length: 5000 }, (_, i) => (i % 2 === 0 ? loop.schedule(() => fired++, 20) : loop.schedule(() => cancelledFired++, 5)))
  for (const task of tasks.filter((_, i) => i % 2 === 1)) t.true(task.cancel())
  await until(() => fired === 2500)
  t.is(cancelledFired, 0)
  t.true(tasks.every((task, i) => (i % 2 === 0 ? task.isDone : task.isCancelled)))
})

test('timers with mixed delays, some cancelled, run in (deadline, schedule order) and cancelled ones never', async (t) => {
  const loop = withLoop(t)
  // A deterministic mix: equal delays (appended in order) and shorter ones behind longer
  // ones (kept in the heap), with every third one cancelled, some of them the earliest.
  let seed = 7
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  const expected: Array<{ at: number; i: number }> = []
  const fired: number[] = []
  const started = performance.now()
  const tasks = []
  for (let i = 0; i < 600; i++) {
    const delay = i % 4 === 0 ? 25 : Math.floor(random() * 40)
    const task = loop.schedule(() => fired.push(i), delay)
    // The timer's own deadline (its stamp of the call plus the delay): a clock read here
    // instead may be off by a GC pause between this line and the schedule call.
    tasks.push({ task, at: task._ms + task._us / 1000, i })
  }
  for (const { task, at, i } of tasks) {
    if (i % 3 === 0) t.true(task.cancel())
    else expected.push({ at, i })
  }
  t.is(loop._pendingTimers, 400, 'cancelled timers left the queue at once')
  await until(() => fired.length === expected.length)
  await new Promise((r) => setTimeout(r, Math.max(0, 50 - (performance.now() - started))))
  t.is(fired.length, expected.length)
  t.deepEqual([...fired].sort((a, b) => a - b), expected.map((e) => e.i))
  // Deadlines are stamps of the calls: an equal deadline keeps the schedule order, and no
  // timer runs before one with a clearly earlier deadline.
  const at = new Map(expected.map((e) => [e.i, e.at]))
  for (let k = 1; k < fired.length; k++) {
    const a = at.get(fired[k - 1])!
    const b = at.get(fired[k])!
    t.true(a <= b + 0.5, `timer ${fired[k - 1]} (at ${a}) ran before ${fired[k]} (at ${b})`)
  }
  t.is(loop._pendingTimers, 0)
})

test('a cancelled timer leaves the queue at once and the loop holds one native timer for all', async (t) => {
  const loop = withLoop(t)
  const tasks = Array.from({ length: 10_000 }, (_, i) => loop.schedule(() => t.fail('cancelled'), 100_000 - i))
  t.is(loop._pendingTimers, 10_000)
  // Applied at the next iteration: the native side arms one timer (the earliest deadline).
  await new Promise((r) => loop.execute(() => r(undefined)))
  t.true(loop._nativeTimers <= 2, `${loop._nativeTimers} native timers for 10 000 JS timers`)
  for (const task of tasks) task.cancel()
  t.is(loop._pendingTimers, 0)
  for (let i = 0; i < 10_000; i++) loop.schedule(() => t.fail('cancelled'), 1000).cancel()
  t.is(loop._pendingTimers, 0)
  await new Promise((r) => loop.execute(() => r(undefined)))
  t.true(loop._nativeTimers <= 2, `${loop._nativeTimers} native timers after cancelling everything`)
})

test('a one-shot timer that is running cannot be cancelled; a periodic one can', async (t) => {
  const loop = withLoop(t)
  const results: Array<boolean> = []
  const once: { task?: ReturnType<EventLoop['schedule']> } = {}
  once.task = loop.schedule(() => {
    results.push(once.task!.isDone, once.task!.cancel(), once.task!.isCancelled)
  }, 0)
  let runs = 0
  const periodic = loop.scheduleWithFixedDelay(() => {
    runs++
    results.push(periodic.cancel(), periodic.isCancelled)
  }, 0, 1)
  await until(() => results.length === 5)
  t.deepEqual(results, [true, false, false, true, true])
  const sentinel = loop.schedule(() => {}, 10)
  await until(() => sentinel.isDone)
  t.is(runs, 1)
})

test.serial('a fixed-rate timer catches up after an overrun, a fixed-delay one does not', async (t) => {
  const loop = withLoop(t)
  const busy = (ms: number) => {
    const until = performance.now() + ms
    while (performance.now() < until) {}
  }
  const rate: number[] = []
  const deadlines: number[] = []
  const turnsAt: number[] = []
  const delay: number[] = []
  const counter = countTurns()
  t.teardown(() => counter.stop())
  const r = loop.scheduleAtFixedRate(() => {
    rate.push(performance.now())
    // getDelay() while it runs: how far past this run's deadline it is.
    deadlines.push(performance.now() + r.getDelay())
    turnsAt.push(counter.turns)
    if (rate.length === 1) busy(60)
    if (rate.length === 6) r.cancel()
  }, 0, 10)
  await until(() => rate.length === 6)
  const seen = `runs at ${rate.map((x) => (x - rate[0]).toFixed(1))} ms, deadlines ${deadlines.map((x) => (x - deadlines[0]).toFixed(1))} ms, turns of Node's loop ${turnsAt.map((x) => x - turnsAt[0])}`
  // The deadlines stay on the grid of the first one (run k at (k - 1) * 10 ms), whenever the
  // runs happened: a rate counted from each run would put run 2 at 70 ms and the next ones
  // 10 ms after whenever the one before ran.
  for (let k = 1; k < 6; k++) t.true(Math.abs(deadlines[k] - deadlines[0] - 10 * k) < 1, seen)
  for (let k = 0; k < 6; k++) t.true(rate[k] >= deadlines[k] - 0.5, `run ${k + 1} ran before its deadline; ${seen}`)
  // Runs 2..6 were due at 10..50 ms, all passed when the 60 ms run ended: they run back to
  // back, one per loop iteration. Without the catch-up each would wait 10 ms for its
  // deadline while the loop spins through setImmediate turns (thousands). Counted in turns,
  // not in ms: a loaded machine delays the runs without adding turns between them.
  t.true(turnsAt[5] - turnsAt[1] < 20, seen)
  t.true(rate[1] - rate[0] >= 60 - 0.5, seen)
  t.log(seen)
  const d = loop.scheduleWithFixedDelay(() => {
    delay.push(performance.now())
    if (delay.length === 1) busy(30)
    if (delay.length === 3) d.cancel()
  }, 0, 10)
  await until(() => delay.length === 3)
  t.true(delay[1] - delay[0] >= 30 + 10 - 0.5, `fixed delay gaps ${delay[1] - delay[0]}`)
  t.true(delay[2] - delay[1] >= 10 - 0.5, `fixed delay gaps ${delay[2] - delay[1]}`)
})

test('scheduling from a timer callback and shutting down from one work', async (t) => {
  const errors: unknown[] = []
  const loop = new EventLoop({ onTaskError: (e) => errors.push(e) })
  const order: string[] = []
  let periodicRuns = 0
  const periodic = loop.scheduleAtFixedRate(() => {
    periodicRuns++
  }, 0, 1)
  loop.schedule(() => {
    order.push('first')
    loop.schedule(() => order.push('from a timer'), 0)
  }, 0)
  await until(() => order.length === 2)
  let done: Promise<void> | undefined
  const late = loop.schedule(() => t.fail('cancelled by the shutdown'), 50)
  loop.schedule(() => {
    done = loop.shutdownGracefully(0, 1000)
    t.throws(() => loop.schedule(() => {}, 0), { code: 'ERR_REJECTED_EXECUTION' })
  }, 0)
  await until(() => done !== undefined)
  await done
  t.true(late.isCancelled)
  t.true(periodic.isCancelled)
  const runs = periodicRuns
  await new Promise((r) => setTimeout(r, 20))
  t.is(periodicRuns, runs)
  t.deepEqual(order, ['first', 'from a timer'])
  t.deepEqual(errors, [])
})

test('a chain of zero-delay timers runs one hop per iteration, not one per millisecond', async (t) => {
  const loop = withLoop(t)
  const gaps: number[] = []
  const hops = 300
  const counter = countTurns()
  t.teardown(() => counter.stop())
  let turnsAtStart = 0
  await new Promise<void>((resolve) => {
    let left = hops
    let last = performance.now()
    const step = () => {
      const now = performance.now()
      gaps.push(now - last)
      last = now
      if (--left === 0) resolve()
      else loop.schedule(step, 0)
    }
    loop.schedule(() => {
      turnsAtStart = counter.turns
      step()
    }, 0)
  })
  const turns = counter.turns - turnsAtStart
  counter.stop()
  gaps.sort((a, b) => a - b)
  const median = gaps[gaps.length >> 1]
  const seen = `${turns} turns of Node's loop for ${hops} hops; median hop ${median.toFixed(3)} ms`
  t.log(seen)
  // A hop is one loop iteration, i.e. one turn of Node's loop. A due deadline read as a future
  // one costs a 1 ms uv timer on every hop, through which Node's loop spins its setImmediate
  // turns (dozens each). Counted in turns, not in ms: a loaded machine delays hops without
  // adding turns.
  t.true(turns <= 2 * hops, seen)
})
