// Which Node.js runs the published CLI. Its dependencies set the floor (undici 8 needs
// >= 22.19.0, commander 15 >= 22.12.0): on an older Node the bundle dies half-way through
// loading with a TypeError and prints a screen of minified code. Plain JavaScript that parses
// on any Node, checked before the bundle is loaded.

/** The oldest Node.js the CLI runs on: the newest floor among its dependencies' `engines`. */
export const MINIMUM_NODE = '22.19.0';

function parse(version) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  return m === null ? undefined : [Number(m[1]), Number(m[2]), Number(m[3])];
}

/** Why `version` (as in `process.versions.node`) cannot run the CLI, in one line; undefined when it can. */
export function nodeVersionProblem(version) {
  const have = parse(version);
  const need = parse(MINIMUM_NODE);
  if (have !== undefined) {
    for (let i = 0; i < 3; i++) {
      if (have[i] !== need[i]) {
        if (have[i] > need[i]) return undefined;
        break;
      }
      if (i === 2) return undefined;
    }
  }
  return `clusterset-agent needs Node.js ${MINIMUM_NODE} or newer (22 or 24 LTS); this is Node.js ${String(version)}. ` +
    'Install Node.js 24 (or 22.19+) and run it again, or run the image (npm run image) instead.';
}
