//! gguf patch: a per-thread budget for the text that formatting values makes.
//!
//! Fuel pays for what instructions create, but formatting a value (`~`, `format`, `join`,
//! `string`, printing a list) writes its whole text first: a list that repeats one long string
//! ten million times is cheap to build (the items share the string) and terabytes to format.
//! Inside [`with_budget`], every string written while formatting a value spends its length,
//! every container item a few bytes more; once the budget is spent, formatting writes nothing
//! more and the engine stops at its next instruction with an error that says so.
//! Outside [`with_budget`] nothing is counted.

use std::cell::Cell;

use crate::error::{Error, ErrorKind};

/// What a container item costs besides its text: enough that formatting a huge list of empty
/// strings is bounded too.
pub const ITEM_BYTES: usize = 32;

/// The message of the error a spent budget gives.
pub const SPENT: &str = "the formatting budget is spent";

thread_local! {
    // Bytes left, or `None` when no budget is set.
    static LEFT: Cell<Option<u64>> = const { Cell::new(None) };
    static SPENT_FLAG: Cell<bool> = const { Cell::new(false) };
}

struct Restore(Option<u64>, bool);

impl Drop for Restore {
    fn drop(&mut self) {
        LEFT.with(|l| l.set(self.0));
        SPENT_FLAG.with(|s| s.set(self.1));
    }
}

/// Runs `f` with `bytes` of formatting budget on this thread (the previous budget, if any,
/// is restored afterwards).
pub fn with_budget<R>(bytes: u64, f: impl FnOnce() -> R) -> R {
    let _restore = Restore(
        LEFT.with(|l| l.replace(Some(bytes))),
        SPENT_FLAG.with(|s| s.replace(false)),
    );
    f()
}

/// Spends `n` bytes; `false` once the budget is spent (then it stays spent).
pub fn spend(n: usize) -> bool {
    LEFT.with(|l| match l.get() {
        None => true,
        Some(left) => match left.checked_sub(n as u64) {
            Some(rest) if !SPENT_FLAG.with(|s| s.get()) => {
                l.set(Some(rest));
                true
            }
            _ => {
                l.set(Some(0));
                SPENT_FLAG.with(|s| s.set(true));
                false
            }
        },
    })
}

/// Whether the budget is spent.
pub fn is_spent() -> bool {
    SPENT_FLAG.with(|s| s.get())
}

/// Spends `n` bytes, or gives the error of a spent budget.
pub fn charge(n: usize) -> Result<(), Error> {
    if spend(n) {
        Ok(())
    } else {
        Err(spent_error())
    }
}

/// The error once the budget is spent, `Ok` before.
pub fn check() -> Result<(), Error> {
    if is_spent() {
        Err(spent_error())
    } else {
        Ok(())
    }
}

fn spent_error() -> Error {
    Error::new(ErrorKind::InvalidOperation, SPENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spends_and_stays_spent() {
        assert!(spend(1 << 40), "no budget outside with_budget");
        with_budget(10, || {
            assert!(spend(6));
            assert!(!spend(6));
            assert!(is_spent());
            assert!(!spend(0));
            assert!(check().is_err());
        });
        assert!(!is_spent());
    }
}
