// A typed consumer of `@archmax-ai/harness/messages` and `@archmax-ai/harness/sandbox`
// (checked by `npx tsc -p __test__`, strict).
import {
  contentToString,
  isAiMessage,
  isHumanMessage,
  isRuntimeNote,
  lastAgentText,
  lastTurn,
  messageTypeOf,
  messagesSince,
  opensTurn,
  runtimeNoteKind,
  type RuntimeNoteKind,
} from '@archmax-ai/harness/messages'
import { lastAgentText as rootLastAgentText, type RuntimeNoteKind as RootNoteKind } from '@archmax-ai/harness'
import {
  correct,
  defineHook,
  ok,
  veto,
  type HookArgs,
  type HookFn,
  type HookInput,
  type HookMessage,
  type HookResult,
  type HookVerdict,
  type SandboxTools,
  type TrailStep,
} from '@archmax-ai/harness/sandbox'

// --- messages ---
type Line = { role: string; content: string }
const transcript: Line[] = [
  { role: 'user', content: 'hi' },
  { role: 'assistant', content: 'hello' },
]
const reply: string = lastAgentText(transcript)
const same: typeof lastAgentText = rootLastAgentText
const since: Line[] = messagesSince(transcript, 1)
const turn: Line[] = lastTurn(transcript)
const kind: RuntimeNoteKind | null = runtimeNoteKind(transcript[0])
const rootKind: RootNoteKind = 'budget'
const flags: boolean[] = [isAiMessage(since[0]), isHumanMessage(turn[0]), isRuntimeNote({}), opensTurn(null)]
const text: string = contentToString([{ type: 'text', text: 'a' }]) + messageTypeOf(transcript[1])
function describe(k: RuntimeNoteKind): string {
  switch (k) {
    case 'decision':
    case 'event':
    case 'error':
    case 'after':
    case 'sub-workflow':
    case 'opening':
    case 'budget':
      return k
  }
}
// @ts-expect-error: not a note kind
const badKind: RuntimeNoteKind = 'gossip'

// --- sandbox ---
const gate = defineHook(async (input: HookInput) => {
  if (input.phase === 'before') return ok()
  const notes: HookMessage[] = input.messages.filter((m) => m.role === 'runtime' && m.note === 'after')
  const calls = input.messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.name)
  const file: string = await input.tools.readFile({ file_path: 'scratchpad/refund.json', limit: 2000 })
  const listing: string = await input.tools.ls()
  const host: string = await input.tools.crmLookup({ email: 'a@b.test' })
  if (file.startsWith('Error:')) return correct(`write the file first (${notes.length} notes, ${calls.length} calls, ${listing}, ${host})`)
  return input.to === 'closed' ? veto('not closed') : true
})
const fn: HookFn = gate
const plain: HookFn = defineHook(({ variables, from, to, reason, trigger }) => (variables.ok ? undefined : { verdict: 'veto', reason: `${from}→${to} ${reason ?? ''} ${trigger ?? ''}` }))
const verdicts: HookVerdict[] = [ok(), veto(), correct('x'), { verdict: 'ok' }]
const results: HookResult[] = [true, false, undefined, null, ok('fine')]
const vetoReason: 'veto' = veto('x').verdict
const args: HookArgs = { state: 's', phase: 'after', variables: {}, messages: [{ role: 'user', text: 'hi' }] }
const step: TrailStep = { to: 'review', kind: 'agent', ts: 0 }
declare const tools: SandboxTools
void tools.grep({ pattern: 'KK-', glob: '*.json' })
void tools.copyFile({ source: 'a', destination: 'b', overwrite: true })
// @ts-expect-error: read_file needs a path
void tools.readFile({ limit: 1 })
// @ts-expect-error: not a verdict word
const badVerdict: HookVerdict = { verdict: 'maybe' }
// @ts-expect-error: a hook cannot answer a string
const badHook: HookFn = () => 'ok'
// @ts-expect-error: phase is before or after
const badArgs: HookArgs = { state: 's', phase: 'during', variables: {}, messages: [] }

export { reply, same, kind, rootKind, flags, text, describe, badKind, fn, plain, verdicts, results, vetoReason, args, step, badVerdict, badHook, badArgs }

// --- deepagents ---
import { archmaxMiddleware, type ArchmaxInterrupt, type ArchmaxMiddleware } from '@archmax-ai/harness/deepagents'
import { createDeepAgent } from 'deepagents'
import { createAgent as createLangChainAgent, FakeToolCallingModel, type AgentMiddleware } from 'langchain'
import { MemorySaver } from '@langchain/langgraph'
const middleware: ArchmaxMiddleware = archmaxMiddleware({ workflow: 'order-lookup', workspace: { rootDir: '.' } })
const middlewareName: 'ArchmaxMiddleware' = middleware.name
void middlewareName
// Where users put it (docs/deepagents.md): in createDeepAgent's and LangChain's createAgent's
// `middleware`, under --strict, against the deepagents and langchain the package supports.
const langchainModel = new FakeToolCallingModel({})
const deepAgent = createDeepAgent({ model: langchainModel, middleware: [archmaxMiddleware({ workflow: 'order-lookup', workspace: { rootDir: '.' } })], checkpointer: new MemorySaver() })
const langchainAgent = createLangChainAgent({ model: langchainModel, middleware: [middleware], checkpointer: new MemorySaver() })
const asLangChain: AgentMiddleware = middleware
void [deepAgent.invoke, langchainAgent.invoke, asLangChain, middleware.dispose(), middleware.harness()]
// @ts-expect-error the workflow slug is required
archmaxMiddleware({ workspace: { rootDir: '.' } })
function parkedAt(p: ArchmaxInterrupt): string {
  const who: string = p.sessionId
  const approvers: string[] = p.approvers ?? []
  void [who, approvers, p.instructions]
  return p.channel === 'decision' ? `${p.state} #${p.seq}: ${p.transitions.map((t) => t.to).join('|')}` : `${p.state}: ${p.reason}`
}
void parkedAt

// --- testing ---
import {
  runTests,
  parseCaseDocument,
  reduceVerdict,
  exitCodeForVerdict,
  CASE_TITLE_MAX_LENGTH,
  type CaseResult,
  type RunTestsResult,
} from '@archmax-ai/harness/testing'
async function suite(): Promise<number> {
  const r: RunTestsResult = await runTests({
    workflow: 'order-lookup',
    rootDir: '.',
    model: async () => ({ role: 'assistant', content: 'done' }),
    onCaseResult: (c: CaseResult) => void c.verdict.failures.join('\n'),
  })
  const first = r.results[0]
  const status: 'passed' | 'failed' | 'skipped' | undefined = first?.verdict.status
  const graded: Array<number | null> = (first?.records ?? []).map((x) => x.threshold)
  void [status, graded]
  return r.exitCode
}
const doc = parseCaseDocument('workflows/w/tests/t.test.yaml', 'title: t\ndescription: d\n', 'workflows/w/tests')
const limit: 60 = CASE_TITLE_MAX_LENGTH
const code: 0 | 1 = exitCodeForVerdict(reduceVerdict([], null))
void [suite, doc.title, limit, code]
// @ts-expect-error the workflow slug is required
runTests({ rootDir: '.' })

import {
  assertWorkflowGovernedTarget,
  createCaseTarget,
  createToolMockMiddleware,
  runCase,
  serializeCaseDocument,
  type CaseCassettes,
} from '@archmax-ai/harness/testing'
import { createAgent, type Agent } from '@archmax-ai/harness'
async function oneCase(): Promise<string> {
  const mode: CaseCassettes = 'replay'
  const target = await createCaseTarget({ workflow: 'order-lookup', rootDir: '.', cassettes: mode })
  const flagged: boolean = target.toolMocks
  const host: Agent = await createAgent({ workflow: 'order-lookup', middleware: [createToolMockMiddleware()] })
  assertWorkflowGovernedTarget(host, 'order-lookup')
  const governed: string = typeof host.workflow.send
  const r: CaseResult = await runCase({ agent: target, file: 'workflows/order-lookup/tests/a.test.yaml', sessionId: 's', caseTimeoutMs: 1000 })
  const s: RunTestsResult = await runTests({ workflow: 'order-lookup', cassettes: 'record' })
  void [flagged, governed, s]
  return serializeCaseDocument(parseCaseDocument('t.test.yaml', 'title: t\ndescription: d\n')) + r.verdict.status
}
void oneCase
// @ts-expect-error cassettes are 'record' or 'replay'
runTests({ workflow: 'order-lookup', cassettes: 'live' })
// @ts-expect-error only the tool-mock marker is middleware here
createAgent({ middleware: [{ name: 'Other' }] })
