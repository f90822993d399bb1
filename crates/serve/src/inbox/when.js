// Times in the inbox, relative to now ("3 h ago", "in 20 min"), the exact ISO time beside
// them as a tooltip. Pure (no DOM, the clock passed in): served ahead of inbox.js, tested
// from Node (__test__/inbox-text.test.mjs).
'use strict'

// Epoch milliseconds of an ISO text or a number, or null.
function instant (when) {
  if (typeof when === 'number' && Number.isFinite(when)) return when
  if (typeof when !== 'string' || !when.trim()) return null
  const ms = Date.parse(when)
  return Number.isFinite(ms) ? ms : null
}

// `ms` relative to `now`: "just now", "42 s ago", "3 min ago", "5 h ago", "2 d ago", or
// "in 20 min" for a time still to come.
function relativeTime (ms, now) {
  const d = Math.round((now - ms) / 1000)
  const s = Math.abs(d)
  if (s < 5) return 'just now'
  let span
  if (s < 60) span = `${s} s`
  else if (s < 3600) span = `${Math.floor(s / 60)} min`
  else if (s < 86400) span = `${Math.floor(s / 3600)} h`
  else span = `${Math.floor(s / 86400)} d`
  return d >= 0 ? `${span} ago` : `in ${span}`
}
