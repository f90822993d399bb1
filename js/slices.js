// The JS thread's slices, shared by every turn and callback of this process. Hand-written.
import { answerCall } from './native.js'
/**
 * Slices: every turn polled on this thread shares it in slices of SLICE_MS, so a thousand
 * sessions whose model answers arrive at once (or start in one tick) do not hold the host's
 * event loop for all their polls in a row. A drive loop about to poll past its slice's end
 * waits for the next slice, which starts after the host's timers and I/O have had their
 * turn (the next check phase, `setImmediate`); loops resume in the order they stopped.
 */
const SLICE_MS = 4
let sliceEnds = 0
const deferred = []

/** True when a poll may run now; opens a slice when none is open. */
export function inSlice() {
  const now = performance.now()
  if (sliceEnds === 0) {
    sliceEnds = now + SLICE_MS
    setImmediate(endSlice)
    return true
  }
  return now < sliceEnds
}

function endSlice() {
  sliceEnds = 0
  for (const resume of deferred.splice(0)) resume()
}

/** Resolves when the caller's turn may poll again (in a later slice). */
export function nextSlice() {
  return new Promise((resolve) => deferred.push(resolve))
}

/**
 * `fn`, an async `(json) => envelope` function, as the native side calls it from a tokio
 * worker (a turn that is not polled here: a host session store's, or one over the
 * `ARCHMAX_*` endpoint): `(id, json) => void`, answering call `id` through `answerCall` once
 * `fn` settles. Node dispatches up to a thousand such calls per wake-up in a row, so each
 * waits for a slice before its work (parsing its input, the host's function), as a drive
 * loop's poll does. Nothing it does throws into the native side.
 */
export function sliced(fn) {
  if (!fn) return fn
  const run = async (json) => {
    while (!inSlice()) await nextSlice()
    return fn(json)
  }
  const answer = (id, envelope, error) => {
    try {
      answerCall(id, envelope, error)
    } catch {
      // The native side is gone (its addon unloaded): nobody waits for this answer.
    }
  }
  return (id, json) => {
    run(json).then(
      (envelope) =>
        typeof envelope === 'string' ? answer(id, envelope, null) : answer(id, null, `it answered ${typeof envelope}, not JSON text`),
      (e) => answer(id, null, e instanceof Error ? e.message : String(e)),
    )
  }
}
