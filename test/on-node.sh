#!/usr/bin/env bash
# Runs test files on another supported Node.js major (README: "Supported Node.js"; CI runs only the machine's
# own Node), without touching this checkout or its node_modules:
#   test/on-node.sh [MAJOR] [test files…]       e.g. test/on-node.sh 22
# The Node binary is the npm registry's node-linux-<arch>@MAJOR package; the checkout's files (tracked and
# untracked, not ignored) are copied to a scratch directory; `npm ci` there builds better-sqlite3 for that Node
# with the headers the package ships (no download), and fails this script if it warns about an engine; then the
# files run with CI=true, so an unreachable PostgreSQL or Redis fails them instead of skipping. Without files, a
# representative set runs: SQLite and PostgreSQL storage, Redis stores, the CLI (cluster included), cookies and
# hosted pages, a certified relying party, and Chromium. The npm ci compiles SQLite: expect minutes.
set -euo pipefail
major="${1:-22}"
shift || true
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(
    packages/server/src/store/storage.test.ts
    packages/server/src/data-dir.test.ts
    packages/server/src/protection/counter-stores.test.ts
    packages/server/src/http/rate-limit/stores.test.ts
    packages/server/src/tenancy/change-bus.test.ts
    packages/server/src/cli.test.ts
    packages/server/src/login/hosted-login.test.ts
    packages/server/src/auth-api/token/authorization-code.test.ts
    test/compat/openid-client.test.ts
    packages/server/src/browser.smoke.test.ts
  )
fi

repo="$(cd "$(dirname "$0")/.." && pwd)"
scratch="${GATEHOUSE_ON_NODE_DIR:-${TMPDIR:-/tmp}/gatehouse-on-node-$major}"
mkdir -p "$scratch"
if [ ! -x "$scratch/node/bin/node" ]; then
  package="node-$(node -p 'process.platform')-$(node -p 'process.arch')@$major"
  (cd "$scratch" && rm -rf package node && tarball=$(npm pack --silent "$package" | tail -n 1) && tar xzf "$tarball" && mv package node && rm "$tarball")
fi
export PATH="$scratch/node/bin:$PATH" npm_config_nodedir="$scratch/node"
echo "on-node: node $(node -v), npm $(npm -v), in $scratch/repo"

rm -rf "$scratch/repo"
mkdir -p "$scratch/repo"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf -) | tar -xf - -C "$scratch/repo"
cd "$scratch/repo"
npm ci 2>&1 | tee "$scratch/npm-ci.log"
if grep -q EBADENGINE "$scratch/npm-ci.log"; then
  echo "on-node: npm ci warned about an engine on $(node -v) (above)" >&2
  exit 1
fi
npm run build --silent
CI=true npx vitest run "${files[@]}"
