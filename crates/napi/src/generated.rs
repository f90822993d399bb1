//! JS modules generated from Rust lists, so no JS copies one: `generated/errors.js`, the
//! error classes (from `archmax_machine::ErrorClass`), and `generated/note-kinds.js`, the
//! runtime note kinds (`archmax_machine::notes::NoteKind`; browser-safe, it imports nothing),
//! and `generated/limits.js`, the ranges `createAgent`'s endpoint options accept (the model
//! configuration's bounds).
//! `cargo test -p archmax-napi` writes them (as ts-rs writes `types/`); CI fails when the
//! committed files differ.

use archmax_machine::ErrorClass;
use archmax_machine::notes::NoteKind;

/// The text of `generated/note-kinds.js`.
pub(crate) fn note_kinds_js() -> String {
    let kinds: Vec<String> = NoteKind::ALL
        .iter()
        .map(|k| format!("'{}'", k.as_str()))
        .collect();
    format!(
        "// Generated from archmax_machine::notes::NoteKind (crates/machine/src/notes.rs) by\n\
         // `cargo test -p archmax-napi`: do not edit.\n\n\
         /** The kinds a runtime note carries (`archmax: {{ note: <kind> }}`). */\n\
         export const NOTE_KINDS = [{}]\n",
        kinds.join(", ")
    )
}

/// The text of `generated/limits.js`: each endpoint option's `[min, max]`, from the constants
/// the assembly checks them against.
pub(crate) fn limits_js() -> String {
    use archmax_machine::model::{
        MAX_REQUEST_TIMEOUT_MS, MAX_RESPONSE_BYTES_LIMIT, MAX_RETRIES_LIMIT,
    };
    let ranges: [(&str, u64, u64); 4] = [
        ("requestTimeoutMs", 1, MAX_REQUEST_TIMEOUT_MS),
        ("maxRetries", 0, u64::from(MAX_RETRIES_LIMIT)),
        ("maxResponseBytes", 1024, MAX_RESPONSE_BYTES_LIMIT),
        (
            "maxConcurrentCalls",
            1,
            u64::from(archmax_machine::model::limit::MAX_CONCURRENT_CALLS_LIMIT),
        ),
    ];
    let mut out = String::from(
        "// Generated from archmax_machine::model (crates/machine/src/model/config.rs, limit.rs) by\n\
         // `cargo test -p archmax-napi`: do not edit.\n\n\
         /** The whole numbers each endpoint option of `createAgent` accepts, as `[min, max]`. */\n\
         export const OPTION_RANGES = {\n",
    );
    for (name, min, max) in ranges {
        out.push_str(&format!("  {name}: [{min}, {max}],\n"));
    }
    out.push_str("}\n");
    out
}

/// The text of `generated/errors.js`.
pub(crate) fn errors_js() -> String {
    let mut out = String::from(
        "// Generated from archmax_machine::ErrorClass (crates/machine/src/error.rs) by\n\
         // `cargo test -p archmax-napi`: do not edit.\n\
         import { HarnessError } from '../js/harness-error.js'\n\n\
         /** The class named `code`: a `HarnessError` whose `name` and `code` are `code`. */\n\
         const define = (code) =>\n  \
         ({ [code]: class extends HarnessError { constructor(message) { super(message, code) } } })[code]\n\n",
    );
    for class in ErrorClass::ALL {
        let name = class.name();
        let export = if class.exported() { "export " } else { "" };
        out.push_str(&format!("{export}const {name} = define('{name}')\n"));
    }
    out.push_str("\n/** The exported error classes by name. */\nexport const errors = {\n");
    for class in ErrorClass::ALL.iter().filter(|c| c.exported()) {
        out.push_str(&format!("  {},\n", class.name()));
    }
    out.push_str("}\n\n/** Every class the native side may name, exported or not. */\nexport const errorClasses = {\n  ...errors,\n");
    for class in ErrorClass::ALL.iter().filter(|c| !c.exported()) {
        out.push_str(&format!("  {},\n", class.name()));
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Writes the generated modules (CI then checks they are the committed ones).
    #[test]
    fn generated_modules_are_written() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dir = root.join("generated");
        std::fs::create_dir_all(&dir).expect("generated/");
        for (name, text) in [
            ("errors.js", super::errors_js()),
            ("note-kinds.js", super::note_kinds_js()),
            ("limits.js", super::limits_js()),
        ] {
            let path = dir.join(name);
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                std::fs::write(&path, text).expect("write a generated module");
            }
        }
    }
}
