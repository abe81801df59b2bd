#!/usr/bin/env node
// Runs the bundled CLI (npm run build); during development use `npm run agent -- run ...`.
await import('../dist/bundle/clusterset-agent.mjs');
