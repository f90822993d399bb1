// Generated from archmax_machine::model (crates/machine/src/model/config.rs, limit.rs) by
// `cargo test -p archmax-napi`: do not edit.

/** The whole numbers each endpoint option of `createAgent` accepts, as `[min, max]`. */
export const OPTION_RANGES = {
  requestTimeoutMs: [1, 3600000],
  maxRetries: [0, 10],
  maxResponseBytes: [1024, 1073741824],
  maxConcurrentCalls: [1, 1024],
}
