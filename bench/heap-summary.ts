// Sums a V8 heap snapshot's self sizes by node type and constructor name, and strings by their
// first retainer (the property or element holding them), the biggest first:
//
//   node --import tsx bench/heap-summary.ts <file.heapsnapshot> [--top 30]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' }, of: { type: 'string', multiple: true, default: [] }, owners: { type: 'string', default: '' } } });
const file = positionals[0];
if (file === undefined) throw new Error('usage: heap-summary.ts <file.heapsnapshot>');
const TOP = Number(values.top);

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}
const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const { node_fields: nf, node_types: nt, edge_fields: ef, edge_types: et } = snap.snapshot.meta;
const NF = nf.length;
const EF = ef.length;
const [iType, iName, iSize, iEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => nf.indexOf(f)) as [number, number, number, number];
const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f)) as [number, number, number];
const nodeTypes = nt[0];
const edgeTypes = et[0];
const nodes = snap.nodes;
const edges = snap.edges;
const count = nodes.length / NF;

// First retainer of each node (by index), with the edge's name.
const retainer = new Int32Array(count).fill(-1);
const retainerEdge = new Array<string>(count);
let e = 0;
for (let n = 0; n < count; n++) {
  const edgeCount = nodes[n * NF + iEdges] ?? 0;
  for (let k = 0; k < edgeCount; k++, e += EF) {
    const to = (edges[e + eTo] ?? 0) / NF;
    const type = edgeTypes[edges[e + eType] ?? 0];
    if (type === 'weak' || type === 'shortcut') continue;
    if (retainer[to] === -1) {
      retainer[to] = n;
      retainerEdge[to] = type === 'element' || type === 'hidden' ? `[${type}]` : String(snap.strings[edges[e + eName] ?? 0]);
    }
  }
}

const byKind = new Map<string, { size: number; count: number }>();
const stringsBy = new Map<string, { size: number; count: number }>();
let total = 0;
for (let n = 0; n < count; n++) {
  const type = nodeTypes[nodes[n * NF + iType] ?? 0] ?? '?';
  const size = nodes[n * NF + iSize] ?? 0;
  total += size;
  const name = type === 'object' || type === 'closure' || type === 'native' || type === 'hidden' || type === 'code' ? `${type} ${String(snap.strings[nodes[n * NF + iName] ?? 0]).slice(0, 60)}` : type;
  const k = byKind.get(name) ?? { size: 0, count: 0 };
  k.size += size; k.count += 1; byKind.set(name, k);
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') {
    const r = retainer[n] ?? -1;
    const owner = r === -1 ? '?' : `${nodeTypes[nodes[r * NF + iType] ?? 0] ?? '?'} ${String(snap.strings[nodes[r * NF + iName] ?? 0]).slice(0, 40)}`;
    const key = `${owner} .${retainerEdge[n] ?? '?'}`;
    const s = stringsBy.get(key) ?? { size: 0, count: 0 };
    s.size += size; s.count += 1; stringsBy.set(key, s);
  }
}
// For each --of category (a line of the first table, e.g. "object shape"): its first retainers.
const ofKinds = new Map<string, Map<string, { size: number; count: number }>>(values.of.map((k) => [k, new Map()]));
if (ofKinds.size > 0) {
  for (let n = 0; n < count; n++) {
    const type = nodeTypes[nodes[n * NF + iType] ?? 0] ?? '?';
    const name = type === 'object' || type === 'closure' || type === 'native' || type === 'hidden' || type === 'code' ? `${type} ${String(snap.strings[nodes[n * NF + iName] ?? 0]).slice(0, 60)}` : type;
    const m = ofKinds.get(name);
    if (m === undefined) continue;
    const r = retainer[n] ?? -1;
    const r2 = r === -1 ? -1 : retainer[r] ?? -1;
    const label = (x: number) => (x === -1 ? '?' : `${nodeTypes[nodes[x * NF + iType] ?? 0] ?? '?'} ${String(snap.strings[nodes[x * NF + iName] ?? 0]).slice(0, 40)}`);
    const key = `${label(r2)} .${r2 === -1 ? '' : retainerEdge[r] ?? '?'} -> ${label(r)} .${retainerEdge[n] ?? '?'}`;
    const s = m.get(key) ?? { size: 0, count: 0 };
    s.size += nodes[n * NF + iSize] ?? 0; s.count += 1; m.set(key, s);
  }
}
const mb = (b: number) => (b / 2 ** 20).toFixed(2).padStart(7);
console.log(`total self size ${mb(total)} MiB in ${String(count)} nodes`);
console.log('\nby type and constructor:');
for (const [k, v] of [...byKind].sort((a, b) => b[1].size - a[1].size).slice(0, TOP)) console.log(`  ${mb(v.size)} MiB ${String(v.count).padStart(8)}  ${k}`);
console.log('\nstrings by first retainer:');
for (const [k, v] of [...stringsBy].sort((a, b) => b[1].size - a[1].size).slice(0, TOP)) console.log(`  ${mb(v.size)} MiB ${String(v.count).padStart(8)}  ${k}`);
for (const [kind, m] of ofKinds) {
  console.log(`\n${kind} by retainer's retainer -> retainer:`);
  for (const [k, v] of [...m].sort((a, b) => b[1].size - a[1].size).slice(0, TOP)) console.log(`  ${mb(v.size)} MiB ${String(v.count).padStart(8)}  ${k}`);
}

// --owners A,B,...: each node's self size charged to the first of these constructors met going up
// its chain of first retainers (a cheap stand-in for a dominator tree), the rest to "(other)".
if (values.owners !== '') {
  const wanted = new Set(values.owners.split(','));
  const charged = new Map<string, number>();
  const ownerOf = new Int32Array(count).fill(-2);
  const nameOf = (x: number) => String(snap.strings[nodes[x * NF + iName] ?? 0]);
  const typeOf = (x: number) => nodeTypes[nodes[x * NF + iType] ?? 0] ?? '?';
  for (let n = 0; n < count; n++) {
    const chain: number[] = [];
    let x = n;
    let owner = -1;
    for (let depth = 0; depth < 40 && x !== -1; depth++) {
      if ((ownerOf[x] ?? -2) !== -2) { owner = ownerOf[x] ?? -1; break; }
      chain.push(x);
      if (typeOf(x) === 'object' && wanted.has(nameOf(x))) { owner = x; break; }
      x = retainer[x] ?? -1;
    }
    for (const c of chain) ownerOf[c] = owner;
    const label = owner === -1 ? '(other)' : `${nameOf(owner)}${retainerEdge[owner] === undefined ? '' : ` (.${retainerEdge[owner] ?? ''})`}`;
    charged.set(label, (charged.get(label) ?? 0) + (nodes[n * NF + iSize] ?? 0));
  }
  console.log('\ncharged to owners (first-retainer chains):');
  for (const [k, v] of [...charged].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`  ${mb(v)} MiB  ${k}`);
}
