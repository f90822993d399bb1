//! `archmax-machine`: the runtime (in progress).

pub mod clock;
pub mod control;
pub mod events;
pub mod prompt;
pub mod state;
pub mod substitute;
pub mod tooldefs;
