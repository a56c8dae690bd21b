// Generated from packages/aws/image/ by packages/aws/scripts/embed-image.mjs: do not edit, run it again.
import type { ImageFile } from "./user-data";

/** The amphora image scripts (packages/aws/image/), which the first-boot user data carries. */
export const IMAGE_FILES: readonly ImageFile[] = [];
