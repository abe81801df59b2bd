#!/usr/bin/env node
// Runs the bundled CLI (npm run build); during development use `npm run agent -- run ...`.
// The Node.js check comes first: the bundle itself would fail on an older Node with a screen
// of minified code instead of a reason.
import module from 'node:module';
import { enableCompileCache, usesCompileCache } from './compile-cache.js';
import { agentExecArgv } from './node-flags.js';
import { nodeVersionProblem } from './node-version.js';

const problem = nodeVersionProblem(process.versions.node);
if (problem !== undefined) {
  console.error(problem);
  process.exit(2);
}
// The agents' V8 options (node-flags.js): Node again, same process, same arguments, with them
// (process.execve is missing on Windows: the agent then runs with V8's defaults).
const execArgv = agentExecArgv(process.argv.slice(2), process.execArgv);
if (execArgv !== undefined && typeof process.execve === 'function') process.execve(process.execPath, [process.argv0, ...execArgv, ...process.argv.slice(1)], process.env);
// Before the bundle is imported: the cache serves only modules loaded after this. Not for the
// member's `run` (compile-cache.js: the cache stays in memory for the process's life).
if (usesCompileCache(process.argv.slice(2))) enableCompileCache(module);
await import('../dist/bundle/clusterset-agent.mjs');
