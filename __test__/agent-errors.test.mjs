// Every error class createAgent and its agent raise, provoked through the JS API: the
// class chain, `name`, `code`, the message (public-api digest §12) and the original's
// fields. Also `agent.runtimeContract` (§3) and the assembly order that decides which
// refusal wins (§2.2).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import {
  AgentDisposedError,
  createAgent,
  createMemorySessionStore,
  EmptyMessageError,
  HarnessError,
  InvalidDecisionTargetError,
  InvalidVariableNameError,
  MissingDeliveryTriggerError,
  MountCollisionError,
  ReservedToolNameError,
  SessionNotAwaitingInputError,
  SessionNotParkedError,
  SessionNotResumableError,
  SessionStoreCapabilityError,
  SessionStoreIdError,
  ToolPathsError,
  UnknownTriggerError,
  UnsupportedRuntimeContractError,
  WorkflowDisabledError,
  WorkflowLoadError,
} from '@archmax-ai/harness'
import { BROKEN_SPEC, advance, call, say, scripted, workspace } from './helpers.mjs'

const SUPPORTED = ['archmax-harness@1', 'archmax-harness@2']

const wait = (reason) => ({ role: 'assistant', content: null, tool_calls: [call('archmax_wait', { reason })] })

const DESK_SPEC = `title: Desk
instructions: A test workflow.
mounts:
  allow_always: []
states:
  intake:
    triggers: { manual: }
    instructions: Route the request.
    transitions:
      - to: review
  review:
    type: human
    instructions: A person decides.
    transitions:
      - to: done
        type: approve
        description: Approve.
      - to: intake
        type: refine
        description: Send it back.
  done:
    instructions: Say goodbye.
`

/** A workspace holding `workflows/desk/workflow.yaml` = `spec`. */
const desk = (spec = DESK_SPEC) => workspace({ 'workflows/desk/workflow.yaml': spec })

/** createAgent over the desk workflow with `options` merged in. */
function deskAgent(options = {}, spec = DESK_SPEC) {
  return createAgent({ workflow: 'desk', workspace: { rootDir: desk(spec) }, model: () => say('x'), ...options })
}

/**
 * A checker for `assert.rejects`/`assert.throws`: the error is `Cls`, a `HarnessError` and
 * an `Error`, its `name` and `code` are the class name, its message equals `message` (a
 * string) or matches it (a RegExp), and it carries `fields` (deep-equal, own properties).
 */
function harnessError(Cls, message, fields = {}) {
  return (e) => {
    assert.ok(e instanceof Cls, `expected ${Cls.name}, got ${e?.constructor?.name}: ${e?.message}`)
    assert.ok(e instanceof HarnessError)
    assert.ok(e instanceof Error)
    assert.equal(e.name, Cls.name)
    assert.equal(e.code, Cls.name)
    if (message instanceof RegExp) assert.match(e.message, message)
    else assert.equal(e.message, message)
    for (const [key, value] of Object.entries(fields)) assert.deepEqual(e[key], value, `field ${key}`)
    return true
  }
}

test('WorkflowLoadError: a missing workflow and one with no valid machine spec', async () => {
  await assert.rejects(
    createAgent({ workflow: 'nope', workspace: { rootDir: desk() }, model: () => say('x') }),
    harnessError(
      WorkflowLoadError,
      "Cannot load workflow 'nope' (workflows/nope/workflow.yaml): no workflow.yaml found. Run 'archmax validate nope' for details.",
      { workflow: 'nope', workflowPath: 'workflows/nope/workflow.yaml', problem: 'no workflow.yaml found', diagnostics: [] },
    ),
  )
  await assert.rejects(
    deskAgent({}, BROKEN_SPEC),
    (e) =>
      harnessError(
        WorkflowLoadError,
        "Cannot load workflow 'desk' (workflows/desk/workflow.yaml): no valid machine spec. Run 'archmax validate desk' for details.",
        { workflow: 'desk', workflowPath: 'workflows/desk/workflow.yaml', problem: 'no valid machine spec' },
      )(e) &&
      e.diagnostics.length > 0 &&
      e.diagnostics.every((d) => d.severity === 'error') &&
      e.diagnostics.some((d) => /nowhere/.test(d.message)),
  )
})

test('WorkflowDisabledError: a fresh turn on a disabled workflow', async () => {
  const agent = await deskAgent({}, `disabled: true\n${DESK_SPEC}`)
  try {
    await assert.rejects(
      agent.workflow.send('d-1', { message: 'Hi' }),
      harnessError(
        WorkflowDisabledError,
        "workflow 'desk' is disabled ('disabled: true' in its workflow.yaml); no session started. Remove that flag to re-enable it. Parked sessions can still be decided, replied to and delivered to.",
        { workflow: 'desk' },
      ),
    )
  } finally {
    agent.dispose()
  }
})

test('UnknownTriggerError: at assembly and from resolveTrigger, with the declared triggers', async () => {
  await assert.rejects(
    deskAgent({ trigger: { id: 'fax' } }),
    harnessError(UnknownTriggerError, "No start state for trigger 'fax'. Declared triggers: manual.", { triggerId: 'fax', available: ['manual'] }),
  )
  const agent = await deskAgent()
  try {
    assert.throws(
      () => agent.workflow.resolveTrigger({ id: 'email' }),
      harnessError(UnknownTriggerError, "No start state for trigger 'email'. Declared triggers: manual.", { triggerId: 'email', available: ['manual'] }),
    )
  } finally {
    agent.dispose()
  }
})

test('ReservedToolNameError: the prefix and file-operation forms, singular and plural', async () => {
  const tools = (...names) => names.map((name) => ({ name, handler: () => 'x' }))
  const cases = [
    [['archmax_lookup'], 'prefix', "Host tool 'archmax_lookup' uses the reserved 'archmax_' prefix, which names the runtime's own control tools. Rename it."],
    [['archmax_a', 'crm', 'archmax_b'], 'prefix', "Host tools 'archmax_a', 'archmax_b' use the reserved 'archmax_' prefix, which names the runtime's own control tools. Rename them."],
    [['copy_file'], 'file-operation', "Host tool 'copy_file' takes the name of the runtime's own file operation (copy_file, move_file, remove_file), which every agent already has. Drop it, or rename it."],
    [['move_file', 'remove_file'], 'file-operation', "Host tools 'move_file', 'remove_file' take the names of the runtime's own file operations (copy_file, move_file, remove_file), which every agent already has. Drop them, or rename them."],
  ]
  for (const [names, reservation, message] of cases) {
    const offending = names.filter((n) => n !== 'crm')
    await assert.rejects(deskAgent({ tools: tools(...names) }), harnessError(ReservedToolNameError, message, { names: offending, reservation }))
  }
  // The prefix is checked first, and reserved names before the workflow is loaded (§2.2).
  await assert.rejects(
    createAgent({ workflow: 'nope', workspace: { rootDir: desk() }, model: () => say('x'), tools: tools('copy_file', 'archmax_x') }),
    harnessError(ReservedToolNameError, /^Host tool 'archmax_x' uses/, { names: ['archmax_x'], reservation: 'prefix' }),
  )
})

test('ToolPathsError: a built-in name, an empty declaration, an unknown access', async () => {
  const tool = (name, paths) => ({ name, handler: () => 'x', paths })
  await assert.rejects(
    deskAgent({ tools: [tool('read_file', { file_path: 'read' })] }),
    harnessError(ToolPathsError, "Tool 'read_file' is a built-in tool; its path arguments are declared by the runtime and cannot be redeclared."),
  )
  await assert.rejects(
    deskAgent({ tools: [tool('crm', {})] }),
    harnessError(ToolPathsError, "Tool 'crm' declares no path argument; omit its declaration instead."),
  )
  await assert.rejects(
    deskAgent({ tools: [tool('crm', { file: 'steal' })] }),
    harnessError(ToolPathsError, "Tool 'crm' declares argument 'file' with access 'steal'; the accesses are 'read', 'list', 'search', 'write', 'remove', 'execute'."),
  )
  // Tool paths are checked before the workflow is loaded (§2.2).
  await assert.rejects(
    createAgent({ workflow: 'nope', workspace: { rootDir: desk() }, model: () => say('x'), tools: [tool('crm', {})] }),
    harnessError(ToolPathsError, /declares no path argument/),
  )
})

test('InvalidVariableNameError: seeds at assembly (createAgent rejects), turn and delivered variables at send', async () => {
  const seeded = "'FromEmail' is not a valid variable name (seeded). Use lowercase letters, digits and underscores, starting with a letter (e.g. 'from_email')."
  let modelCalls = 0
  await assert.rejects(
    deskAgent({ variables: { from_email: 'a@b.c', FromEmail: 'a@b.c' }, model: () => (modelCalls++, say('x')) }),
    harnessError(InvalidVariableNameError, seeded, { variable: 'FromEmail', source: 'seeded' }),
  )
  assert.equal(modelCalls, 0)
  // The trigger is checked before the seeds (§2.2 step 11).
  await assert.rejects(deskAgent({ trigger: { id: 'fax' }, variables: { FromEmail: 1 } }), (e) => e instanceof UnknownTriggerError)
  const plain = await deskAgent()
  try {
    await assert.rejects(
      plain.workflow.send('v-2', { message: 'Hi', variables: { FromEmail: 'a@b.c' } }),
      harnessError(InvalidVariableNameError, seeded, { variable: 'FromEmail', source: 'seeded' }),
    )
    // Delivered variables name the session they were delivered to, as in the original.
    const { model } = scripted([wait('the courier')])
    const waiting = await deskAgent({ model })
    try {
      assert.equal((await waiting.workflow.send('v-3', { message: 'Hi' })).parkedChannel, 'input')
      await assert.rejects(
        waiting.workflow.deliver('v-3', { trigger: { id: 'courier' }, variables: { 'Bad-Name': 1 } }),
        harnessError(
          InvalidVariableNameError,
          "'Bad-Name' is not a valid variable name (delivered to session 'v-3'). Use lowercase letters, digits and underscores, starting with a letter (e.g. 'from_email').",
          { variable: 'Bad-Name', source: "delivered to session 'v-3'" },
        ),
      )
    } finally {
      waiting.dispose()
    }
  } finally {
    plain.dispose()
  }
})

test('MountCollisionError: a run area and the authoring plane', async () => {
  const mounted = (key) => deskAgent({ workspace: { rootDir: desk(), mounts: { [key]: { readOnly: true } } } })
  await assert.rejects(
    mounted('/scratchpad/'),
    harnessError(
      MountCollisionError,
      "Mount '/scratchpad/' collides with the run area 'scratchpad/', which the session store owns at the workspace root. Mount it under a different key.",
      { key: '/scratchpad/' },
    ),
  )
  await assert.rejects(
    mounted('/workflows/'),
    harnessError(MountCollisionError, /^Mount '\/workflows\/' would serve the authoring plane to the agent\. .* Configure them with the 'authoring' option instead of mounting them\.$/, {
      key: '/workflows/',
    }),
  )
})

test('SessionStoreIdError: an id that escapes the store, at send and at sessions.get', async () => {
  const agent = await deskAgent()
  try {
    for (const attempt of [() => agent.workflow.send('../escape', { message: 'x' }), () => agent.sessions.get('../escape')]) {
      await assert.rejects(attempt(), harnessError(SessionStoreIdError, /^Invalid session id "\.\.\/escape": .+\.$/, { sessionId: '../escape' }))
    }
  } finally {
    agent.dispose()
  }
})

test('the resume errors: SessionNotParked, InvalidDecisionTarget, EmptyMessage, SessionNotAwaitingInput, MissingDeliveryTrigger', async () => {
  const agent = await deskAgent({ model: scripted([advance('review'), say('A colleague decides.'), wait('the invoice'), say('Waiting.')]).model })
  try {
    await assert.rejects(
      agent.workflow.decide('never-ran', { to: 'done' }),
      harnessError(SessionNotParkedError, "Session 'never-ran' is not parked at a human state; there is nothing to decide.", { sessionId: 'never-ran' }),
    )
    await assert.rejects(
      agent.workflow.reply('never-ran', 'hi'),
      harnessError(SessionNotParkedError, "Session 'never-ran' is not parked at a human state; there is nothing to decide.", { sessionId: 'never-ran' }),
    )
    const parked = await agent.workflow.send('p-1', { message: 'Approve me.' })
    assert.equal(parked.status, 'awaiting_decision')
    await assert.rejects(
      agent.workflow.decide('p-1', { to: 'nowhere' }),
      harnessError(InvalidDecisionTargetError, "'nowhere' is not a valid decision target for session 'p-1'. Choose one of: done, intake.", {
        sessionId: 'p-1',
        target: 'nowhere',
        validTargets: ['done', 'intake'],
      }),
    )
    await assert.rejects(agent.workflow.decide('p-1', {}), (e) => {
      harnessError(InvalidDecisionTargetError, "A decision target is required for session 'p-1'. Choose one of: done, intake.", {
        sessionId: 'p-1',
        validTargets: ['done', 'intake'],
      })(e)
      assert.equal(e.target, undefined)
      return true
    })
    await assert.rejects(
      agent.workflow.reply('p-1', '   '),
      harnessError(
        EmptyMessageError,
        "A message is required to reply to session 'p-1': there is nothing to answer, and a parked session is not moved by an empty turn.",
        { sessionId: 'p-1' },
      ),
    )
    await assert.rejects(
      agent.workflow.deliver('p-1', { trigger: 'invoice' }),
      harnessError(
        SessionNotAwaitingInputError,
        "Session 'p-1' is not parked awaiting an event; there is nothing to deliver to. A session awaiting a human decision resumes through a decision instead.",
        { sessionId: 'p-1' },
      ),
    )
    const waiting = await agent.workflow.send('w-1', { message: 'Refund my invoice.' })
    assert.equal(waiting.status, 'awaiting_input')
    await assert.rejects(
      agent.workflow.deliver('w-1', { trigger: '  ' }),
      harnessError(
        MissingDeliveryTriggerError,
        "A trigger id is required to deliver to session 'w-1': it becomes the session's current trigger, which its hooks and guards read. Any id is accepted — a park awaits no particular one.",
        { sessionId: 'w-1' },
      ),
    )
  } finally {
    agent.dispose()
  }
})

test('EmptyMessageError: a blank send opening a turn, before any model call; a blank send to a decision park too', async () => {
  const empty = (id) =>
    harnessError(
      EmptyMessageError,
      `A message is required to reply to session '${id}': there is nothing to answer, and a parked session is not moved by an empty turn.`,
      { sessionId: id },
    )
  const { model, requests } = scripted([advance('review'), say('Handed to a person.'), say('Noted.')])
  const events = []
  const agent = await deskAgent({ model, onEvent: (e) => events.push(e) })
  try {
    for (const message of ['', '   ', '\n\t ']) {
      await assert.rejects(agent.workflow.send('e-1', { message }), empty('e-1'))
    }
    await assert.rejects(agent.workflow.send('e-1', {}), empty('e-1'))
    assert.equal(requests.length, 0)
    assert.equal(events.length, 0, 'nothing ran')
    assert.equal(await agent.sessions.get('e-1'), null, 'no session was started')
    // A message with text around it is sent trimmed.
    const parked = await agent.workflow.send('e-1', { message: '  Please review.  ' })
    assert.equal(parked.parkedChannel, 'decision')
    assert.equal(requests[0].messages.at(-1).content, 'Please review.')
    // On a session parked at a human state a send is a reply: blank is refused the same way.
    await assert.rejects(agent.workflow.send('e-1', { message: ' ' }), empty('e-1'))
  } finally {
    agent.dispose()
  }
})

test('UnknownSessionTriggerError (not exported): a send naming an undeclared trigger for a session that never ran', async () => {
  const agent = await deskAgent()
  try {
    const refused = (e) =>
      harnessError(
        // The class is not exported; it is still a HarnessError with its name and code.
        e.constructor,
        "No state declares trigger 'fax', and no parked session is awaiting it, so there is nowhere for this firing to go. Declare it under the 'triggers:' of the state a run should start in, or deliver the firing to a session parked on it — naming the session, or a 'sessionPath' to find it by.",
        { trigger: 'fax' },
      )(e) && e.name === 'UnknownSessionTriggerError'
    await assert.rejects(agent.workflow.send('u-1', { message: 'Hi', trigger: { id: 'fax' } }), refused)
    await assert.rejects(agent.workflow.send(null, { message: 'Hi', trigger: 'fax' }), refused)
    await assert.rejects(agent.workflow.resolveSession({ trigger: { id: 'fax' } }), refused)
  } finally {
    agent.dispose()
  }
})

test('SessionNotResumableError: a second send while a turn holds the session', async () => {
  let release
  const gate = new Promise((resolve) => { release = resolve })
  let reached
  const inFlight = new Promise((resolve) => { reached = resolve })
  const agent = await deskAgent({
    model: async () => {
      reached()
      await gate
      return say('Done at last.')
    },
  })
  try {
    const first = agent.workflow.send('busy-1', { message: 'First.' })
    await inFlight
    await assert.rejects(agent.workflow.send('busy-1', { message: 'Second.' }), (e) => {
      harnessError(SessionNotResumableError, /^Session 'busy-1' has a turn in progress \(status '[a-z_]+'\)\. A session has a single writer: retry once the turn parks or ends\.$/, {
        sessionId: 'busy-1',
      })(e)
      assert.ok(['running', 'unknown'].includes(e.status), e.status)
      assert.ok(e.message.includes(`(status '${e.status}')`))
      return true
    })
    release()
    assert.equal((await first).reply, 'Done at last.')
  } finally {
    release()
    agent.dispose()
  }
})

test('SessionStoreCapabilityError: seeding a memory store', async () => {
  const agent = await deskAgent({ workspace: { rootDir: desk(), sessionStore: createMemorySessionStore() } })
  try {
    await assert.rejects(
      agent.sessions.seed('m-1', { 'trigger.json': { from: 'a@b.c' } }),
      harnessError(
        SessionStoreCapabilityError,
        "The configured in-memory session store does not support 'seed'. Seeding writes files into the session folder and needs a filesystem session store.",
        { storeKind: 'in-memory', capability: 'seed' },
      ),
    )
  } finally {
    agent.dispose()
  }
})

test('AgentDisposedError: every call after dispose', async () => {
  const agent = await deskAgent()
  agent.dispose()
  agent.dispose()
  await assert.rejects(agent.workflow.send('x', { message: 'x' }), harnessError(AgentDisposedError, 'the agent was disposed'))
  await assert.rejects(agent.sessions.list(), harnessError(AgentDisposedError, 'the agent was disposed'))
  assert.throws(() => agent.workflow.resolveTrigger(), harnessError(AgentDisposedError, 'the agent was disposed'))
  assert.equal(agent.cancel('x'), false)
})

test('runtimeContract: declared v2, defaulted v1; an unsupported contract refuses assembly', async () => {
  const v2 = await deskAgent({}, `runtime:\n  engine: archmax-harness\n  version: 2\n${DESK_SPEC}`)
  try {
    assert.deepEqual(v2.runtimeContract, { engine: 'archmax-harness', version: '2', source: 'declared', sandbox: 2, testFormat: '1' })
    assert.ok(Object.isFrozen(v2.runtimeContract))
  } finally {
    v2.dispose()
  }
  const defaulted = await deskAgent()
  try {
    assert.deepEqual(defaulted.runtimeContract, { engine: 'archmax-harness', version: '1', source: 'defaulted', sandbox: 1, testFormat: '1' })
  } finally {
    defaulted.dispose()
  }
  const versionOnly = await deskAgent({}, `runtime: { version: "1" }\n${DESK_SPEC}`)
  try {
    assert.deepEqual(versionOnly.runtimeContract, { engine: 'archmax-harness', version: '1', source: 'declared', sandbox: 1, testFormat: '1' })
  } finally {
    versionOnly.dispose()
  }
  for (const [runtime, requested] of [
    ['runtime: { version: 99 }', 'archmax-harness@99'],
    ['runtime: { engine: deep-agent-harness, version: 1 }', 'deep-agent-harness@1'],
  ]) {
    await assert.rejects(
      deskAgent({}, `${runtime}\n${DESK_SPEC}`),
      harnessError(UnsupportedRuntimeContractError, `Unsupported runtime contract '${requested}'. Supported: archmax-harness@1, archmax-harness@2.`, {
        requested,
        supported: SUPPORTED,
      }),
    )
  }
  // A missing workflow is a load error before any contract is read.
  await assert.rejects(createAgent({ workflow: 'nope', workspace: { rootDir: desk() }, model: () => say('x') }), WorkflowLoadError)
})
