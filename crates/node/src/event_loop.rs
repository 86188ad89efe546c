//! `NativeEventLoop`: the JS-facing handle of one attached loop. Thin: argument checks,
//! conversions, and JS tasks as loop tasks that call the loop's dispatch function.
//!
//! Ground rules: an instance is used only on the JS thread that created it (napi objects
//! cannot cross threads), which is also the loop's thread.

use std::rc::{Rc, Weak};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use netloop_eventloop::{
    EventLoop, LocalLoop, LoopConfig, LoopError, LoopState, RejectReason, SelectorFault,
};

use crate::bridge::{self, Bridge, Dispatch};
use crate::error::{invalid_arg, loop_error, millis, period, throw, JsResult};
use crate::timers::{JsTimers, FIRED_SLOTS, OP_FIELDS, OP_HEADER};

#[napi(object)]
pub struct NativeLoopOptions {
    pub name: Option<String>,
    pub io_ratio: Option<u32>,
    pub max_pending_tasks: Option<u32>,
}

#[napi]
pub struct NativeEventLoop {
    bridge: Rc<Bridge>,
    local: Rc<LocalLoop>,
    timers: Rc<JsTimers>,
    faults: Arc<AtomicU32>,
    /// Keeps the shared op buffer alive.
    _ops: OpBuffer,
}

/// A reference to JS's op buffer; deleted when the loop object is collected.
struct OpBuffer {
    env: napi::sys::napi_env,
    reference: napi::sys::napi_ref,
}

impl Drop for OpBuffer {
    fn drop(&mut self) {
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
    let ok = unsafe {
        napi::sys::napi_get_typedarray_info(
            env.raw(),
            value.raw(),
            &mut kind,
            &mut len,
            &mut data,
            &mut buffer,
            &mut offset,
        ) == napi::sys::Status::napi_ok
            && kind == napi::sys::TypedarrayType::float64_array
            && napi::sys::napi_create_reference(env.raw(), value.raw(), 1, &mut reference)
                == napi::sys::Status::napi_ok
    };
    if !ok || data.is_null() {
        return Err(invalid_arg("ops must be a Float64Array"));
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

#[napi]
impl NativeEventLoop {
    /// `dispatch(kind, arg)` is called on this thread for every JS task, timer and event.
    #[napi(constructor)]
    pub fn new(
        env: Env,
        dispatch: Unknown,
        resource: Unknown,
        ops: Unknown,
        js_now: f64,
        options: Option<NativeLoopOptions>,
    ) -> Result<Self> {
        Self::create(&env, dispatch, resource, ops, js_now, options).map_err(|e| throw(&env, e))
    }

    fn create(
        env: &Env,
        dispatch: Unknown,
        resource: Unknown,
        ops: Unknown,
        js_now: f64,
        options: Option<NativeLoopOptions>,
    ) -> JsResult<Self> {
        let (data, len, reference) = float64_array(env, &ops)?;
        let ops = OpBuffer {
            env: env.raw(),
            reference,
        };
        if len < OP_HEADER + OP_FIELDS + FIRED_SLOTS {
            return Err(invalid_arg("ops buffer too small"));
        }
        let mut cfg = LoopConfig {
            name: "netloop-js".into(),
            ..LoopConfig::default()
        };
        if let Some(o) = options {
            if let Some(n) = o.name {
                cfg.name = n;
            }
            if let Some(r) = o.io_ratio {
                cfg.io_ratio = r;
            }
            if let Some(m) = o.max_pending_tasks {
                cfg.max_pending_tasks = m as usize;
            }
        }
        // Test hook: the next `faults` polls return empty at once, as a buggy epoll would.
        let faults = Arc::new(AtomicU32::new(0));
        let f = faults.clone();
        cfg.fault_injector = Some(Arc::new(move || {
            let left = f.load(Ordering::Relaxed);
            if left > 0 {
                f.store(left - 1, Ordering::Relaxed);
                SelectorFault::PrematureEmpty
            } else {
                SelectorFault::None
            }
        }));
        let (_handle, driver) = EventLoop::attached(cfg).map_err(loop_error)?;
        let local = driver.local().clone();
        let bridge = Bridge::attach(env.raw(), driver, dispatch.raw(), resource.raw())
            .map_err(|e| invalid_arg(format!("attaching the loop to libuv failed: {e}")))?;
        let timers = JsTimers::new(local.clone(), Rc::downgrade(&bridge));
        timers.set_buffer(data, len);
        timers.calibrate(js_now);
        bridge.set_timers(timers.clone());
        Ok(NativeEventLoop {
            bridge,
            local,
            timers,
            faults,
            _ops: ops,
        })
    }

    fn handle(&self) -> &EventLoop {
        self.bridge.handle()
    }

    /// The bridge of this loop (the channel hub hooks into it).
    pub(crate) fn bridge(&self) -> &Rc<Bridge> {
        &self.bridge
    }

    /// The loop-thread part of this loop (channels are created on it).
    pub(crate) fn local(&self) -> &Rc<LocalLoop> {
        &self.local
    }

    fn accepting(&self) -> JsResult<()> {
        if self.handle().is_shutdown() {
            return Err(loop_error(LoopError::Rejected(RejectReason::Shutdown)));
        }
        Ok(())
    }

    /// Queues one JS task (the dispatcher runs the next function of its FIFO).
    #[napi]
    pub fn execute(&self, env: Env) -> Result<()> {
        self.execute_impl().map_err(|e| throw(&env, e))
    }

    fn execute_impl(&self) -> JsResult<()> {
        self.accepting()?;
        let b = Rc::downgrade(&self.bridge);
        self.local
            .execute_local(move || call(&b, Dispatch::Task, 0.0));
        self.bridge.keep_alive();
        Ok(())
    }

    #[napi]
    pub fn schedule(&self, env: Env, id: u32, delay_ms: f64) -> Result<()> {
        self.schedule_impl(id, delay_ms).map_err(|e| throw(&env, e))
    }

    fn schedule_impl(&self, id: u32, delay_ms: f64) -> JsResult<()> {
        self.accepting()?;
        let delay = millis("delay", delay_ms)?;
        self.timers.schedule(id, delay);
        self.bridge.keep_alive();
        Ok(())
    }

    #[napi]
    pub fn schedule_periodic(
        &self,
        env: Env,
        id: u32,
        initial_ms: f64,
        period_ms: f64,
        fixed_rate: bool,
    ) -> Result<()> {
        self.schedule_periodic_impl(id, initial_ms, period_ms, fixed_rate)
            .map_err(|e| throw(&env, e))
    }

    fn schedule_periodic_impl(
        &self,
        id: u32,
        initial_ms: f64,
        period_ms: f64,
        fixed_rate: bool,
    ) -> JsResult<()> {
        self.accepting()?;
        let initial = millis("initialDelay", initial_ms)?;
        let p = period("period", period_ms)?;
        if !self.timers.schedule_periodic(id, initial, p, fixed_rate) {
            return Err(invalid_arg("period must be positive"));
        }
        self.bridge.keep_alive();
        Ok(())
    }

    /// Cancels timer `id`; `true` if it was pending.
    #[napi]
    pub fn cancel(&self, id: u32) -> bool {
        self.timers.cancel(id)
    }

    #[napi]
    pub fn in_event_loop(&self) -> bool {
        self.handle().in_event_loop()
    }

    #[napi(getter)]
    pub fn state(&self) -> &'static str {
        state_name(self.handle().state())
    }

    #[napi(getter)]
    pub fn name(&self) -> String {
        self.handle().name().to_string()
    }

    #[napi(getter)]
    pub fn pending_tasks(&self) -> u32 {
        u32::try_from(self.handle().pending_tasks()).unwrap_or(u32::MAX)
    }

    #[napi(getter)]
    pub fn wakeups(&self) -> f64 {
        self.handle().wakeups() as f64
    }

    #[napi(getter)]
    pub fn selector_rebuilds(&self) -> f64 {
        self.handle().selector_rebuilds() as f64
    }

    #[napi]
    pub fn shutdown_gracefully(&self, env: Env, quiet_ms: f64, timeout_ms: f64) -> Result<()> {
        self.shutdown_gracefully_impl(quiet_ms, timeout_ms)
            .map_err(|e| throw(&env, e))
    }

    fn shutdown_gracefully_impl(&self, quiet_ms: f64, timeout_ms: f64) -> JsResult<()> {
        let quiet = millis("quietPeriod", quiet_ms)?;
        let timeout = millis("timeout", timeout_ms)?;
        if quiet > timeout {
            return Err(invalid_arg("quietPeriod must not exceed timeout"));
        }
        self.handle().shutdown_gracefully(quiet, timeout);
        self.timers.cancel_all();
        self.bridge.rearm();
        Ok(())
    }

    /// Applies the timer ops JS buffered (JS calls this when its buffer is full).
    #[napi]
    pub fn drain_ops(&self) {
        self.timers.drain();
        self.bridge.keep_alive();
        self.bridge.rearm();
    }

    /// `true`: the loop keeps the process alive until it terminates (like a listening
    /// server); `false` (the default): only queued tasks, timers and channels do.
    #[napi]
    pub fn set_ref(&self, pinned: bool) {
        self.bridge.pinned.set(pinned);
        self.bridge.rearm();
    }

    /// Test hook: the next `count` polls of this loop report a premature empty wake-up.
    #[napi]
    pub fn inject_selector_faults(&self, count: u32) {
        self.faults.store(count, Ordering::Relaxed);
    }

    /// JS buffered timer ops outside a loop iteration: run an iteration soon (it drains them).
    #[napi]
    pub fn request_drain(&self) {
        self.bridge.keep_alive();
        self.local.request_iteration();
    }

    /// Test and benchmark hook: another OS thread posts `count` tasks to this loop after
    /// `delay_ms`; each calls the dispatcher with the post-to-run latency in nanoseconds.
    #[napi]
    pub fn post_from_other_thread(&self, env: Env, count: u32, delay_ms: f64) -> Result<()> {
        self.post_from_other_thread_impl(count, delay_ms)
            .map_err(|e| throw(&env, e))
    }

    fn post_from_other_thread_impl(&self, count: u32, delay_ms: f64) -> JsResult<()> {
        let delay = millis("delay", delay_ms)?;
        let el = self.handle().clone();
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

fn call(b: &Weak<Bridge>, what: Dispatch, arg: f64) {
    if let Some(b) = b.upgrade() {
        b.call(what, arg);
    }
}
