// Types of sst-platform.mjs (a plain script, so that `npm run typecheck:stacks` runs it without a compiler).
/** .sst/platform, absolute. */
export declare const platformDir: string;
/** Installs SST's platform into .sst/platform unless this sst version's install is already there; answers its directory. */
export declare function ensureSstPlatform(): string;
