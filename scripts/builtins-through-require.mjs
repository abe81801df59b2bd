// An esbuild plugin of scripts/bundle.mjs: the bundle's ES imports of Node's built-in modules
// read them through require.
//
// `import ... from 'node:http'` in an ES module makes Node build the module's namespace from
// every export, getters included, and several getters load or build something: http.WebSocket,
// CloseEvent and MessageEvent load Node's own copy of undici (0.7 MiB of source, compiled and
// kept; the agent speaks through the bundled undici), process.stdin opens a stream on fd 0,
// tls.rootCertificates builds the PEM text of every root CA, fs.promises, crypto.webcrypto and
// net.BlockList load their modules. A CPU profile of a leader's restart had that namespace
// building as ~130 ms of its start, and Node's undici alone was ~1.5 MiB of RSS. Through
// require no getter runs: the plain exports are named here so that named imports still
// resolve, and a getter is read only where a module of the bundle imports it by name.
import { builtinModules, createRequire } from 'node:module';

const nodeRequire = createRequire(import.meta.url);
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** Built-in modules by every name they are imported by: `fs`, `node:fs`, `fs/promises`, ... */
const BUILTINS = new Set(builtinModules.flatMap((name) => (name.startsWith('node:') ? [name] : [name, `node:${name}`])));

/** The module's own exports that are plain values (no getter), as named exports of the shim. */
function plainExports(name) {
  return Object.entries(Object.getOwnPropertyDescriptors(nodeRequire(name)))
    .filter(([key, d]) => d.get === undefined && IDENTIFIER.test(key) && key !== 'default').map(([key]) => key);
}

/** Getters some module of the bundle imports by name: read when the shim is evaluated, as the ES import did. */
export const IMPORTED_GETTERS = { 'node:net': ['BlockList'] };

export const builtinsThroughRequire = {
  name: 'builtins-through-require',
  setup(b) {
    b.onResolve({ filter: /^[a-z_:/]+$/ }, (args) => {
      // The shims' own import of node:module stays an ES import (its namespace has no getter).
      if (args.kind !== 'import-statement' || !BUILTINS.has(args.path) || args.namespace === 'builtins-through-require') return undefined;
      const name = args.path.startsWith('node:') ? args.path : `node:${args.path}`;
      return { path: name, namespace: 'builtins-through-require' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtins-through-require' }, (args) => {
      const names = [...new Set([...plainExports(args.path), ...(IMPORTED_GETTERS[args.path] ?? [])])];
      return {
        contents: "import { createRequire as requireFrom } from 'node:module';\n" +
          `const m = requireFrom(import.meta.url)(${JSON.stringify(args.path)});\nexport default m;\n` +
          (names.length > 0 ? `export const { ${names.join(', ')} } = m;\n` : ''),
        loader: 'js',
      };
    });
  },
};
