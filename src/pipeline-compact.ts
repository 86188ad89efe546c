/**
 * The compact form of a pipeline (see the ground rules of pipeline.ts): once its channel's
 * initializer ran, a pipeline none of whose native or end contexts JS was given keeps its names
 * and handlers in one array, `[name, entry, name, entry, ...]` head to tail, instead of a
 * context for each native handler and the two ends. An entry is a native handler's description
 * or a JS handler's context (the same object as before compaction).
 *
 * Ground rules:
 * - A JS context in the compact form keeps its links to JS neighbours; a link to a neighbour it
 *   no longer has points to a shared gap of that neighbour's kind (`GAP_HEAD`, `GAP_NATIVE`,
 *   `GAP_TAIL`), which is all routing reads of a context that is not JS (it never walks past
 *   one). The gaps are shared by every pipeline of the thread and never linked on.
 * - Every array made here has its exact length (`push` leaves room to grow, `splice` keeps the
 *   old capacity): an idle connection keeps nothing spare.
 * - Plain functions over the array: the pipeline owns it and swaps it whole.
 */
import { ChannelHandlerContext, Kind } from './context'
import type { ChannelHandler } from './handlers'
import { NativeHandler } from './codecs'
import type { ChannelPipeline, HandlerClass } from './pipeline'
import { NativeHandlerKind } from './protocol'

/** An entry of the compact form: a native handler's description, or a JS handler's context. */
export type CompactEntry = NativeHandler | ChannelHandlerContext

/** Names and entries, alternating, head to tail. */
export type CompactForm = Array<string | CompactEntry>

const gap = (kind: Kind): ChannelHandlerContext => new ChannelHandlerContext('', undefined, undefined, undefined as unknown as ChannelPipeline, kind, 0)
const GAP_HEAD = gap(Kind.Head)
const GAP_NATIVE = gap(Kind.Native)
const GAP_TAIL = gap(Kind.Tail)

/** True for the description of an HTTP codec (server or client), which a WebSocket handshake takes out. */
export const isHttpCodec = (h: unknown): boolean => h instanceof NativeHandler && (h._kind === NativeHandlerKind.Http || h._kind === NativeHandlerKind.HttpClient)

/** The handler of a compact entry. */
const handlerOf = (e: CompactEntry): ChannelHandler | NativeHandler => (e instanceof ChannelHandlerContext ? e.handler! : e)

/** The compact form of the contexts between `head` and `tail`; JS contexts are relinked to the gaps. */
export function compactForm(head: ChannelHandlerContext, tail: ChannelHandlerContext): CompactForm {
  const out: CompactForm = []
  for (let c = head._next; c && c !== tail; c = c._next) out.push(c.name, c._kind === Kind.Js ? c : c.nativeHandler!)
  for (let i = 1; i < out.length; i += 2) {
    const c = out[i]
    if (!(c instanceof ChannelHandlerContext)) continue
    if (c._prev!._kind !== Kind.Js) c._prev = c._prev!._kind === Kind.Head ? GAP_HEAD : GAP_NATIVE
    if (c._next!._kind !== Kind.Js) c._next = c._next!._kind === Kind.Tail ? GAP_TAIL : GAP_NATIVE
  }
  return out.slice()
}

/** Links the contexts of `all` between the new `head` and `tail` of `pipeline` (a native handler's context made again). */
export function expandForm(all: CompactForm, pipeline: ChannelPipeline, head: ChannelHandlerContext, tail: ChannelHandlerContext): void {
  let prev = head
  for (let i = 0; i < all.length; i += 2) {
    const e = all[i + 1] as CompactEntry
    const ctx = e instanceof ChannelHandlerContext ? e : new ChannelHandlerContext(all[i] as string, undefined, e, pipeline, Kind.Native, 0)
    ctx._prev = prev
    prev._next = ctx
    prev = ctx
  }
  prev._next = tail
  tail._prev = prev
}

/** Calls `fn` with each native handler of `all`, head to tail. */
export function forEachNativeIn(all: CompactForm, fn: (h: NativeHandler) => void): void {
  for (let i = 1; i < all.length; i += 2) if (all[i] instanceof NativeHandler) fn(all[i] as NativeHandler)
}

/** The names of `all`, head to tail. */
export const namesIn = (all: CompactForm): string[] => all.filter((_, i) => i % 2 === 0) as string[]

/** The handler of `all` with this name or identity, or the first one of this class. */
export function findIn(all: CompactForm, which: string | HandlerClass): unknown {
  for (let i = 0; i < all.length; i += 2) {
    const h = handlerOf(all[i + 1] as CompactEntry)
    if (typeof which === 'function' ? h instanceof which : all[i] === which || h === which) return h
  }
  return undefined
}

/** `all` without the native handlers whose names are not in `names`; undefined if none went. */
export function keepNativeNamed(all: CompactForm, names: string[]): CompactForm | undefined {
  const kept: CompactForm = []
  for (let i = 0; i < all.length; i += 2) if (names.includes(all[i] as string) || !(all[i + 1] instanceof NativeHandler)) kept.push(all[i], all[i + 1])
  return kept.length === all.length ? undefined : kept.slice()
}

/** `all` without its HTTP codecs; undefined if it had none. */
export function withoutHttpCodec(all: CompactForm): CompactForm | undefined {
  let n = 0
  for (let i = 1; i < all.length; i += 2) if (isHttpCodec(all[i])) n += 2
  if (n === 0) return undefined
  const kept: CompactForm = new Array<string | CompactEntry>(all.length - n)
  for (let i = 0, j = 0; i < all.length; i += 2) {
    if (isHttpCodec(all[i + 1])) continue
    kept[j++] = all[i]
    kept[j++] = all[i + 1]
  }
  return kept
}
