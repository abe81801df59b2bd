// An esbuild plugin of scripts/bundle.mjs.
import { createRequire } from 'node:module';

// `import ... from 'node:http'` in an ES module makes Node build the module's namespace from
// every export, getters included: http.WebSocket, CloseEvent and MessageEvent, whose getters
// load Node's own copy of undici (0.7 MiB of source, compiled and kept: about 2 MiB of heap
// that nothing here uses; the agent speaks through the bundled undici). The bundle's ES imports
// of node:http (client-node's, the health server's) get the module through require instead,
// which reads no getter; its plain exports are named so that named imports still resolve.
const nodeRequire = createRequire(import.meta.url);
const httpExports = Object.entries(Object.getOwnPropertyDescriptors(nodeRequire('node:http')))
  .filter(([name, d]) => d.get === undefined && /^[A-Za-z_$][\w$]*$/.test(name)).map(([name]) => name);
export const httpThroughRequire = {
  name: 'http-through-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?http$/ }, (args) => (args.kind === 'import-statement' ? { path: 'node:http', namespace: 'http-through-require' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'http-through-require' }, () => ({
      contents: "import { createRequire } from 'node:module';\n" +
        "const http = createRequire(import.meta.url)('node:http');\nexport default http;\n" +
        `export const { ${httpExports.join(', ')} } = http;\n`,
      loader: 'js',
    }));
  },
};
