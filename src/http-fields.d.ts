/** Header fields as a constructor takes them: an object (arrays for repeated fields) or `[name, value]` pairs in order. */
export type HeaderInit = Record<string, string | number | string[]> | Array<[string, string]>;
/** A message read natively (`HttpRequest`, `HttpClientResponse`): its header fields, with node:http's names. */
export declare abstract class HttpHeaderView {
    /** The value of header `name` (case-insensitive), duplicates joined with `, `; no object is made. */
    header(name: string): string | undefined;
    /** The headers as node:http's `headers` (lower-case names; `set-cookie` an array). Made on first use. */
    get headers(): Record<string, string | string[]>;
    /** Names and values in wire order, as node:http's `rawHeaders`. */
    get rawHeaders(): string[];
}
