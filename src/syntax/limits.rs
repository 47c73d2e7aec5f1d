//! How deeply a program may nest, and the stack that depth needs.
//!
//! Every phase after parsing — checking, type flow, lowering, evaluation,
//! printing, and cloning the trees — follows the syntax tree by recursion.
//! The parser refuses a statement nested deeper than [`MAX_DEPTH`] (the
//! `hql::too_deep` error) and the syntax tree is dropped by a loop, so no
//! phase recurses deeper than that over one statement. [`STACK_BYTES`] is a
//! stack on which every phase is safe at that depth with a wide margin, and
//! [`with_stack`] runs a job on a thread that has it: the `hql` command runs
//! everything that way, and a program that embeds the library should too.
//!
//! Calls of declared functions multiply that depth (a function may call
//! itself from deep inside its body), so the evaluator also stops a call
//! when [`stack_nearly_full`] says the thread's stack is close to its end.

use std::cell::Cell;
use std::thread::{Scope, ScopedJoinHandle};

/// The deepest a statement may nest: every bracket, operator, call, field
/// access, pipeline stage, `if`, lambda and type argument inside another
/// is one level.
pub const MAX_DEPTH: usize = 1000;

/// The stack [`with_stack`] gives a job. It is address space: only the
/// part a job uses is ever backed by memory.
pub const STACK_BYTES: usize = 256 << 20;

/// What is kept free at the end of the stack: far more than any one
/// statement needs at [`MAX_DEPTH`] (about 1.5 MB unoptimised), so a call
/// refused at this mark leaves room to report it.
const RESERVE: usize = 32 << 20;

thread_local! {
    /// The address below which this thread's stack is nearly full; 0 on a
    /// thread not started here (nothing is known of its stack).
    static STACK_MARK: Cell<usize> = const { Cell::new(0) };
}

/// Where this function's frame is: near the top of the stack in use
/// (stacks grow down on every platform Rust supports for this).
#[inline(never)]
fn stack_position() -> usize {
    let here = 0u8;
    std::hint::black_box(&here) as *const u8 as usize
}

/// Is the stack of this thread close to its end? Always `false` on a
/// thread not started by [`with_stack`] or [`spawn_scoped`].
pub fn stack_nearly_full() -> bool {
    let mark = STACK_MARK.with(Cell::get);
    mark != 0 && stack_position() < mark
}

/// Start a scoped thread with a stack of [`STACK_BYTES`], its end watched
/// by [`stack_nearly_full`].
pub fn spawn_scoped<'scope, T: Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    job: impl FnOnce() -> T + Send + 'scope,
) -> std::io::Result<ScopedJoinHandle<'scope, T>> {
    std::thread::Builder::new()
        .name("hql".into())
        .stack_size(STACK_BYTES)
        .spawn_scoped(scope, move || {
            let mark = stack_position().saturating_sub(STACK_BYTES - RESERVE);
            STACK_MARK.with(|m| m.set(mark));
            job()
        })
}

/// Run `job` on a thread with a stack of [`STACK_BYTES`] and wait for it;
/// on this thread when no such thread can be made. A panic in `job` goes
/// on as a panic here.
pub fn with_stack<T: Send>(job: impl FnOnce() -> T + Send) -> T {
    let slot = std::sync::Mutex::new(Some(job));
    let take = || slot.lock().ok().and_then(|mut s| s.take());
    std::thread::scope(|scope| {
        let done = match spawn_scoped(scope, || take().map(|job| job())) {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => None,
        };
        match done {
            Some(value) => value,
            None => take().map(|job| job()).expect("the job runs once"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recurse `n` deep with about 256 bytes a frame; stop early, with the
    /// depth reached, when the stack is nearly full.
    fn descend(n: u64) -> u64 {
        let pad = std::hint::black_box([0u8; 256]);
        if n == 0 || stack_nearly_full() {
            return u64::from(pad[0]);
        }
        1 + descend(n - 1) + u64::from(pad[1])
    }

    #[test]
    fn jobs_run_on_a_deep_stack() {
        // About 30 MB of frames: more than a default thread has.
        assert_eq!(with_stack(|| descend(100_000)), 100_000);
        assert!(!stack_nearly_full());
    }

    #[test]
    fn the_end_of_the_stack_is_seen_before_it_is_reached() {
        // 2.5 GB of frames would overflow: the descent stops near the end.
        let reached = with_stack(|| descend(10_000_000));
        assert!(reached > 100_000 && reached < 10_000_000, "{reached}");
    }
}
