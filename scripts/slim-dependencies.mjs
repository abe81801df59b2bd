// An esbuild plugin of scripts/bundle.mjs: client-node and undici bundle only the parts the
// agents and the CLI can run (3.40 -> 2.48 MiB, once typed-api.ts had taken the generated APIs
// out of the project's code).
//
// V8 keeps a loaded script's whole source for the life of the process (it compiles functions
// lazily from it), so every byte of the bundle is resident in every agent, used or not. ES
// modules with side effects are bundled whenever they are imported, used or not, and
// client-node's generated models have some (their static attribute maps).
//
// 1. client-node's index. The project's code takes only KubeConfig and ListWatch from it as
//    values (everything else it imports is a type). Its import of `@kubernetes/client-node`
//    resolves to a module exporting those two, not to the index, which re-exports every
//    generated API and model, port-forwarding (ws), `cp` (tar) and more. A value the project
//    imports from anywhere else in client-node fails this build ("No matching export").
// 2. client-node's models (gen/models, 0.44 MiB). KubeConfig imports createConfiguration from
//    gen/index.js, which also re-exports every model: it is given gen/index.js without models
//    and APIs. ListWatch (dist/cache.js) imports the ObjectSerializer for one thing, to
//    "serialize" its label and field selectors as the type 'string', which returns the string
//    as it is: client-node's serializer is given a stand-in that does that and refuses anything
//    else with the reason. The build fails if cache.js uses the serializer for anything else.
// 3. client-node's Watch (dist/watch.js, with node:readline), which ListWatch's module reaches
//    only through informer.js for its event names ('add', 'update', ...): cache.js is given
//    those names alone, read from informer.js (the build fails if they are not there).
// 4. undici's fetch, WebSocket, caches, cookies, mocks and interceptors (0.35 MiB). undici is
//    CommonJS, so its index brings everything it exports whatever is imported. The project
//    uses its dispatchers (Agent; ProxyAgent through KubeConfig) and `request`. The stand-in
//    for `undici` exports those, and the global dispatcher, as undici's index does, and a
//    `fetch` that fails with the reason if anything ever calls it (client-node's modules that
//    import it are not bundled, or never run here).
//
// scripts/bundle.mjs checks afterwards that none of these is in the bundle (LEFT_OUT).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const UNDICI_DIR = path.dirname(require.resolve('undici/package.json'));
const CLIENT_NODE_DIR = path.join(path.dirname(require.resolve('@kubernetes/client-node/package.json')), 'dist');
/** client-node's own modules (not its generated code), which import its serializer. */
const CLIENT_NODE_DIST = /[\\/]node_modules[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/][^\\/]+\.js$/;
const CLIENT_NODE_CACHE = /[\\/]node_modules[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]cache\.js$/;

/** The one use of the serializer cache.js may make: a selector serialized as a string. */
const STRING_SELECTOR = /ObjectSerializer\.serialize\(this\.(labelSelector|fieldSelector), 'string'\)/g;

/** A require() of undici's own file `rel`, by its path (esbuild bundles literal paths only). */
const undici = (rel) => `require(${JSON.stringify(path.join(UNDICI_DIR, rel))})`;

const UNDICI_STAND_IN = `
'use strict';
const Dispatcher = ${undici('lib/dispatcher/dispatcher.js')};
const api = ${undici('lib/api/index.js')};
const util = ${undici('lib/core/util.js')};
const { InvalidArgumentError } = ${undici('lib/core/errors.js')};
const { getGlobalDispatcher, setGlobalDispatcher } = ${undici('lib/global.js')};
// As undici's index: every dispatcher answers request(), stream(), pipeline(), ...
Object.assign(Dispatcher.prototype, api);
module.exports.Dispatcher = Dispatcher;
module.exports.Agent = ${undici('lib/dispatcher/agent.js')};
module.exports.Pool = ${undici('lib/dispatcher/pool.js')};
module.exports.Client = ${undici('lib/dispatcher/client.js')};
module.exports.ProxyAgent = ${undici('lib/dispatcher/proxy-agent.js')};
module.exports.getGlobalDispatcher = getGlobalDispatcher;
module.exports.setGlobalDispatcher = setGlobalDispatcher;
// undici's makeDispatcher(api.request), for a URL or an origin and a path.
module.exports.request = function request(url, opts) {
  if (opts != null && typeof opts !== 'object') throw new InvalidArgumentError('invalid opts');
  if (opts && opts.path != null) {
    if (typeof opts.path !== 'string') throw new InvalidArgumentError('invalid opts.path');
    url = new URL(util.parseOrigin(url).origin + (opts.path.startsWith('/') ? opts.path : '/' + opts.path));
  } else {
    if (!opts) opts = typeof url === 'object' ? url : {};
    url = util.parseURL(url);
  }
  const { agent, dispatcher = getGlobalDispatcher(), ...rest } = opts;
  if (agent) throw new InvalidArgumentError('unsupported opts.agent. Did you mean opts.client?');
  return api.request.call(dispatcher, {
    ...rest, origin: url.origin, path: url.search ? url.pathname + url.search : url.pathname, method: opts.method || (opts.body ? 'PUT' : 'GET'),
  });
};
module.exports.fetch = function fetch() {
  return Promise.reject(new Error("undici's fetch is not in this bundle (scripts/slim-dependencies.mjs): the agent sends its requests with undici's request"));
};
`;

/** client-node's gen/index.js without `models/all.js` and the generated APIs (`types/ObjectParamAPI.js`). */
const GEN_WITHOUT_MODELS = `
export * from './http/http.js';
export * from './auth/auth.js';
export { createConfiguration } from './configuration.js';
export * from './apis/exception.js';
export * from './servers.js';
export { RequiredError } from './apis/baseapi.js';
export { Observable } from './rxjsStub.js';
`;

export const slimDependencies = {
  name: 'slim-dependencies',
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: 'undici', namespace: 'csa-undici' }));
    build.onLoad({ filter: /.*/, namespace: 'csa-undici' }, () => ({ contents: UNDICI_STAND_IN, loader: 'js', resolveDir: UNDICI_DIR }));

    build.onResolve({ filter: /^\.\/serializer\.js$/ }, (args) =>
      (CLIENT_NODE_DIST.test(args.importer) ? { path: 'serializer', namespace: 'csa-selector-serializer' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'csa-selector-serializer' }, () => ({
      contents: "export const ObjectSerializer = { serialize: (selector, type) => { if (type !== 'string') throw new Error('only selectors are serialized here (scripts/slim-dependencies.mjs)'); return selector; } };",
      loader: 'js',
    }));
    // The project's code takes from client-node's index only these values (its other imports are
    // types): anything else is an error of this build ("No matching export"), not a silent bloat.
    build.onResolve({ filter: /^@kubernetes\/client-node$/ }, (args) =>
      (args.importer.includes(`${path.sep}node_modules${path.sep}`) ? undefined : { path: 'client-node', namespace: 'csa-client-node' }));
    build.onLoad({ filter: /.*/, namespace: 'csa-client-node' }, () => ({
      contents: "export { KubeConfig } from './config.js';\nexport { ListWatch } from './cache.js';\n", loader: 'js', resolveDir: CLIENT_NODE_DIR,
    }));
    // KubeConfig imports createConfiguration from the generated code's index: everything of
    // gen/index.js but its models and APIs.
    build.onResolve({ filter: /^\.\/gen\/index\.js$/ }, (args) =>
      (CLIENT_NODE_DIST.test(args.importer) ? { path: path.join(path.dirname(args.importer), 'gen', 'index.js'), namespace: 'csa-client-node-gen' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'csa-client-node-gen' }, (args) => ({
      contents: GEN_WITHOUT_MODELS, loader: 'js', resolveDir: path.dirname(args.path),
    }));
    // cache.js takes only the event names from informer.js, whose makeInformer brings in
    // client-node's Watch (its own fetch-based watch, and node:readline): the names alone.
    build.onResolve({ filter: /^\.\/informer\.js$/ }, (args) =>
      (CLIENT_NODE_CACHE.test(args.importer) ? { path: path.join(path.dirname(args.importer), 'informer.js'), namespace: 'csa-informer-events' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'csa-informer-events' }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const names = [...source.matchAll(/^export const (\w+) = '(\w+)';$/gm)].map(([, name, value]) => ({ name, value }));
      const expected = ['ADD', 'UPDATE', 'CHANGE', 'DELETE', 'CONNECT', 'ERROR'];
      if (expected.some((name) => !names.some((n) => n.name === name))) {
        throw new Error(`client-node's informer.js no longer exports the event names ${expected.join(', ')} as string constants: see scripts/slim-dependencies.mjs`);
      }
      return { contents: names.map(({ name, value }) => `export const ${name} = '${value}';`).join('\n'), loader: 'js' };
    });
    build.onLoad({ filter: CLIENT_NODE_CACHE }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const uses = source.match(/ObjectSerializer\.\w+\([^)]*\)/g) ?? [];
      const other = uses.filter((use) => !new RegExp(STRING_SELECTOR.source).test(use));
      if (uses.length === 0 || other.length > 0) {
        throw new Error(`client-node's cache.js changed its use of ObjectSerializer (${other.join(', ') || 'none left'}): see scripts/slim-dependencies.mjs`);
      }
      return { contents: source, loader: 'js' };
    });
  },
};

/** Inputs that must not be in the bundle: they would mean a stand-in above stopped applying, or a generated API came back. */
export const LEFT_OUT = [
  /[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]gen[\\/](models|types)[\\/]/,
  // client-node's own Watch (the agents watch through json-client.ts).
  /[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]watch\.js$/,
  // The generated API classes; their exception and base classes are small and shared.
  /[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]gen[\\/]apis[\\/](?!exception\.js$|baseapi\.js$)/,
  // fetch itself, WebSocket, caches, cookies, EventSource, mocks (the dispatchers use a few of lib/web's helpers).
  /[\\/]undici[\\/]lib[\\/](web[\\/](fetch[\\/]index\.js$|websocket[\\/]|cache[\\/]|cookies[\\/]|eventsource[\\/])|mock[\\/])/,
];
