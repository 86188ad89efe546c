//! An aggregate being decoded: the decoder's stack frame for an array, set, push, map or
//! attribute whose entries have not all arrived.
//!
//! Entries go straight into their final shape (a list, or key-value pairs), so finishing an
//! aggregate moves vectors and copies nothing. An attribute counts its pairs plus one entry:
//! the value it annotates, which comes last.

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

/// An aggregate still waiting for `remaining` entries.
#[derive(Debug)]
pub(crate) struct Frame {
    pub(crate) kind: AggKind,
    pub(crate) remaining: u64,
    list: Vec<RespValue>,
    pairs: Vec<(RespValue, RespValue)>,
    key: Option<RespValue>,
    annotated: Option<RespValue>,
}

impl Frame {
    pub(crate) fn new(kind: AggKind, count: u64) -> Frame {
        let reserve =
            usize::try_from(count).map_or(PREALLOCATED_ENTRIES, |n| n.min(PREALLOCATED_ENTRIES));
        let (list, pairs, remaining) = match kind {
            AggKind::Map => (
                Vec::new(),
                Vec::with_capacity(reserve),
                count.saturating_mul(2),
            ),
            AggKind::Attribute => (
                Vec::new(),
                Vec::with_capacity(reserve),
                count.saturating_mul(2).saturating_add(1),
            ),
            _ => (Vec::with_capacity(reserve), Vec::new(), count),
        };
        Frame {
            kind,
            remaining,
            list,
            pairs,
            key: None,
            annotated: None,
        }
    }

    /// Adds the next entry; true when the aggregate is complete.
    pub(crate) fn push(&mut self, value: RespValue) -> bool {
        match self.kind {
            AggKind::Array | AggKind::Set | AggKind::Push => self.list.push(value),
            AggKind::Attribute if self.remaining == 1 => self.annotated = Some(value),
            AggKind::Map | AggKind::Attribute => match self.key.take() {
                Some(key) => self.pairs.push((key, value)),
                None => self.key = Some(value),
            },
        }
        self.remaining -= 1;
        self.remaining == 0
    }

    pub(crate) fn finish(self) -> RespValue {
        match self.kind {
            AggKind::Array => RespValue::Array(self.list),
            AggKind::Set => RespValue::Set(self.list),
            AggKind::Push => RespValue::Push(self.list),
            AggKind::Map => RespValue::Map(self.pairs),
            AggKind::Attribute => RespValue::Attribute {
                attributes: self.pairs,
                value: Box::new(self.annotated.unwrap_or(RespValue::Null)),
            },
        }
    }
}
