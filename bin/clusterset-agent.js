#!/usr/bin/env node
// Runs the compiled CLI (npm run build); during development use `npm run agent -- run ...`.
await import('../dist/cli/main.js');
