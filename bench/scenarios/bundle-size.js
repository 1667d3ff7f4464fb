/**
 * The browser library's weight: svc's minified UMD bundle (packages/client/dist/svc.js, what /lib/svc.js
 * serves) against auth0-js@10's published dist/auth0.min.js, both gzipped at level 9 in the same run. Goal of
 * issue #7: at most a third of auth0-js. No server is involved; the figures are bytes, not rates.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** @import { Scenario } from './index.js' */

const GOAL = 1 / 3;
const SVC = fileURLToPath(new URL('../../packages/client/dist/svc.js', import.meta.url));

/** @param {string} file */
function sizes(file) {
  const raw = readFileSync(file);
  return { minified: raw.length, gzipped: gzipSync(raw, { level: 9 }).length };
}

/** @type {Scenario} */
export default {
  name: 'bundle_size',
  rateLimitBuckets: [],
  run: async () => {
    const require = createRequire(import.meta.url);
    const auth0Package = /** @type {{ version: string }} */ (require('auth0-js/package.json'));
    const svc = sizes(SVC);
    const peer = sizes(require.resolve('auth0-js/dist/auth0.min.js'));
    const ratio = svc.gzipped / peer.gzipped;
    const kb = (/** @type {number} */ bytes) => `${(bytes / 1024).toFixed(1)} KB`;
    return {
      rows: [],
      figures: [
        `bundle_size: svc (dist/svc.js) ${kb(svc.minified)} minified, ${kb(svc.gzipped)} gzipped; auth0-js@${auth0Package.version} (dist/auth0.min.js) ${kb(peer.minified)} minified, ${kb(peer.gzipped)} gzipped`,
        `bundle_size: svc at ${(ratio * 100).toFixed(1)}% of auth0-js gzipped (goal ≤ ${(GOAL * 100).toFixed(1)}%): ${ratio <= GOAL ? 'met' : 'MISSED'}`,
      ],
    };
  },
};
