//! An aggregate being decoded: the decoder's stack frame for an array, set, push, map or
//! attribute whose entries have not all arrived.
//!
//! Entries are collected in one flat list, which becomes the array, set or push as is; a map
//! (or an attribute's map) is paired up when complete. An attribute counts its pairs plus one
//! entry: the value it annotates, which comes last.

use crate::config::PREALLOCATED_ENTRIES;
use crate::value::RespValue;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AggKind {
    Array,
    Set,
    Push,
    Map,
    Attribute,
}

/// An aggregate still waiting for `remaining` entries. Kept small (it is pushed and popped
/// once per aggregate): entries are collected flat and maps are paired when complete.
#[derive(Debug)]
pub(crate) struct Frame {
    pub(crate) kind: AggKind,
    pub(crate) remaining: u64,
    items: Vec<RespValue>,
}

impl Frame {
    pub(crate) fn new(kind: AggKind, count: u64) -> Frame {
        let remaining = match kind {
            AggKind::Map => count.saturating_mul(2),
            AggKind::Attribute => count.saturating_mul(2).saturating_add(1),
            _ => count,
        };
        let reserve = usize::try_from(remaining)
            .map_or(PREALLOCATED_ENTRIES, |n| n.min(PREALLOCATED_ENTRIES));
        Frame {
            kind,
            remaining,
            items: Vec::with_capacity(reserve),
        }
    }

    /// Adds the next entry; true when the aggregate is complete.
    pub(crate) fn push(&mut self, value: RespValue) -> bool {
        self.items.push(value);
        self.remaining -= 1;
        self.remaining == 0
    }

    pub(crate) fn finish(self) -> RespValue {
        match self.kind {
            AggKind::Array => RespValue::Array(self.items),
            AggKind::Set => RespValue::Set(self.items),
            AggKind::Push => RespValue::Push(self.items),
            AggKind::Map => RespValue::Map(pairs(self.items)),
            AggKind::Attribute => {
                let mut items = self.items;
                let value = items.pop().unwrap_or(RespValue::Null);
                RespValue::Attribute {
                    attributes: pairs(items),
                    value: Box::new(value),
                }
            }
        }
    }
}

/// `[k1, v1, k2, v2, ...]` as `[(k1, v1), (k2, v2), ...]`.
fn pairs(items: Vec<RespValue>) -> Vec<(RespValue, RespValue)> {
    let mut out = Vec::with_capacity(items.len() / 2);
    let mut items = items.into_iter();
    while let (Some(key), Some(value)) = (items.next(), items.next()) {
        out.push((key, value));
    }
    out
}
