// Hostile session ids through createAgent over every store: an id no storage keeps apart is
// refused (SessionStoreIdError) before anything is made; every other id is a session of its
// own whose agent cannot read or change another session's records or files.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { createAgent, createFilesystemSessionStore, createMemorySessionStore, SessionStoreIdError } from '../js/main.js'
import { NO_PG, ONE_STATE_SPEC, call, mapStore, pgStore, say, scripted, tools, workspace } from './helpers.mjs'

const SECRET = 'VICTIM-SECRET'

const REFUSED = [
  ['.', /it must not be made of dots alone/],
  ['/.', /it must not be made of dots alone/],
  ['a\r\nb', /control or bidirectional-formatting characters \(U\+000D at character 2\)/],
  ['x\u202Ey', /U\+202E/],
  ['victim/../victim', /'\.\.' traversal/],
  ['victim~chat:one:1', /a sub-workflow session of 'victim' that its caller has not started/],
  ['k'.repeat(256), /it is too long: stored, it takes 256 bytes, at most 255/],
]

const OWN = ['victim/', './victim', 'victim/.', 'victim/scratchpad', 'victim/checkpoints', 'a/b', 'Victim', 'CON', 'a\\b', '~']

/** The attacker's one step: reads and writes of the victim's files by every spelling. */
const attack = () =>
  tools(
    call('read_file', { file_path: 'victim/scratchpad/secret.md' }, 'r1'),
    call('read_file', { file_path: '../victim/scratchpad/secret.md' }, 'r2'),
    call('read_file', { file_path: 'scratchpad/secret.md' }, 'r3'),
    call('ls', { path: '.' }, 'l1'),
    call('write_file', { file_path: 'victim/checkpoints/PWN.md', content: 'x' }, 'w1'),
    call('write_file', { file_path: '../victim/scratchpad/PWN.md', content: 'x' }, 'w2'),
  )

const STORES = {
  filesystem: (root) => createFilesystemSessionStore({ dir: join(root, 'sessions') }),
  memory: () => createMemorySessionStore(),
  host: () => mapStore().store,
  postgres: () => pgStore('ids'),
}

for (const [kind, make] of Object.entries(STORES)) {
  test(`hostile session ids over the ${kind} store`, async (t) => {
    const root = workspace({ 'workflows/one/workflow.yaml': ONE_STATE_SPEC })
    const store = make(root)
    if (store === null) return t.skip(NO_PG)
    const answers = [tools(call('write_file', { file_path: 'scratchpad/secret.md', content: SECRET })), say('Stored.')]
    for (const _ of OWN) answers.push(attack(), say('Done.'))
    const { model, requests } = scripted(answers)
    const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: store }, model })
    try {
      assert.equal((await agent.workflow.send('victim', { message: 'keep this' })).kind, 'completed')
      const before = await agent.sessions.get('victim')
      const listed = () => existsSync(join(root, 'sessions')) ? readdirSync(join(root, 'sessions')).sort() : []
      const folders = listed()
      for (const [id, reason] of REFUSED) {
        for (const attempt of [
          () => agent.workflow.send(id, { message: 'x' }),
          () => agent.workflow.decide(id, { to: 'chat' }),
          () => agent.workflow.reply(id, 'x'),
          () => agent.workflow.deliver(id, { trigger: 'manual' }),
          // Reading a child's summary is no arrival: only a new child is refused.
          ...(id.includes('~') ? [] : [() => agent.sessions.get(id)]),
        ]) {
          await assert.rejects(attempt(), (e) => e instanceof SessionStoreIdError && reason.test(e.message), JSON.stringify(id))
        }
      }
      assert.equal(requests.length, 2, 'a refused id asks no model')
      assert.deepEqual(listed(), folders, 'a refused id makes nothing')
      let calls = 0
      for (const id of OWN) {
        const out = await agent.workflow.send(id, { message: 'attack' })
        assert.equal(out.kind, 'completed', id)
        assert.equal(out.sessionId, id)
        const results = requests.at(-1).messages.filter((m) => m.role === 'tool')
        calls += results.length
        for (const r of results) assert.ok(!String(r.content).includes(SECRET), `${JSON.stringify(id)}: ${r.content}`)
      }
      assert.ok(calls >= OWN.length * 6)
      assert.deepEqual(await agent.sessions.get('victim'), before, 'the victim is as it was')
      const ids = (await agent.sessions.list()).map((s) => s.sessionId)
      for (const id of [...OWN, 'victim']) assert.equal(ids.filter((x) => x === id).length, 1, `${JSON.stringify(id)} in ${JSON.stringify(ids)}`)
    } finally {
      agent.dispose()
      await store?.close?.()
    }
  })
}
