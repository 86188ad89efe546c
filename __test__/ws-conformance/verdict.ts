// Autobahn's verdict for one case from what the driver saw: the events against the OK and
// NON-STRICT lists, then the closing (the right end started it, the handshake completed where
// required, a permitted code, the server ended TCP).
import { describe, sameEvents, type Seen } from './driver'
import type { Case, Outcome } from './types'

export function judge(c: Case, seen: Seen): Outcome {
  const fail = (detail: string): Outcome => ({ id: c.id, verdict: c.informational ? 'INFORMATIONAL' : 'FAILED', detail })
  const events = seen.events.map(describe).join(', ') || 'no events'
  const who = seen.closedByMe ? 'the client closed first' : seen.serverSentClose ? 'the server closed first' : seen.droppedByMe ? 'no close from the server' : 'the server dropped TCP'
  const ending = `${who}, server close code ${seen.serverSentClose ? (seen.remoteCode ?? 'none') : 'not sent'}${seen.droppedByMe ? ', TCP left open by the server' : ''}`
  if (seen.handshake) return fail(seen.handshake)
  if (seen.serverFault) return fail(`server fault: ${seen.serverFault}`)
  if (c.offer && !seen.agreement) return fail('UNIMPLEMENTED: the server agreed no permessage-deflate')
  let verdict: Outcome['verdict'] | undefined
  if (sameEvents(seen.events, c.ok ?? [])) verdict = 'OK'
  else if (c.nonStrict && sameEvents(seen.events, c.nonStrict)) verdict = 'NON-STRICT'
  const e = c.close
  let closeProblem: string | undefined
  if (e.byClient !== seen.closedByMe) closeProblem = `the connection was closed by the wrong end (${ending})`
  else if (e.clean && !seen.handshakeDone) closeProblem = `the close handshake did not complete (${ending})`
  else if (seen.remoteCode !== undefined && !e.codes.includes(seen.remoteCode)) closeProblem = `close code ${seen.remoteCode}, expected ${e.codes.join(' or ')} (or none)`
  else if (seen.droppedByMe) closeProblem = `the server did not close TCP (${ending})`
  if (e.wrongEndFatal && e.byClient !== seen.closedByMe) verdict = undefined
  if (c.informational) return { id: c.id, verdict: 'INFORMATIONAL', detail: `${verdict ?? 'other'}: ${events}; ${ending}` }
  if (!verdict) return fail(`events: ${events}; ${ending}`)
  if (closeProblem) return fail(closeProblem)
  return { id: c.id, verdict, detail: `${events}; ${ending}` }
}
