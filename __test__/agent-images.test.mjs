// createAgent({ images }): the agent's read_file of an image shows it to the model in the
// requests that follow, never in the transcript.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'

import { createAgent } from '@archmax-ai/harness'
import { call, say, scripted, workspace } from './helpers.mjs'

const A = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) // 8 bytes
const B = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4, 5, 6, 7, 8]) // 12 bytes

function root() {
  const dir = workspace({ 'AGENTS.md': '# Persona\n' })
  mkdirSync(join(dir, 'charts'), { recursive: true })
  writeFileSync(join(dir, 'charts/a.png'), A)
  writeFileSync(join(dir, 'charts/b.png'), B)
  return dir
}

const MOUNTS = { '/charts/': {} }
const read = (path, id) => ({ role: 'assistant', content: null, tool_calls: [call('read_file', { file_path: path }, id)] })
const imageParts = (request) =>
  request.messages.filter((m) => m.role === 'user' && Array.isArray(m.content)).flatMap((m) => m.content)

test('an image read rides the next requests after its tool result; keep names the older ones; the transcript holds no bytes', async () => {
  const dir = root()
  const { model, requests } = scripted([read('charts/a.png', 'c1'), read('/charts/b.png', 'c2'), say('Two charts.')])
  const agent = await createAgent({ workflow: false, workspace: { rootDir: dir, mounts: MOUNTS }, model, images: { keep: 1 } })
  try {
    const out = await agent.invoke({ messages: [{ role: 'user', content: 'Look.' }] }, { configurable: { thread_id: 'img-1' } })
    // Call 2: after c1's result, a user message with the image.
    const second = requests[1].messages
    const at = second.findIndex((m) => m.role === 'tool' && m.tool_call_id === 'c1')
    assert.equal(second[at].content, "Image 'charts/a.png' (image/png, 8 B) is shown below.")
    assert.deepEqual(second[at + 1], {
      role: 'user',
      content: [
        { type: 'text', text: "Image 'charts/a.png':" },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${A.toString('base64')}` } },
      ],
    })
    // Call 3, keep 1: a.png is named, b.png attached.
    assert.deepEqual(imageParts(requests[2]), [
      { type: 'text', text: "Image 'charts/a.png' was shown earlier and is no longer attached; read it again to see it." },
      { type: 'text', text: "Image 'charts/b.png':" },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${B.toString('base64')}` } },
    ])
    // The transcript records the path, never the bytes, and has no image messages.
    const stored = await agent.sessions.messages('img-1')
    assert.equal(stored.length, out.messages.length)
    assert.doesNotMatch(JSON.stringify(stored), /base64/)
    assert.deepEqual(stored.filter((m) => m.image).map((m) => m.image), [
      { path: 'charts/a.png', mimeType: 'image/png' },
      { path: 'charts/b.png', mimeType: 'image/png' },
    ])
  } finally {
    agent.dispose()
  }
})

test('over maxBytes an image is not shown; without images it is a binary file; a bad option is a TypeError', async () => {
  const dir = root()
  {
    const { model, requests } = scripted([read('charts/b.png', 'c1'), say('ok')])
    const agent = await createAgent({ workflow: false, workspace: { rootDir: dir, mounts: MOUNTS }, model, images: { maxBytes: 10 } })
    await agent.invoke({ messages: [{ role: 'user', content: 'Look.' }] }, { configurable: { thread_id: 'img-2' } })
    agent.dispose()
    const result = requests[1].messages.find((m) => m.tool_call_id === 'c1').content
    assert.equal(result, "Image 'charts/b.png' (image/png, 12 B) was not shown: images over 10 B are not sent to the model.")
    assert.deepEqual(imageParts(requests[1]), [])
  }
  {
    const { model, requests } = scripted([read('charts/a.png', 'c1'), say('ok')])
    const agent = await createAgent({ workflow: false, workspace: { rootDir: dir, mounts: MOUNTS }, model })
    await agent.invoke({ messages: [{ role: 'user', content: 'Look.' }] }, { configurable: { thread_id: 'img-3' } })
    agent.dispose()
    const result = requests[1].messages.find((m) => m.tool_call_id === 'c1').content
    assert.equal(result, "Error: 'charts/a.png' is a binary file (image/png, 8 B) and was not read; read_file returns text files only.")
  }
  await assert.rejects(createAgent({ workflow: false, workspace: { rootDir: dir }, model: async () => say('x'), images: { keep: 0 } }), /'images.keep' must be a positive whole number/)
})
