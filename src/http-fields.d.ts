/** Header fields as a constructor takes them: an object (arrays for repeated fields) or `[name, value]` pairs in order. */
export type HeaderInit = Record<string, string | number | string[]> | Array<[string, string]>;
