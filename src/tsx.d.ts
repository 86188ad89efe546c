export declare const importModule: (url: string) => Promise<Record<string, unknown>>;
/** Registers tsx's CommonJS and ESM hooks in this thread, resolving tsx from `from` (a file URL). */
export declare function registerTypeScript(from: string): Promise<void>;
/**
 * Loads the module at `url`: CommonJS first, as the main thread loads its modules, so that
 * the module's own imports of netloop resolve to the files this worker already runs (one copy
 * of netloop per thread); an ES module (.mjs/.mts, "type": "module") is imported instead.
 */
export declare function loadModule(url: string): Promise<Record<string, unknown>>;
