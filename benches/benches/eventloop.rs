//! Criterion benches of the event-loop core.
//!
//! `cargo bench -p netloop-benches --bench eventloop`

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use netloop_eventloop::{EventLoop, LoopConfig};

const TASKS_PER_PRODUCER: usize = 100_000;

fn execute_throughput(c: &mut Criterion) {
    let mut g = c.benchmark_group("execute_cross_thread");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    for producers in [1usize, 2] {
        g.throughput(Throughput::Elements(
            (producers * TASKS_PER_PRODUCER) as u64,
        ));
        g.bench_with_input(
            BenchmarkId::from_parameter(format!("{producers}_producers")),
            &producers,
            |b, &producers| {
                let el = EventLoop::standalone(LoopConfig::default()).unwrap();
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let done = Arc::new(AtomicUsize::new(0));
                        let start = Instant::now();
                        let threads: Vec<_> = (0..producers)
                            .map(|_| {
                                let (el, done) = (el.clone(), done.clone());
                                std::thread::spawn(move || {
                                    for _ in 0..TASKS_PER_PRODUCER {
                                        let d = done.clone();
                                        el.execute(move || {
                                            d.fetch_add(1, Ordering::Relaxed);
                                        })
                                        .unwrap();
                                    }
                                })
                            })
                            .collect();
                        for t in threads {
                            t.join().unwrap();
                        }
                        while done.load(Ordering::Relaxed) < producers * TASKS_PER_PRODUCER {
                            std::hint::spin_loop();
                        }
                        total += start.elapsed();
                    }
                    total
                });
                el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5))
                    .wait()
                    .unwrap();
            },
        );
    }
    g.finish();
}

fn wakeup_latency(c: &mut Criterion) {
    let mut g = c.benchmark_group("wakeup_latency");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    g.bench_function("sleeping_standalone_loop_execute_to_run", |b| {
        let el = EventLoop::standalone(LoopConfig::default()).unwrap();
        let seen = Arc::new(AtomicU64::new(0));
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // Give the loop time to fall asleep in epoll_wait.
                std::thread::sleep(Duration::from_micros(200));
                seen.store(0, Ordering::SeqCst);
                let s = seen.clone();
                let posted = Instant::now();
                el.execute(move || {
                    s.store(posted.elapsed().as_nanos() as u64 + 1, Ordering::SeqCst)
                })
                .unwrap();
                let ns = loop {
                    let v = seen.load(Ordering::SeqCst);
                    if v != 0 {
                        break v - 1;
                    }
                    std::hint::spin_loop();
                };
                total += Duration::from_nanos(ns);
            }
            total
        });
        el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(5))
            .wait()
            .unwrap();
    });
    g.finish();
}

fn timers(c: &mut Criterion) {
    let mut g = c.benchmark_group("timers");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    g.throughput(Throughput::Elements(100_000));
    g.bench_function("schedule_and_cancel_100k", |b| {
        let (el, driver) = EventLoop::attached(LoopConfig::default()).unwrap();
        let local = el.local().unwrap();
        b.iter(|| {
            let mut handles = Vec::with_capacity(100_000);
            for i in 0..100_000u64 {
                handles.push(local.schedule_local(Duration::from_millis(1000 + i % 5000), || {}));
            }
            for h in &handles {
                black_box(h.cancel());
            }
            driver.run_once();
        });
    });
    g.finish();
}

fn idle_iteration(c: &mut Criterion) {
    let mut g = c.benchmark_group("iteration");
    g.bench_function("idle_attached_iteration", |b| {
        let (_el, driver) = EventLoop::attached(LoopConfig::default()).unwrap();
        b.iter(|| black_box(driver.run_once()));
    });
    g.finish();
}

criterion_group!(
    benches,
    execute_throughput,
    wakeup_latency,
    timers,
    idle_iteration
);
criterion_main!(benches);
