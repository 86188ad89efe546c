//! [`Slots`]: values a JS object names by a small id (frozen HTTP responses, shared files):
//! a freed id is reused first, so the table stays as small as the most ever alive at once.
//!
//! Ground rule: each table is a thread's (`thread_local!`): the JS object, the call that files
//! its value and the loop that applies the ops naming the id are on one JS thread.

/// Values by id; `None`: a free id.
pub struct Slots<T>(Vec<Option<T>>);

impl<T: Clone> Slots<T> {
    pub const fn new() -> Self {
        Slots(Vec::new())
    }

    /// Files `value`; its id.
    pub fn insert(&mut self, value: T) -> u32 {
        match self.0.iter().position(Option::is_none) {
            Some(i) => {
                self.0[i] = Some(value);
                i as u32
            }
            None => {
                self.0.push(Some(value));
                (self.0.len() - 1) as u32
            }
        }
    }

    /// A clone of the value filed under `id`, if it is still there.
    pub fn get(&self, id: usize) -> Option<T> {
        self.0.get(id).cloned().flatten()
    }

    /// The value filed under `id`, if it is still there.
    pub fn get_ref(&self, id: usize) -> Option<&T> {
        self.0.get(id).and_then(Option::as_ref)
    }

    /// Frees `id` (nothing if it is free already).
    pub fn remove(&mut self, id: usize) {
        if let Some(slot) = self.0.get_mut(id) {
            *slot = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_id_is_reused_first_and_reads_as_empty_until_then() {
        let mut s = Slots::new();
        assert_eq!((s.insert('a'), s.insert('b'), s.insert('c')), (0, 1, 2));
        s.remove(1);
        s.remove(1);
        assert_eq!(s.get(1), None);
        assert_eq!(s.get(7), None);
        assert_eq!(s.insert('d'), 1);
        assert_eq!(
            (s.get(0), s.get(1), s.get(2)),
            (Some('a'), Some('d'), Some('c'))
        );
    }
}
