// The JS thread's slices, shared by every turn and callback of this process. Hand-written.
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
 * `fn` for a call that reaches this thread from a tokio worker (a turn that is not polled
 * here: a host session store's, or one over the `ARCHMAX_*` endpoint): Node dispatches up to a
 * thousand such calls per wake-up in a row, so each waits for a slice before its work (parsing
 * its input, the host's function), as a drive loop's poll does.
 */
export function sliced(fn) {
  if (!fn) return fn
  return async (...args) => {
    while (!inSlice()) await nextSlice()
    return fn(...args)
  }
}
