//! Ctrl-C and SIGTERM during a turn: the first signal cancels the turn in flight (it ends
//! `turn-cancelled`, its last committed step kept, the session resumable) and the CLI says
//! so on stderr; a second one, or one while no turn runs, means "quit now".
//!
//! The process's signal handler (the npm shim's `process.on('SIGINT')`, or the cargo
//! binary's) calls [`interrupt`]; the live renderer (`live.rs`) polls [`requested`] while
//! it drives a turn. Library code never exits the process: the handler does.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// What the signal handler should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// The turn in flight is being cancelled: keep running until it reports.
    Cancelling,
    /// Exit at once (a second signal, or no turn to cancel).
    Exit,
}

/// The signals of one process: how many arrived while a turn was driven.
#[derive(Debug, Default)]
struct Signals {
    count: AtomicU32,
    driving: AtomicBool,
}

impl Signals {
    const fn new() -> Signals {
        Signals {
            count: AtomicU32::new(0),
            driving: AtomicBool::new(false),
        }
    }

    fn interrupt(&self) -> Interrupt {
        if !self.driving.load(Ordering::SeqCst) {
            return Interrupt::Exit;
        }
        if self.count.fetch_add(1, Ordering::SeqCst) == 0 {
            Interrupt::Cancelling
        } else {
            Interrupt::Exit
        }
    }

    fn requested(&self) -> bool {
        self.count.load(Ordering::SeqCst) > 0
    }

    fn start(&self) {
        self.count.store(0, Ordering::SeqCst);
        self.driving.store(true, Ordering::SeqCst);
    }

    fn stop(&self) {
        self.driving.store(false, Ordering::SeqCst);
    }
}

static PROCESS: Signals = Signals::new();

/// Records one SIGINT/SIGTERM; what the handler should do about it.
pub fn interrupt() -> Interrupt {
    PROCESS.interrupt()
}

/// Whether a signal asked to cancel the turn being driven.
pub(crate) fn requested() -> bool {
    PROCESS.requested()
}

/// Marks a turn as driven until the guard drops (signals before it are forgotten).
pub(crate) struct Driving(());

impl Driving {
    pub(crate) fn start() -> Driving {
        PROCESS.start();
        Driving(())
    }
}

impl Drop for Driving {
    fn drop(&mut self) {
        PROCESS.stop();
    }
}

/// The line the CLI writes when the first signal arrives.
pub(crate) const HINT: &str = "cancelling the turn: the last completed step is kept and the session can be resumed (press Ctrl-C again to quit at once)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_cancels_a_driven_turn_and_the_second_exits() {
        let signals = Signals::new();
        assert_eq!(signals.interrupt(), Interrupt::Exit, "no turn: quit now");
        signals.start();
        assert!(!signals.requested(), "a signal before the turn is forgotten");
        assert_eq!(signals.interrupt(), Interrupt::Cancelling);
        assert!(signals.requested());
        assert_eq!(signals.interrupt(), Interrupt::Exit);
        signals.stop();
        assert_eq!(signals.interrupt(), Interrupt::Exit);
        signals.start();
        assert!(!signals.requested(), "a new turn starts with no signal");
    }
}
