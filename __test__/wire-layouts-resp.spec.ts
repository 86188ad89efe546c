/** The RESP layouts, both directions (wire-layouts-helpers.ts says how). */
import test from 'ava'

import { readValue, replyBytes, Resp, RespErrorReply } from '../src/resp'
import { MAX_ID, echo, samples } from './wire-layouts-helpers'

test('a RESP value of every kind written natively reads back as its JS value', (t) => {
  t.deepEqual(readValue(samples.resp, 0), [
    'OK é',
    new RespErrorReply('ERR bad'),
    -(2n ** 63n),
    -MAX_ID,
    Buffer.alloc(0),
    Buffer.from([0, 0xff]),
    null,
    null,
    null,
    true,
    false,
    -0.5,
    -123456789012345678901234567890n,
    new RespErrorReply('SYNTAX x'),
    'ünï',
    new Map([[Buffer.from('k'), 1]]),
    new Set([2]),
    Buffer.from('v'),
    [Buffer.from('message'), []],
  ])
})

test('RESP replies written by JS are read natively into the protocol bytes they stand for', (t) => {
  const reply = Resp.array([
    Resp.simple('OK é'),
    Resp.error('ERR x'),
    Resp.integer(-(2n ** 63n)),
    Resp.integer(MAX_ID),
    Resp.bulk(''),
    Resp.bulk(Buffer.from([0, 0xff])),
    Resp.nullBulk(),
    Resp.nullArray(),
    Resp.null(),
    Resp.boolean(true),
    Resp.boolean(false),
    Resp.double(-0.5),
    Resp.map([[Resp.bulk('k'), Resp.integer(1)]]),
    Resp.array([]),
  ])
  const wire = Buffer.concat([
    Buffer.from('*14\r\n+OK é\r\n-ERR x\r\n:-9223372036854775808\r\n:9007199254740991\r\n$0\r\n\r\n$2\r\n'),
    Buffer.from([0, 0xff]),
    Buffer.from('\r\n$-1\r\n*-1\r\n_\r\n#t\r\n#f\r\n,-0.5\r\n%1\r\n$1\r\nk\r\n:1\r\n*0\r\n'),
  ])
  t.is(echo('resp', replyBytes(reply)), wire.toString('hex'))
  t.is(echo('resp', replyBytes(Resp.sequence([Resp.OK, Resp.PONG]))), Buffer.from('+OK\r\n+PONG\r\n').toString('hex'))
})
