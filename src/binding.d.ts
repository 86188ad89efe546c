/**
 * The native addon, loaded once. On a platform without a prebuilt binary the napi-rs loader's
 * message ("npm has a bug related to optional dependencies") is misleading: this says which
 * platform is missing and which ones exist.
 */
import type * as Native from '../native';
/** Targets a prebuilt binary exists for (package.json `napi.targets`). */
export declare const SUPPORTED_PLATFORMS: string[];
export declare const native: typeof Native;
