/**
 * The pipeline's events and the wire kinds (src/event-wire.ts): two vocabularies paired by
 * name, checked against the two enums' members (decision 0018).
 */
import test from 'ava'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

import { EVENT_OF_WIRE, WIRE_OF_EVENT } from '../src/event-wire'
import { PROTOCOL } from '../src/protocol'

/** `PipelineEvent`'s members (a `const enum`, so read from its source), by name. */
function pipelineEvents(): Record<string, number> {
  const file = join(__dirname, '..', 'src', 'events.ts')
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  const out: Record<string, number> = {}
  source.forEachChild((node) => {
    if (!ts.isEnumDeclaration(node) || node.name.text !== 'PipelineEvent') return
    for (const m of node.members) out[m.name.getText(source)] = Number((m.initializer as ts.NumericLiteral).text)
  })
  return out
}

/** The wire kind a pipeline event travels as, by the names' rule: `Channel` dropped, a read or write as its bytes, the handler method's verb dropped. */
const RENAMED: Record<string, string> = { ChannelRead: 'ReadBytes', Write: 'WriteBytes', UserEventTriggered: 'UserEvent', ExceptionCaught: 'Exception' }
const wireName = (event: string) => RENAMED[event] ?? event.replace(/^Channel/, '')

test('every pipeline event maps to the wire kind of its name, and back', (t) => {
  const events = pipelineEvents()
  const kinds = PROTOCOL.WireKind as Record<string, number>
  t.is(Object.keys(events).length, 13)
  t.is(WIRE_OF_EVENT.length, Object.keys(events).length)
  for (const [name, ev] of Object.entries(events)) {
    const kind = kinds[wireName(name)]
    t.not(kind, undefined, `no wire kind named ${wireName(name)} for ${name}`)
    t.is(WIRE_OF_EVENT[ev], kind, name)
    t.is(EVENT_OF_WIRE[kind], ev, `${wireName(name)} back to ${name}`)
  }
  // The other kinds JS receives as reads and writes: values and codec messages.
  for (const k of ['ReadValue', 'ReadResp', 'ReadHttp', 'ReadWs']) t.is(EVENT_OF_WIRE[kinds[k]], events.ChannelRead, k)
  t.is(EVENT_OF_WIRE[kinds.WriteValue], events.Write)
})
