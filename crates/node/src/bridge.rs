//! The libuv bridge: an attached loop driven by the JS thread's libuv.
//!
//! Ground rules:
//! - A `Bridge` belongs to one JS thread (the env's thread); it is `!Send` and kept alive by
//!   this thread's registry until its loop terminates or the env is torn down.
//! - libuv watches the loop's selector fd with a `uv_poll_t` and the next loop deadline with a
//!   `uv_timer_t`. Each wake runs one non-blocking iteration inside one handle scope and one
//!   callback scope (async context of the loop), so JS tasks run synchronously on this thread
//!   and nextTicks/promises drain when the scope closes.
//! - Every uv handle is closed by `close()`: when the loop terminates, or from the env cleanup
//!   hook (worker termination). After teardown starts no JS is called.

use std::cell::{Cell, RefCell};
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::rc::Rc;
use std::time::Duration;

use libuv_sys_lite as uv;
use napi::sys;

pub use crate::dispatch::Dispatch;
use netloop_eventloop::{EventLoop, Iteration, LoopDriver};

thread_local! {
    static BRIDGES: RefCell<Vec<Rc<Bridge>>> = const { RefCell::new(Vec::new()) };
    pub(crate) static TEARING_DOWN: Cell<bool> = const { Cell::new(false) };
    static HOOKED: Cell<bool> = const { Cell::new(false) };
}

/// Work that runs at the end of every loop iteration, while the iteration's handle and
/// callback scopes are open (so it may call JS).
pub trait IterationHook {
    /// Runs after the iteration's loop work, before the scopes close.
    fn after_iteration(self: Rc<Self>);
    /// True while the hook's work should keep the process alive (open, ref'ed channels).
    fn keeps_alive(&self) -> bool;
}

pub struct Bridge {
    pub(crate) env: sys::napi_env,
    pub(crate) handle: EventLoop,
    pub(crate) driver: RefCell<Option<LoopDriver>>,
    pub(crate) dispatch: sys::napi_ref,
    pub(crate) resource: sys::napi_ref,
    pub(crate) async_ctx: sys::napi_async_context,
    pub(crate) uv_loop: *mut uv::uv_loop_t,
    pub(crate) poll: Cell<*mut uv::uv_poll_t>,
    pub(crate) timer: *mut uv::uv_timer_t,
    pub(crate) closed: Cell<bool>,
    /// `ref()`ed from JS: keep the process alive while the loop is not terminated.
    pub(crate) pinned: Cell<bool>,
    pub(crate) js_failed: Cell<bool>,
    /// The loop's JS timers; their op buffer is drained after every dispatch call.
    pub(crate) timers: std::cell::OnceCell<Rc<crate::timers::JsTimers>>,
    /// Runs at the end of every iteration, inside its scopes (the channel event bridge).
    pub(crate) hook: RefCell<Option<Rc<dyn IterationHook>>>,
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
    /// Attaches `driver`'s loop to the libuv loop of `env`'s thread.
    pub fn attach(
        env: sys::napi_env,
        driver: LoopDriver,
        dispatch: sys::napi_value,
        resource: sys::napi_value,
    ) -> napi::Result<Rc<Bridge>> {
        let mut uv_loop: *mut sys::uv_loop_s = ptr::null_mut();
        let mut dispatch_ref = ptr::null_mut();
        let mut resource_ref = ptr::null_mut();
        let mut async_ctx = ptr::null_mut();
        let mut name = ptr::null_mut();
        // SAFETY: `env` is the live env of the current call; out-pointers are valid locals.
        unsafe {
            check(
                sys::napi_get_uv_event_loop(env, &mut uv_loop),
                "napi_get_uv_event_loop",
            )?;
            check(
                sys::napi_create_reference(env, dispatch, 1, &mut dispatch_ref),
                "napi_create_reference",
            )?;
            check(
                sys::napi_create_reference(env, resource, 1, &mut resource_ref),
                "napi_create_reference",
            )?;
            check(
                sys::napi_create_string_utf8(env, c"netloop:EventLoop".as_ptr(), -1, &mut name),
                "napi_create_string_utf8",
            )?;
            check(
                sys::napi_async_init(env, resource, name, &mut async_ctx),
                "napi_async_init",
            )?;
        }
        let uv_loop = uv_loop.cast::<uv::uv_loop_t>();
        let fd = driver.raw_fd();
        let handle = driver.handle();
        let timer = Box::into_raw(Box::new(zeroed_timer()));
        let bridge = Rc::new(Bridge {
            env,
            handle,
            driver: RefCell::new(Some(driver)),
            dispatch: dispatch_ref,
            resource: resource_ref,
            async_ctx,
            uv_loop,
            poll: Cell::new(ptr::null_mut()),
            timer,
            closed: Cell::new(false),
            pinned: Cell::new(false),
            js_failed: Cell::new(false),
            scope_fn: Cell::new(ptr::null_mut()),
            scope_recv: Cell::new(ptr::null_mut()),
            timers: std::cell::OnceCell::new(),
            hook: RefCell::new(None),
        });
        // SAFETY: `timer` is a fresh heap allocation that stays alive until its close callback;
        // `uv_loop` is this thread's libuv loop.
        unsafe {
            uv_check(uv::uv_timer_init(uv_loop, timer), "uv_timer_init")?;
            (*timer).data = Rc::as_ptr(&bridge) as *mut _;
        }
        bridge.start_poll(fd)?;
        BRIDGES.with(|b| b.borrow_mut().push(bridge.clone()));
        install_cleanup_hook(env);
        Ok(bridge)
    }

    pub fn handle(&self) -> &EventLoop {
        &self.handle
    }

    /// Installs the end-of-iteration hook (one per loop).
    pub fn set_hook(&self, hook: Rc<dyn IterationHook>) {
        *self.hook.borrow_mut() = Some(hook);
    }

    pub fn set_timers(&self, timers: Rc<crate::timers::JsTimers>) {
        let _ = self.timers.set(timers);
    }

    fn start_poll(&self, fd: c_int) -> napi::Result<()> {
        let poll = Box::into_raw(Box::new(zeroed_poll()));
        // SAFETY: `poll` is a fresh heap allocation kept until its close callback frees it;
        // `fd` is the loop's selector fd, open until the loop releases it after `uv_poll_stop`.
        unsafe {
            uv_check(uv::uv_poll_init(self.uv_loop, poll, fd), "uv_poll_init")?;
            (*poll).data = self as *const Bridge as *mut _;
            uv_check(
                uv::uv_poll_start(
                    poll,
                    uv::uv_poll_event::UV_READABLE.0 as c_int,
                    Some(on_poll),
                ),
                "uv_poll_start",
            )?;
            // An idle loop does not keep the process alive; its timers and channels do.
            uv::uv_unref(poll.cast());
        }
        self.poll.set(poll);
        Ok(())
    }

    fn stop_poll(&self) {
        let poll = self.poll.replace(ptr::null_mut());
        if poll.is_null() {
            return;
        }
        // SAFETY: `poll` was initialised by `start_poll` and is closed exactly once here; the
        // close callback frees the allocation.
        unsafe {
            uv::uv_poll_stop(poll);
            uv::uv_close(poll.cast(), Some(free_poll));
        }
    }

    /// Runs one iteration in a handle scope and a callback scope.
    fn run(&self, io: bool) {
        if self.closed.get() || TEARING_DOWN.with(|t| t.get()) {
            return;
        }
        let env = self.env;
        let mut hs = ptr::null_mut();
        let mut cs = ptr::null_mut();
        let mut resource = ptr::null_mut();
        // SAFETY: called from a libuv callback on the env's thread, where no scope is open.
        // Failures (possible during worker termination) skip the iteration.
        unsafe {
            if sys::napi_open_handle_scope(env, &mut hs) != sys::Status::napi_ok {
                return;
            }
            if sys::napi_get_reference_value(env, self.resource, &mut resource)
                != sys::Status::napi_ok
                || sys::napi_open_callback_scope(env, resource, self.async_ctx, &mut cs)
                    != sys::Status::napi_ok
            {
                cs = ptr::null_mut();
            }
        }
        let (mut f, mut recv) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: the handle scope opened above is current.
        if unsafe { self.fetch_dispatch(&mut f, &mut recv) } {
            self.scope_fn.set(f);
            self.scope_recv.set(recv);
        }
        if let Some(t) = self.timers.get() {
            t.drain();
        }
        let it = {
            let driver = self.driver.borrow();
            match driver.as_ref() {
                Some(d) if io => d.run_io_ready(),
                Some(d) => d.run_once(),
                None => Iteration {
                    terminated: true,
                    ..Default::default()
                },
            }
        };
        let hook = self.hook.borrow().clone();
        if let Some(h) = hook {
            h.after_iteration();
        }
        if it.terminated {
            self.call(Dispatch::Terminated, 0.0);
        }
        self.scope_fn.set(ptr::null_mut());
        self.scope_recv.set(ptr::null_mut());
        // SAFETY: closing the scopes opened above, in reverse order. Closing the callback scope
        // runs the nextTick queue and microtasks.
        unsafe {
            if !cs.is_null() {
                sys::napi_close_callback_scope(env, cs);
            }
            sys::napi_close_handle_scope(env, hs);
        }
        self.after_iteration(it);
    }

    fn after_iteration(&self, it: Iteration) {
        if it.terminated || self.handle.is_terminated() {
            self.close();
            return;
        }
        // Microtasks that ran when the callback scope closed may have buffered timer ops.
        if let Some(t) = self.timers.get() {
            t.drain();
        }
        let driver = self.driver.borrow();
        let Some(d) = driver.as_ref() else { return };
        if it.selector_rebuilt {
            self.stop_poll();
            if let Err(e) = self.start_poll(d.raw_fd()) {
                eprintln!("netloop: re-watching the rebuilt selector failed: {e}");
            }
            d.release_retired_selectors();
        }
        let next = d.next_timeout();
        // Queued tasks and registered channels keep the process alive, as setImmediate and
        // sockets do; timers do through the (ref'ed) timer handle.
        let hook = self.hook.borrow().clone();
        let channels = match hook {
            Some(h) => h.keeps_alive(),
            None => d.local().registered_count() > 0,
        };
        let busy = self.pinned.get() || channels || next == Some(Duration::ZERO);
        let poll = self.poll.get();
        // SAFETY: the timer and poll handles are live (not closed: `closed` is false).
        unsafe {
            if !poll.is_null() {
                if busy {
                    uv::uv_ref(poll.cast());
                } else {
                    uv::uv_unref(poll.cast());
                }
            }
            match next {
                Some(t) => {
                    uv::uv_update_time(self.uv_loop);
                    uv::uv_timer_start(self.timer, Some(on_timer), ceil_millis(t), 0);
                }
                None => {
                    uv::uv_timer_stop(self.timer);
                }
            }
        }
    }

    /// Keeps the process alive until the next iteration (JS queued a task).
    pub fn keep_alive(&self) {
        let poll = self.poll.get();
        if !poll.is_null() {
            // SAFETY: a non-null poll handle is initialised and not closed.
            unsafe { uv::uv_ref(poll.cast()) };
        }
    }

    /// Asks libuv to run an iteration soon (after JS scheduled work outside an iteration).
    pub fn rearm(&self) {
        if !self.closed.get() {
            self.after_iteration(Iteration::default());
        }
    }

    /// Closes the uv handles and lets go of the JS references. Idempotent.
    pub fn close(&self) {
        if self.closed.replace(true) {
            return;
        }
        self.stop_poll();
        // SAFETY: the timer was initialised in `attach` and is closed exactly once here.
        unsafe {
            uv::uv_timer_stop(self.timer);
            uv::uv_close(self.timer.cast(), Some(free_timer));
        }
        // SAFETY: references and the async context were created in `attach` on this env.
        unsafe {
            sys::napi_delete_reference(self.env, self.dispatch);
            sys::napi_delete_reference(self.env, self.resource);
            sys::napi_async_destroy(self.env, self.async_ctx);
        }
        let me = self as *const Bridge;
        let _ = BRIDGES.try_with(|b| b.borrow_mut().retain(|x| !ptr::eq(Rc::as_ptr(x), me)));
    }

    /// Terminates the loop at once (env teardown): accepted Rust tasks run, JS is not called.
    fn teardown(&self) {
        self.close();
        if let Some(d) = self.driver.borrow_mut().take() {
            d.terminate_now();
        }
    }
}

/// The bridge of the loop with this id, if it lives on this thread.
pub fn find(loop_id: u64) -> Option<Rc<Bridge>> {
    BRIDGES
        .try_with(|b| {
            b.borrow()
                .iter()
                .find(|x| x.handle.id() == loop_id)
                .cloned()
        })
        .ok()
        .flatten()
}

fn ceil_millis(d: Duration) -> u64 {
    let ms = d.as_nanos().div_ceil(1_000_000);
    u64::try_from(ms).unwrap_or(u64::MAX / 2).min(u64::MAX / 2)
}

fn zeroed_poll() -> uv::uv_poll_t {
    // SAFETY: uv_poll_t is a plain C struct for which all-zero bytes are a valid (uninitialised)
    // value; uv_poll_init fills it in before use.
    unsafe { std::mem::zeroed() }
}

fn zeroed_timer() -> uv::uv_timer_t {
    // SAFETY: as for `zeroed_poll`; uv_timer_init fills it in.
    unsafe { std::mem::zeroed() }
}

unsafe extern "C" fn on_poll(handle: *mut uv::uv_poll_t, _status: c_int, _events: c_int) {
    // SAFETY: `data` points to a Bridge kept alive by the registry while its handles are open.
    let bridge = unsafe { &*((*handle).data as *const Bridge) };
    let keep = find(bridge.handle.id());
    if catch_unwind(AssertUnwindSafe(|| bridge.run(true))).is_err() {
        eprintln!("netloop: a panic was stopped at the libuv boundary");
    }
    drop(keep);
}

unsafe extern "C" fn on_timer(handle: *mut uv::uv_timer_t) {
    // SAFETY: as in `on_poll`.
    let bridge = unsafe { &*((*handle).data as *const Bridge) };
    let keep = find(bridge.handle.id());
    if catch_unwind(AssertUnwindSafe(|| bridge.run(false))).is_err() {
        eprintln!("netloop: a panic was stopped at the libuv boundary");
    }
    drop(keep);
}

unsafe extern "C" fn free_poll(handle: *mut uv::uv_handle_t) {
    // SAFETY: the handle was allocated by Box::into_raw in `start_poll` and libuv is done with it.
    drop(unsafe { Box::from_raw(handle.cast::<uv::uv_poll_t>()) });
}

unsafe extern "C" fn free_timer(handle: *mut uv::uv_handle_t) {
    // SAFETY: the handle was allocated by Box::into_raw in `attach` and libuv is done with it.
    drop(unsafe { Box::from_raw(handle.cast::<uv::uv_timer_t>()) });
}

fn install_cleanup_hook(env: sys::napi_env) {
    if HOOKED.with(|h| h.replace(true)) {
        return;
    }
    // SAFETY: registering a plain function with a null argument on the live env.
    unsafe {
        sys::napi_add_env_cleanup_hook(env, Some(cleanup), ptr::null_mut());
    }
}

unsafe extern "C" fn cleanup(_arg: *mut std::ffi::c_void) {
    let _ = catch_unwind(|| {
        TEARING_DOWN.with(|t| t.set(true));
        let all: Vec<Rc<Bridge>> = BRIDGES.with(|b| b.borrow().clone());
        for b in all {
            b.teardown();
        }
    });
}
