import type * as Native from '../native';
/** Targets a prebuilt binary exists for (package.json `napi.targets`). */
export declare const SUPPORTED_PLATFORMS: string[];
export declare const native: typeof Native;
