//! `archmax-machine`: the runtime (in progress).

pub mod clock;
pub mod events;
pub mod state;
