// The inbox's live log in words: one short sentence per event a person would follow, a
// refusal of a move, a tool or a hook with its reason. Pure (no DOM): served ahead of
// inbox.js, and tested from Node (__test__/inbox-sentences.test.mjs).
'use strict'

// A refusal's reason as shown: its first line, without the kernel's `[workflow] BLOCKED:` mark
// (the whole text is the model's, in the transcript).
function refusalReason (reason) {
  const text = String(reason || '').trimStart()
  const unmarked = text.startsWith('[workflow] BLOCKED:') ? text.slice('[workflow] BLOCKED:'.length) : text
  return unmarked.split('\n')[0].trim()
}

// What a runtime tool's answer refused (`<tool> rejected: <reason>`, the text the model
// reads), or null.
function controlRefusal (e) {
  if (e.type !== 'tool-result' || typeof e.tool !== 'string' || !e.tool.startsWith('archmax_')) return null
  const prefix = `${e.tool} rejected: `
  return typeof e.output === 'string' && e.output.startsWith(prefix) ? e.output.slice(prefix.length) : null
}

function refusedSentence (who, reason) {
  const why = refusalReason(reason)
  return { text: why ? `refused ${who}: ${why}` : `refused ${who}`, refused: true }
}

const ORIGIN = { script: 'from a script', lifecycle: 'from a hook' }
const VERDICT = { ok: 'passed', veto: 'vetoed', correct: 'asked for a correction' }

// One event as `{ text, refused }`, or null for one the log leaves out (streamed pieces,
// usage, a tool's result). `text` is plain text: the page sets it as text, never as HTML.
function eventSentence (e) {
  if (!e || typeof e !== 'object') return null
  const refusal = controlRefusal(e)
  if (refusal !== null) return refusedSentence(e.tool, refusal)
  const said = (text) => ({ text, refused: false })
  const by = e.origin && ORIGIN[e.origin] ? ` ${ORIGIN[e.origin]}` : ''
  switch (e.type) {
    case 'agent-text-delta':
    case 'model-usage':
    case 'tool-result':
    case 'tool-progress':
    case 'skills-loaded':
      return null
    case 'state-enter': return said(`entered ${e.state}`)
    case 'state-leave': return e.state === e.next ? null : said(`left ${e.state} for ${e.next}`)
    case 'advance':
      if (e.from === '__start__') return said(`started at ${e.to}`)
      return said(`moved on to ${e.to}${e.reason && e.reason.trim() ? ': ' + e.reason.trim() : ''}`)
    case 'workflow-reset': return said(`started over at ${e.entry}`)
    case 'state-error-routed': return said(`failed in ${e.state}, routed to ${e.to}: ${e.reason}`)
    case 'raised': return said(`raised ${e.code}: ${e.reason}`)
    case 'agent-text': return e.partial ? said(`said (cut off): ${e.text}`) : said(`said: ${e.text}`)
    case 'tool-called':
      if (e.tool === 'archmax_advance' || e.tool === 'archmax_raise') return null
      return said(`called ${e.tool}${by}`)
    case 'tool-blocked': return refusedSentence(`${e.tool}${by}`, e.reason)
    case 'hook-start': return said(`running the ${e.phase} hook ${e.label}`)
    case 'hook-output': return said(`hook: ${e.line}`)
    case 'hook-verdict': {
      const verdict = VERDICT[e.verdict] || e.verdict
      const reason = e.reason && e.reason.trim() ? `: ${e.reason.trim()}` : ''
      return { text: `the ${e.phase} hook ${e.label} ${verdict}${reason}`, refused: e.verdict === 'veto' }
    }
    case 'hook-rejected': return refusedSentence(`by the ${e.phase} hook`, e.reason)
    case 'rubric-start': return said(`grading the rubric ${e.name}`)
    case 'rubric-result': return said(e.status === 'ok' ? `graded the rubric ${e.name}` : `could not grade the rubric ${e.name}`)
    case 'parked':
      if (e.awaiting === 'decision') return said(`waiting for a decision at ${e.state}`)
      return said(`waiting for input in ${e.state}${e.reason ? ': ' + e.reason : ''}${e.resumeAt ? ' (due ' + e.resumeAt + ')' : ''}`)
    case 'decided': return said(`decided for ${e.to}`)
    case 'delivered': return said(`${e.trigger} delivered, resuming ${e.state}`)
    case 'park-message': return e.direction === 'inbound' ? said(`message to the session: ${e.text}`) : null
    case 'variables-set': return said(`set ${(e.names || []).join(', ')}${e.locked ? ' (locked)' : ''}`)
    case 'title-set': return said(`titled "${e.title}"`)
    case 'sub-workflow-start': return said(`started the sub-workflow ${e.workflow}`)
    case 'sub-workflow-result':
      if (e.status === 'ok') return said(`the sub-workflow ${e.workflow} answered`)
      if (e.status === 'parked') return said(`the sub-workflow ${e.workflow} parked; this session waits with it`)
      return { text: `the sub-workflow ${e.workflow} failed${e.reason ? ': ' + e.reason : ''}`, refused: false }
    case 'warning': return said(`warning (${e.scope}): ${e.message}`)
    case 'model-fallback': return said(`the model ${e.from} failed, switched to ${e.to}`)
    case 'model-queued': return said(`waited ${Number(e.waitedMs) || 0} ms for the model (it takes ${e.limit} calls at once)`)
    default: return said(`${e.type}${e.state ? ' ' + e.state : ''}`)
  }
}
