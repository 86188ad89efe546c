//! The libuv bridge: an attached loop driven by the JS thread's libuv.
//!
//! Ground rules:
//! - A `Bridge` belongs to one JS thread (the env's thread); it is `!Send`.
//! - Ownership: each open uv handle holds a strong `Rc<Bridge>` in its `data`, released by its
//!   close callback; the JS `NativeEventLoop` holds one too. The thread's context
//!   (crate::thread_context) holds only weak refs, so the env cleanup hook can close what is
//!   still open.
//! - libuv watches the loop's selector fd with a `uv_poll_t` and the next timer deadline with
//!   a `uv_timer_t`. Each wake runs one non-blocking iteration inside one handle scope, ended
//!   by a callback scope opened and closed (RAII guard: also if the iteration panics), so JS
//!   tasks run synchronously on this thread, in the loop's async context that the JS
//!   dispatcher enters, and nextTicks/promises drain at the iteration's end (scopes.rs says
//!   why the callback scope is not held around the JS calls).
//! - Fairness: when work remains after an iteration the loop's own waker makes its fd
//!   readable, so libuv runs the next iteration in its *poll* phase, after timers and before
//!   `setImmediate`. The uv timer is only ever started with a non-zero timeout (libuv 1.46
//!   re-runs a timer restarted with 0 from its own callback in the same timer phase).
//! - JS liveness: the dispatch function (which holds the JS `EventLoop`) is referenced
//!   strongly while the loop has work (tasks, timers, channels, `ref()`, shutdown in
//!   progress) and weakly while idle, so an idle loop nobody references is collected; its
//!   finalizer closes the bridge.
//! - At termination `close()` stops the uv handles and drops every strong reference to the
//!   loop's core (driver, handle, timers, hook): the selector's epoll fd and the waker's
//!   eventfd are released then, not at GC. After `close()` no JS is called.

use std::cell::{Cell, RefCell};
use std::os::raw::c_int;
use std::ptr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use libuv_sys_lite as uv;
use napi::sys;

pub use crate::dispatch::Dispatch;
use crate::error::debug;
use netloop_eventloop::{EventLoop, Iteration, LocalLoop, LoopDriver};
use netloop_wire::timers::JsTimers;

mod live;
mod rearm;
mod scopes;
mod spin;
mod uv_handles;

use live::install_cleanup_hook;
pub(crate) use live::{find, tearing_down};
use scopes::Scopes;
use uv_handles::{
    ceil_millis, free_poll, free_timer, on_poll, on_timer, zeroed_poll, zeroed_timer,
};

/// Work that runs at the end of every loop iteration, while the iteration's handle scope is
/// open (so it may call JS), before the `Terminated` dispatch and the microtasks.
pub trait IterationHook {
    /// Runs after the iteration's loop work, before the scopes close.
    fn after_iteration(self: Rc<Self>);
    /// True while the hook's work should keep the process alive (open, ref'ed channels).
    fn keeps_alive(&self) -> bool;
    /// The loop closed (terminated, or its env is torn down): the hook leaves every registry.
    fn loop_closed(&self);
}

/// The loop's core objects; dropped at termination so their fds close.
pub(crate) struct Core {
    pub(crate) driver: LoopDriver,
    pub(crate) handle: EventLoop,
}

pub struct Bridge {
    pub(crate) env: sys::napi_env,
    id: u64,
    core: RefCell<Option<Rc<Core>>>,
    timers: RefCell<Option<Rc<JsTimers>>>,
    dispatch: Cell<sys::napi_ref>,
    dispatch_strong: Cell<bool>,
    resource: Cell<sys::napi_ref>,
    async_ctx: Cell<sys::napi_async_context>,
    uv_loop: *mut uv::uv_loop_t,
    poll: Cell<*mut uv::uv_poll_t>,
    timer: Cell<*mut uv::uv_timer_t>,
    closed: Cell<bool>,
    /// `ref()`ed from JS: keep the process alive while the loop is not terminated.
    pub(crate) pinned: Cell<bool>,
    pub(crate) js_failed: Cell<bool>,
    /// When the current (or last) iteration started: work after the loop's own (the channel
    /// hub's deliveries) stops early once the iteration ran long (see `iteration_started`).
    started: Cell<Instant>,
    /// Utilization: when the loop was attached, and the time its iterations took on this
    /// thread since (JS they called included, up to the end of their callback scope).
    born: Instant,
    /// When the loop closed (terminated): its utilization stops there, idle time included.
    ended: Cell<Option<Instant>>,
    busy: Cell<Duration>,
    /// Test hook: the next re-watch of a rebuilt selector fails.
    pub(crate) fail_rewatch: Cell<bool>,
    /// Runs at the end of every iteration, inside its scopes (the channel event bridge).
    hook: RefCell<Option<Rc<dyn IterationHook>>>,
    /// The dispatch function and receiver, valid only inside `run` (its handle scope).
    pub(crate) scope_fn: Cell<sys::napi_value>,
    pub(crate) scope_recv: Cell<sys::napi_value>,
}

fn check(status: sys::napi_status, what: &str) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!(
            "{what} failed (napi status {status})"
        )))
    }
}

fn uv_check(rc: c_int, what: &str) -> napi::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!(
            "{what} failed (libuv error {rc})"
        )))
    }
}

impl Bridge {
    /// Attaches `driver`'s loop to the libuv loop of `env`'s thread. On error everything made
    /// so far is released (references deleted, initialised handles closed).
    pub fn attach(
        env: sys::napi_env,
        driver: LoopDriver,
        dispatch: sys::napi_value,
    ) -> napi::Result<Rc<Bridge>> {
        let mut uv_loop: *mut sys::uv_loop_s = ptr::null_mut();
        // SAFETY: `env` is the live env of the current call; the out-pointer is a valid local.
        let status = unsafe { sys::napi_get_uv_event_loop(env, &mut uv_loop) };
        check(status, "napi_get_uv_event_loop")?;
        let handle = driver.handle();
        let fd = driver.raw_fd();
        let bridge = Rc::new(Bridge {
            env,
            id: handle.id(),
            core: RefCell::new(Some(Rc::new(Core { driver, handle }))),
            timers: RefCell::new(None),
            dispatch: Cell::new(ptr::null_mut()),
            dispatch_strong: Cell::new(false),
            resource: Cell::new(ptr::null_mut()),
            async_ctx: Cell::new(ptr::null_mut()),
            uv_loop: uv_loop.cast(),
            poll: Cell::new(ptr::null_mut()),
            timer: Cell::new(ptr::null_mut()),
            closed: Cell::new(false),
            pinned: Cell::new(false),
            js_failed: Cell::new(false),
            started: Cell::new(Instant::now()),
            born: Instant::now(),
            ended: Cell::new(None),
            busy: Cell::new(Duration::ZERO),
            fail_rewatch: Cell::new(false),
            hook: RefCell::new(None),
            scope_fn: Cell::new(ptr::null_mut()),
            scope_recv: Cell::new(ptr::null_mut()),
        });
        if let Err(e) = bridge.init(dispatch, fd) {
            bridge.close();
            return Err(e);
        }
        live::register(&bridge);
        install_cleanup_hook(env);
        Ok(bridge)
    }

    #[allow(
        clippy::multiple_unsafe_ops_per_block,
        reason = "the napi references and the async context are made in one sequence on the live env, each stored as soon as it exists so that `close()` releases it on error"
    )]
    fn init(self: &Rc<Self>, dispatch: sys::napi_value, fd: c_int) -> napi::Result<()> {
        let env = self.env;
        let (mut dispatch_ref, mut resource, mut resource_ref) =
            (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        let (mut name, mut async_ctx) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: `env` is the live env of the current call; out-pointers are valid locals.
        // Each reference is stored as soon as it exists, so `close()` deletes it on error.
        unsafe {
            // Weak (count 0) until the loop has work: an idle, unreferenced loop is collected.
            check(
                sys::napi_create_reference(env, dispatch, 0, &mut dispatch_ref),
                "napi_create_reference",
            )?;
            self.dispatch.set(dispatch_ref);
            // The async resource of the iterations: a plain object of our own (it holds
            // nothing), strongly referenced until the async context is destroyed.
            check(
                sys::napi_create_object(env, &mut resource),
                "napi_create_object",
            )?;
            check(
                sys::napi_create_reference(env, resource, 1, &mut resource_ref),
                "napi_create_reference",
            )?;
            self.resource.set(resource_ref);
            check(
                sys::napi_create_string_utf8(env, c"netloop:EventLoop".as_ptr(), -1, &mut name),
                "napi_create_string_utf8",
            )?;
            check(
                sys::napi_async_init(env, resource, name, &mut async_ctx),
                "napi_async_init",
            )?;
            self.async_ctx.set(async_ctx);
        }
        let timer = Box::into_raw(Box::new(zeroed_timer()));
        // SAFETY: `timer` is a fresh heap allocation; `uv_loop` is this thread's libuv loop.
        let rc = unsafe { uv::uv_timer_init(self.uv_loop, timer) };
        if rc != 0 {
            // SAFETY: not initialised, so libuv never saw it: free it here.
            drop(unsafe { Box::from_raw(timer) });
            return uv_check(rc, "uv_timer_init");
        }
        // SAFETY: the handle is initialised; its data owns one strong ref, released by
        // `free_timer` when the handle is closed.
        unsafe { (*timer).data = Rc::into_raw(self.clone()) as *mut _ };
        self.timer.set(timer);
        self.start_poll(fd)
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// When the current iteration started (its I/O and tasks included), for the hook's own
    /// time budget: an iteration is bounded as a whole, whatever the I/O did.
    pub fn iteration_started(&self) -> Instant {
        self.started.get()
    }

    /// (busy, elapsed) since the loop was attached: busy is the time this thread spent in the
    /// loop's iterations, the rest it spent elsewhere (libuv, other JS, asleep).
    pub fn busy_time(&self) -> (Duration, Duration) {
        let end = self.ended.get().unwrap_or_else(Instant::now);
        (self.busy.get(), end.saturating_duration_since(self.born))
    }

    /// The loop's handle; `None` once terminated (the core is released then).
    pub fn handle(&self) -> Option<EventLoop> {
        self.core.borrow().as_ref().map(|c| c.handle.clone())
    }

    /// The loop-thread side of the loop; `None` once terminated.
    pub fn local(&self) -> Option<Rc<LocalLoop>> {
        self.core
            .borrow()
            .as_ref()
            .map(|c| c.driver.local().clone())
    }

    pub(crate) fn core(&self) -> Option<Rc<Core>> {
        self.core.borrow().clone()
    }

    pub(crate) fn dispatch_ref(&self) -> sys::napi_ref {
        self.dispatch.get()
    }

    pub fn is_closed(&self) -> bool {
        self.closed.get()
    }

    /// Installs the end-of-iteration hook (one per loop; used by the channel bridge).
    #[allow(dead_code)]
    pub fn set_hook(&self, hook: Rc<dyn IterationHook>) {
        if !self.closed.get() {
            *self.hook.borrow_mut() = Some(hook);
        }
    }

    pub fn set_timers(&self, timers: Rc<JsTimers>) {
        *self.timers.borrow_mut() = Some(timers);
    }

    pub(crate) fn timers(&self) -> Option<Rc<JsTimers>> {
        self.timers.borrow().clone()
    }

    fn start_poll(self: &Rc<Self>, fd: c_int) -> napi::Result<()> {
        let poll = Box::into_raw(Box::new(zeroed_poll()));
        // SAFETY: `poll` is a fresh heap allocation; `fd` is the loop's selector fd, open
        // until the core is released after `uv_poll_stop`/`uv_close`.
        let rc = unsafe { uv::uv_poll_init(self.uv_loop, poll, fd) };
        if rc != 0 {
            // SAFETY: not initialised, so libuv never saw it: free it here.
            drop(unsafe { Box::from_raw(poll) });
            return uv_check(rc, "uv_poll_init");
        }
        // SAFETY: initialised; the data owns one strong ref, released by `free_poll`. From
        // here on the handle is closed by `stop_poll` (also on the error path below).
        unsafe { (*poll).data = Rc::into_raw(self.clone()) as *mut _ };
        self.poll.set(poll);
        // SAFETY: `poll` is initialised and open.
        let rc = unsafe {
            uv::uv_poll_start(
                poll,
                uv::uv_poll_event::UV_READABLE.0 as c_int,
                Some(on_poll),
            )
        };
        if rc != 0 {
            self.stop_poll();
            return uv_check(rc, "uv_poll_start");
        }
        // An idle loop does not keep the process alive; its timers and channels do.
        // SAFETY: `poll` is initialised and open.
        unsafe { uv::uv_unref(poll.cast()) };
        Ok(())
    }

    fn stop_poll(&self) {
        let poll = self.poll.replace(ptr::null_mut());
        if poll.is_null() {
            return;
        }
        // SAFETY: `poll` was initialised by `start_poll` and is still open (the cell held it).
        unsafe { uv::uv_poll_stop(poll) };
        // SAFETY: closed exactly once here (the cell was cleared); the close callback frees it
        // and releases its Rc.
        unsafe { uv::uv_close(poll.cast(), Some(free_poll)) };
    }

    /// Runs one iteration, then while the loop's spin finds more work within its window
    /// (bridge/spin.rs) further ones, each in scopes of its own.
    fn run(self: &Rc<Self>, io: bool) {
        self.spin_woke();
        let mut window = None;
        let mut io = io;
        loop {
            let Some(it) = self.run_one(io) else { return };
            if !self.spin_for_more(&it, &mut window) {
                self.spin_sleeping(&it);
                return;
            }
            io = true;
        }
    }

    /// Runs one iteration in a handle scope, then drains nextTicks and microtasks; `None`:
    /// none ran.
    fn run_one(self: &Rc<Self>, io: bool) -> Option<Iteration> {
        if self.closed.get() || tearing_down() {
            return None;
        }
        let core = self.core()?;
        let scopes = Scopes::open(self)?;
        if scopes.js_gone {
            // The JS side is gone (collected while idle, finalizer pending): no JS to run for.
            drop(scopes);
            drop(core);
            self.close();
            return None;
        }
        let started = Instant::now();
        self.started.set(started);
        if let Some(t) = self.timers() {
            t.drain();
        }
        // The core bounds a graceful shutdown by its timeout (`confirm_shutdown`).
        let mut it = if io {
            core.driver.run_io_ready()
        } else {
            core.driver.run_once()
        };
        if it.selector_rebuilt && !it.terminated {
            if let Err(rc) = self.rewatch(&core) {
                self.call(Dispatch::Fault, f64::from(rc.unsigned_abs()));
                core.driver.terminate_now();
                it.terminated = true;
            }
        }
        let hook = self.hook.borrow().clone();
        if let Some(h) = hook {
            h.after_iteration();
        }
        if it.terminated {
            // The registries forget the loop before JS learns that it terminated.
            if let Some(h) = self.hook.borrow().clone() {
                h.loop_closed();
            }
            self.call(Dispatch::Terminated, 0.0);
        }
        drop(scopes);
        // Utilization: the iteration and the microtasks its scope ran (one clock read more).
        self.busy.set(self.busy.get() + started.elapsed());
        drop(core);
        self.after_iteration(it);
        Some(it)
    }

    /// libuv watches the rebuilt selector's fd instead of the old one; `Err(libuv code)`.
    fn rewatch(self: &Rc<Self>, core: &Core) -> Result<(), c_int> {
        self.stop_poll();
        let res = if self.fail_rewatch.replace(false) {
            Err(napi::Error::from_reason("injected failure"))
        } else {
            self.start_poll(core.driver.raw_fd())
        };
        core.driver.release_retired_selectors();
        res.map_err(|e| {
            debug(format_args!("re-watching the rebuilt selector failed: {e}"));
            -1
        })
    }

    /// Closes the uv handles, lets go of the JS references and releases the loop's core (a
    /// loop that has not terminated yet terminates now, without calling JS). Idempotent.
    pub fn close(&self) {
        if self.closed.replace(true) {
            return;
        }
        self.ended.set(Some(Instant::now()));
        self.stop_poll();
        let timer = self.timer.replace(ptr::null_mut());
        if !timer.is_null() {
            // SAFETY: initialised in `init` and still open (the cell held it).
            unsafe { uv::uv_timer_stop(timer) };
            // SAFETY: closed exactly once here (the cell was cleared); the close callback
            // frees it and releases its Rc.
            unsafe { uv::uv_close(timer.cast(), Some(free_timer)) };
        }
        let env = self.env;
        let (d, r, a) = (
            self.dispatch.replace(ptr::null_mut()),
            self.resource.replace(ptr::null_mut()),
            self.async_ctx.replace(ptr::null_mut()),
        );
        // References and the async context were created on this env's thread, which we are on;
        // each is released once (the cells were cleared).
        if !d.is_null() {
            // SAFETY: as said above, for the dispatch function's reference.
            unsafe { sys::napi_delete_reference(env, d) };
        }
        if !r.is_null() {
            // SAFETY: as said above, for the async resource's reference.
            unsafe { sys::napi_delete_reference(env, r) };
        }
        if !a.is_null() {
            // SAFETY: as said above, for the async context.
            unsafe { sys::napi_async_destroy(env, a) };
        }
        let core = self.core.borrow_mut().take();
        let timers = self.timers.borrow_mut().take();
        let hook = self.hook.borrow_mut().take();
        if let Some(t) = &timers {
            t.cancel_all();
        }
        if let Some(c) = &core {
            if !c.handle.is_terminated() {
                c.driver.terminate_now();
            }
        }
        if let Some(h) = &hook {
            h.loop_closed();
        }
        drop((hook, timers, core));
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        // Every handle holds an Rc, so none is open here; `close` releases the rest (JS
        // references, the core) if nobody did, unless the env is being torn down.
        if !tearing_down() {
            self.close();
        }
    }
}
