//! Pipeline structure by name: add first/last/before/after, remove, replace, duplicates and unknown names.

use crate::common;

use common::{log, reads, take, Recorder};
use netloop_transport::*;

#[test]
fn duplicate_handler_names_are_rejected() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![("a", Recorder::rc("a", &l))]);
    let err = ch
        .pipeline()
        .add_last("a", Recorder::rc("a2", &l))
        .err()
        .unwrap();
    assert_eq!(err.code(), "ERR_DUPLICATE_HANDLER_NAME");
    let err = ch
        .pipeline()
        .add_first("a", Recorder::rc("a3", &l))
        .err()
        .unwrap();
    assert_eq!(err.code(), "ERR_DUPLICATE_HANDLER_NAME");
    ch.pipeline().add_last("b", Recorder::rc("b", &l)).unwrap();
    let err = ch
        .pipeline()
        .replace("b", "a", Recorder::rc("x", &l))
        .err()
        .unwrap();
    assert_eq!(err.code(), "ERR_DUPLICATE_HANDLER_NAME");
    assert_eq!(ch.pipeline().names(), ["a", "b"]);
}

#[test]
fn unknown_names_fail_with_no_such_handler() {
    let ch = EmbeddedChannel::new(vec![]);
    assert_eq!(
        ch.pipeline().remove("nope").err().unwrap().code(),
        "ERR_NO_SUCH_HANDLER"
    );
    let l = log();
    let err = ch
        .pipeline()
        .add_before("nope", "x", Recorder::rc("x", &l))
        .err()
        .unwrap();
    assert_eq!(err.code(), "ERR_NO_SUCH_HANDLER");
    assert!(take(&l).is_empty());
}

#[test]
fn add_first_last_before_after_place_handlers_by_name() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![("m", Recorder::rc("m", &l))]);
    let p = ch.pipeline();
    p.add_first("first", Recorder::rc("first", &l)).unwrap();
    p.add_last("last", Recorder::rc("last", &l)).unwrap();
    p.add_before("m", "before_m", Recorder::rc("before_m", &l))
        .unwrap();
    p.add_after("m", "after_m", Recorder::rc("after_m", &l))
        .unwrap();
    assert_eq!(p.names(), ["first", "before_m", "m", "after_m", "last"]);
    take(&l);
    ch.write_inbound(Bytes::from_static(b"x"));
    assert_eq!(
        reads(&l),
        [
            "first:read",
            "before_m:read",
            "m:read",
            "after_m:read",
            "last:read"
        ]
    );
}

#[test]
fn replace_calls_new_added_before_old_removed_and_takes_its_place() {
    let l = log();
    let ch = EmbeddedChannel::new(vec![
        ("a", Recorder::rc("a", &l)),
        ("b", Recorder::rc("b", &l)),
    ]);
    take(&l);
    ch.pipeline()
        .replace("a", "c", Recorder::rc("c", &l))
        .unwrap();
    assert_eq!(take(&l), ["c:added", "a:removed"]);
    assert_eq!(ch.pipeline().names(), ["c", "b"]);
    ch.write_inbound(Bytes::from_static(b"x"));
    assert_eq!(reads(&l), ["c:read", "b:read"]);
}
