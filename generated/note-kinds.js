// Generated from archmax_machine::notes::NoteKind (crates/machine/src/notes.rs) by
// `cargo test -p archmax-napi`: do not edit.

/** The kinds a runtime note carries (`archmax: { note: <kind> }`). */
export const NOTE_KINDS = ['decision', 'event', 'error', 'after', 'sub-workflow', 'opening', 'budget']
