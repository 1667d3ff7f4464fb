/** The library version. Kept equal to `version` in packages/client/package.json (a test checks it). */
export const VERSION = '10.0.0';
