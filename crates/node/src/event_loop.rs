//! `NativeEventLoop`: the JS-facing handle of one attached loop. Thin: argument checks,
//! conversions, and JS tasks as loop tasks that call the loop's dispatch function.
//!
//! Ground rules: an instance is used only on the JS thread that created it (napi objects
//! cannot cross threads), which is also the loop's thread. It holds the bridge, never the
//! loop's core directly, so a terminated loop's fds close at termination even while JS keeps
//! this object. When JS collects it (only possible while the loop is idle, see `bridge.rs`)
//! the loop terminates and its handles close.

use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use netloop_eventloop::{EventLoop, LocalLoop, LoopError, LoopState, RejectReason};

use crate::bridge::{self, Bridge, Dispatch};
use crate::error::{
    invalid_arg, loop_error, millis, test_hooks_enabled, throw, wire_error, JsResult,
};
use netloop_wire::loop_options::LoopOptions;
use netloop_wire::timers::{JsTimers, BUFFER_LEN};

/// The options src/loop.ts hands over (already checked there; read by netloop-wire's
/// `LoopOptions`).
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeLoopOptions {
    pub name: Option<String>,
    pub io_ratio: Option<u32>,
    pub max_pending_tasks: Option<u32>,
    /// `spinBeforeSleepMicros` (checked there: 0..=1000).
    pub spin_before_sleep_micros: Option<u32>,
}

impl From<NativeLoopOptions> for LoopOptions {
    fn from(o: NativeLoopOptions) -> Self {
        LoopOptions {
            name: o.name,
            io_ratio: o.io_ratio,
            max_pending_tasks: o.max_pending_tasks,
            spin_before_sleep_micros: o.spin_before_sleep_micros,
        }
    }
}

/// An event loop attached to the calling JS thread (src/loop.ts is its JS side).
#[napi]
pub struct NativeEventLoop {
    bridge: Rc<Bridge>,
    timers: Rc<JsTimers>,
    name: String,
    thread: ThreadId,
    /// Test hooks (`NETLOOP_TEST_HOOKS=1` when the loop was made): pending injected faults.
    faults: Option<Arc<AtomicU32>>,
    /// Keeps the shared timer arm buffer alive.
    _arm: ArmBuffer,
}

/// A reference to JS's timer arm buffer; deleted when the loop object is collected.
struct ArmBuffer {
    env: napi::sys::napi_env,
    reference: napi::sys::napi_ref,
}

impl Drop for ArmBuffer {
    fn drop(&mut self) {
        if bridge::tearing_down() {
            return;
        }
        // SAFETY: the reference was created on this env; finalizers run on the env's thread.
        unsafe {
            napi::sys::napi_delete_reference(self.env, self.reference);
        }
    }
}

/// The data pointer and length of a Float64Array.
fn float64_array(env: &Env, value: &Unknown) -> JsResult<(*mut f64, usize, napi::sys::napi_ref)> {
    let (mut kind, mut len, mut data) = (0, 0usize, std::ptr::null_mut());
    let (mut buffer, mut offset, mut reference) =
        (std::ptr::null_mut(), 0usize, std::ptr::null_mut());
    // SAFETY: `value` is a live handle of this call; out-pointers are valid locals.
    let info = unsafe {
        napi::sys::napi_get_typedarray_info(
            env.raw(),
            value.raw(),
            &mut kind,
            &mut len,
            &mut data,
            &mut buffer,
            &mut offset,
        )
    };
    if info != napi::sys::Status::napi_ok
        || kind != napi::sys::TypedarrayType::float64_array
        || data.is_null()
    {
        return Err(invalid_arg("the timer arm buffer must be a Float64Array"));
    }
    let (e, v, r) = (env.raw(), value.raw(), &mut reference);
    // SAFETY: as above; `value` is a Float64Array.
    let referenced = unsafe { napi::sys::napi_create_reference(e, v, 1, r) };
    if referenced != napi::sys::Status::napi_ok {
        return Err(invalid_arg("the timer arm buffer must be a Float64Array"));
    }
    Ok((data.cast(), len, reference))
}

fn state_name(s: LoopState) -> &'static str {
    match s {
        LoopState::NotStarted => "not-started",
        LoopState::Started => "started",
        LoopState::ShuttingDown => "shutting-down",
        LoopState::Shutdown => "shutdown",
        LoopState::Terminated => "terminated",
    }
}

fn rejected() -> napi::Error<crate::error::Code> {
    loop_error(LoopError::Rejected(RejectReason::Shutdown))
}

#[napi]
impl NativeEventLoop {
    /// `dispatch(packed)` is called on this thread for every JS task, timer and event.
    #[napi(constructor)]
    pub fn new(
        env: Env,
        dispatch: Unknown,
        arm: Unknown,
        js_now: f64,
        options: Option<NativeLoopOptions>,
    ) -> Result<Self> {
        Self::create(&env, dispatch, arm, js_now, options).map_err(|e| throw(&env, e))
    }

    fn create(
        env: &Env,
        dispatch: Unknown,
        arm: Unknown,
        js_now: f64,
        options: Option<NativeLoopOptions>,
    ) -> JsResult<Self> {
        crate::error::configure_logging();
        let (data, len, reference) = float64_array(env, &arm)?;
        let arm = ArmBuffer {
            env: env.raw(),
            reference,
        };
        if len != BUFFER_LEN {
            return Err(invalid_arg(format!(
                "the timer buffer must hold {BUFFER_LEN} numbers, got {len}"
            )));
        }
        let faults = test_hooks_enabled().then(|| Arc::new(AtomicU32::new(0)));
        let cfg = LoopOptions::from(options.unwrap_or_default())
            .config(faults.clone())
            .map_err(wire_error)?;
        let name = cfg.name.clone();
        if dispatch.get_type().ok() != Some(ValueType::Function) {
            return Err(invalid_arg("dispatch must be a function"));
        }
        let (_handle, driver) = EventLoop::attached(cfg).map_err(loop_error)?;
        let local = Rc::downgrade(driver.local());
        // On failure the driver (dropped inside `attach`) terminates the loop: its fds close.
        let bridge = Bridge::attach(env.raw(), driver, dispatch.raw())
            .map_err(|e| invalid_arg(format!("attaching the loop to libuv failed: {e}")))?;
        let weak = Rc::downgrade(&bridge);
        let timers = JsTimers::new(
            local,
            Box::new(move || {
                if let Some(b) = weak.upgrade() {
                    b.call(Dispatch::Timers, 0.0);
                }
            }),
        );
        // The buffer's lifetime is as before the timers moved to netloop-wire: dropping this
        // object closes the bridge, after which no iteration or JS call reads it.
        // SAFETY: `data`/`len` are the Float64Array's memory, referenced by `arm` while this
        // object lives; JS keeps the array private (never detached).
        unsafe { timers.set_buffer(data, len) };
        timers.calibrate(js_now);
        bridge.set_timers(timers.clone());
        Ok(NativeEventLoop {
            bridge,
            timers,
            name,
            thread: std::thread::current().id(),
            faults,
            _arm: arm,
        })
    }

    /// The loop's bridge (for other parts of the binding, e.g. channels).
    #[allow(dead_code)]
    pub(crate) fn bridge(&self) -> &Rc<Bridge> {
        &self.bridge
    }

    /// The loop-thread side of the loop; `None` once terminated.
    #[allow(dead_code)]
    pub(crate) fn local(&self) -> Option<Rc<LocalLoop>> {
        self.bridge.local()
    }

    fn accepting(&self) -> JsResult<Rc<LocalLoop>> {
        match (self.bridge.handle(), self.bridge.local()) {
            (Some(h), Some(l)) if !h.is_shutdown() => Ok(l),
            _ => Err(rejected()),
        }
    }

    /// Queues one marker task: it runs the next batch of the JS FIFO. Rejected once the loop
    /// is shut down.
    #[napi]
    pub fn execute(&self, env: Env) -> Result<()> {
        let local = self.accepting().map_err(|e| throw(&env, e))?;
        self.queue_marker(&local);
        Ok(())
    }

    /// Queues the marker for JS tasks that were already accepted. 0: queued; 1: the loop is
    /// draining its last tasks (shut down, no new task is queued): JS runs the rest now;
    /// 2: terminated (JS reports the tasks).
    #[napi]
    pub fn requeue(&self) -> u32 {
        match self.bridge.local() {
            Some(local) if local.handle().is_shutdown() => 1,
            Some(local) => {
                self.queue_marker(&local);
                0
            }
            None => 2,
        }
    }

    fn queue_marker(&self, local: &Rc<LocalLoop>) {
        let b = Rc::downgrade(&self.bridge);
        // JS queues at most one marker at a time, and one queued while a batch runs waits
        // for the next iteration (the core's batch bound): one marker, so at most JS_BATCH JS
        // tasks, per iteration.
        local.execute_local(move || {
            if let Some(b) = b.upgrade() {
                b.call(Dispatch::Task, 0.0);
            }
        });
        self.bridge.keep_alive();
    }

    /// True on the loop's thread.
    #[napi]
    pub fn in_event_loop(&self) -> bool {
        std::thread::current().id() == self.thread
    }

    /// The loop's state: `not-started`, `started`, `shutting-down`, `shutdown`, `terminated`.
    #[napi(getter)]
    pub fn state(&self) -> &'static str {
        state_name(
            self.bridge
                .handle()
                .map_or(LoopState::Terminated, |h| h.state()),
        )
    }

    /// The loop's name.
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// Tasks waiting in the cross-thread queue.
    #[napi(getter)]
    pub fn pending_tasks(&self) -> u32 {
        self.bridge
            .handle()
            .map_or(0, |h| u32::try_from(h.pending_tasks()).unwrap_or(u32::MAX))
    }

    /// Connections the server channels of this loop accepted and closed at once (over their
    /// `maxConnections`, or out of descriptors); 0 once the loop terminated.
    #[napi(getter)]
    pub fn refused_connections(&self) -> f64 {
        self.bridge
            .handle()
            .map_or(0.0, |h| h.refused_connections() as f64)
    }

    /// `[busy, elapsed]` in ms since the loop was made: the time this thread spent in the
    /// loop's iterations, and the time since (`EventLoop.utilization()`).
    #[napi]
    pub fn busy_time(&self) -> Vec<f64> {
        let (busy, elapsed) = self.bridge.busy_time();
        vec![busy.as_secs_f64() * 1e3, elapsed.as_secs_f64() * 1e3]
    }

    /// Netty's `shutdownGracefully(quietPeriod, timeout)`, in milliseconds.
    #[napi]
    pub fn shutdown_gracefully(&self, env: Env, quiet_ms: f64, timeout_ms: f64) -> Result<()> {
        self.shutdown_gracefully_impl(quiet_ms, timeout_ms)
            .map_err(|e| throw(&env, e))
    }

    fn shutdown_gracefully_impl(&self, quiet_ms: f64, timeout_ms: f64) -> JsResult<()> {
        let quiet = millis("quietPeriodMs", quiet_ms)?;
        let timeout = millis("timeoutMs", timeout_ms)?;
        if quiet > timeout {
            return Err(crate::error::out_of_range(
                "quietPeriodMs",
                &format!("<= timeoutMs ({timeout_ms})"),
                quiet_ms,
            ));
        }
        let Some(h) = self.bridge.handle() else {
            return Ok(());
        };
        let _ = h.shutdown_gracefully(quiet, timeout);
        self.timers.cancel_all();
        self.bridge.keep_alive();
        self.bridge.rearm();
        Ok(())
    }

    /// Cuts a graceful shutdown in progress short (an aborted `shutdownGracefully`): the
    /// loop runs what it accepted and terminates in its next iterations.
    #[napi]
    pub fn expedite_shutdown(&self) {
        if let Some(h) = self.bridge.handle() {
            h.expedite_shutdown();
            self.bridge.keep_alive();
            self.bridge.rearm();
        }
    }

    /// Terminates the loop now, without calling JS, and releases it (JS resolves its own
    /// termination promise). For loops that were never handed out (a failed group).
    #[napi]
    pub fn destroy(&self) {
        self.bridge.close();
    }

    /// `true`: the loop keeps the process alive until it terminates (like a listening
    /// server); `false` (the default): only queued tasks, timers and channels do.
    #[napi]
    pub fn set_ref(&self, pinned: bool) {
        self.bridge.pinned.set(pinned);
        self.bridge.rearm();
    }

    /// JS moved its timer (the arm buffer is dirty) outside a loop iteration: run an iteration
    /// soon (it reads the buffer).
    #[napi]
    pub fn request_drain(&self) {
        self.bridge.keep_alive();
        if let Some(l) = self.bridge.local() {
            l.request_iteration();
        }
    }

    /// Test hooks, only on loops made with `NETLOOP_TEST_HOOKS=1` (not in the typings):
    /// - `"faults", n`: the next `n` polls report a premature empty wake-up;
    /// - `"post", count, delayMs`: another OS thread posts `count` tasks after `delayMs`, each
    ///   dispatched as `Remote` with its post-to-run latency in ns;
    /// - `"failRewatch"`: the next re-watch of a rebuilt selector fails;
    /// - `"wakeups"`, `"spinPolls"`, `"rebuilds"`, `"timers"` (entries in the loop's timer heap): counters.
    #[napi(skip_typescript)]
    pub fn test_hook(&self, env: Env, op: String, a: f64, b: f64) -> Result<f64> {
        self.test_hook_impl(&op, a, b).map_err(|e| throw(&env, e))
    }

    fn test_hook_impl(&self, op: &str, a: f64, b: f64) -> JsResult<f64> {
        let Some(faults) = &self.faults else {
            return Err(invalid_arg("test hooks need NETLOOP_TEST_HOOKS=1"));
        };
        let handle = self.bridge.handle();
        match op {
            "faults" => faults.store(a as u32, Ordering::Relaxed),
            "failRewatch" => self.bridge.fail_rewatch.set(true),
            "wakeups" => return Ok(handle.map_or(0.0, |h| h.wakeups() as f64)),
            "spinPolls" => return Ok(handle.map_or(0.0, |h| h.spin_polls() as f64)),
            "rebuilds" => return Ok(handle.map_or(0.0, |h| h.selector_rebuilds() as f64)),
            "timers" => return Ok(self.local().map_or(0.0, |l| l.timer_count() as f64)),
            "post" => self.post_from_other_thread(a as u32, b)?,
            _ => return Err(invalid_arg(format!("unknown test hook {op}"))),
        }
        Ok(0.0)
    }

    fn post_from_other_thread(&self, count: u32, delay_ms: f64) -> JsResult<()> {
        let delay = millis("delayMs", delay_ms)?;
        let el = self.bridge.handle().ok_or_else(rejected)?;
        let id = el.id();
        std::thread::Builder::new()
            .name("netloop-remote-poster".into())
            .spawn(move || {
                std::thread::sleep(delay);
                for _ in 0..count {
                    let posted = Instant::now();
                    let _ = el.execute(move || {
                        let ns = posted.elapsed().as_nanos() as f64;
                        if let Some(b) = bridge::find(id) {
                            b.call(Dispatch::Remote, ns);
                        }
                    });
                    std::thread::sleep(Duration::from_micros(50));
                }
            })
            .map_err(|e| invalid_arg(format!("spawning the poster thread failed: {e}")))?;
        Ok(())
    }
}

impl Drop for NativeEventLoop {
    /// The JS object was collected (an idle loop nobody references) or the env is going away:
    /// the loop terminates and its handles close.
    fn drop(&mut self) {
        if !bridge::tearing_down() {
            self.bridge.close();
        }
    }
}

impl std::fmt::Debug for NativeEventLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeEventLoop")
            .field("name", &self.name)
            .field("thread", &self.thread)
            .finish_non_exhaustive()
    }
}
