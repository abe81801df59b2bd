// The Corefile edit that makes a member's CoreDNS serve clusterset.local (KEP-1645 DNS) from the
// ServiceImports and MCS EndpointSlices the agent writes: `clusterset.local` among the zones of
// the `kubernetes` plugin and `multicluster clusterset.local` in its block (stock CoreDNS ≥ 1.12.2).
// Pure: text in, decision out. It edits only the one shape it understands, kubeadm's and the
// distributions' that share it, and otherwise changes nothing and says what to add by hand, so a
// Corefile it does not understand is never rewritten.

export const CLUSTERSET_ZONE = 'clusterset.local';
/** Ends the line the patch adds: how the revert tells its own line from one written by hand. */
export const PATCH_MARKER = '# added by clusterset-agent join --configure-dns';
const MULTICLUSTER_LINE = `multicluster ${CLUSTERSET_ZONE}`;

/** What to add by hand when the Corefile is not a shape the patch knows. */
export const MANUAL_INSTRUCTIONS =
  `in the server block for "." add ${CLUSTERSET_ZONE} to the zones of the kubernetes plugin and the line ` +
  `"${MULTICLUSTER_LINE}" inside its block, e.g.\n` +
  `    kubernetes cluster.local ${CLUSTERSET_ZONE} in-addr.arpa ip6.arpa {\n` +
  '      pods insecure\n' +
  '      fallthrough in-addr.arpa ip6.arpa\n' +
  `      ${MULTICLUSTER_LINE}\n` +
  '    }';

export type CorefilePlan =
  /** `corefile` is the new text; write it. */
  | { readonly action: 'write'; readonly corefile: string }
  /** Nothing to write: already in the wanted state. */
  | { readonly action: 'none'; readonly why: string }
  /** Not a shape this edit knows: write nothing; `why` says what was found, `manual` what to do. */
  | { readonly action: 'refuse'; readonly why: string; readonly manual: string };

interface Line {
  /** The line without its comment, trimmed. */
  readonly code: string;
  readonly comment: string;
}

/** Splits off a `#` comment (any `#` outside quotes), as CoreDNS's Caddyfile lexer does. */
function splitComment(raw: string): Line {
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '\\') { i++; continue; }
    if (c === '"') quoted = !quoted;
    else if (c === '#' && !quoted) return { code: raw.slice(0, i).trim(), comment: raw.slice(i) };
  }
  return { code: raw.trim(), comment: '' };
}

interface KubernetesBlock {
  /** Index of the `kubernetes ... {` line. */
  readonly open: number;
  /** Index of its closing `}` line. */
  readonly close: number;
  readonly zones: readonly string[];
}

type Found = { readonly block: KubernetesBlock; readonly lines: readonly string[] } | { readonly problem: string };

/** Finds the single `kubernetes` block in a server block for the root zone; a problem otherwise. */
function findKubernetesBlock(corefile: string): Found {
  const lines = corefile.split('\n');
  const parsed = lines.map(splitComment);
  let depth = 0;
  let serverKeys: string[] = [];
  let pendingKeys: string[] = [];
  const found: KubernetesBlock[] = [];
  for (let i = 0; i < parsed.length; i++) {
    const { code } = parsed[i] as Line;
    if (code === '') continue;
    if (/["`]/.test(code)) {
      if (/^kubernetes\b/.test(code)) return { problem: `line ${String(i + 1)} quotes part of the kubernetes plugin's configuration` };
    }
    const tokens = code.replace(/[{}]/g, ' $& ').split(/\s+/).filter((t) => t !== '');
    if (depth === 1 && tokens[0] === 'kubernetes') {
      if (tokens.at(-1) !== '{' || tokens.slice(1, -1).some((t) => t === '{' || t === '}')) {
        return { problem: `line ${String(i + 1)} ("${code}") is a kubernetes plugin without an options block opened on the same line` };
      }
      let close = -1;
      for (let j = i + 1; j < parsed.length; j++) {
        const inner = (parsed[j] as Line).code;
        if (inner === '}') { close = j; break; }
        if (inner.includes('{') || inner.includes('}')) return { problem: `line ${String(j + 1)} ("${inner}") nests a block inside the kubernetes plugin's options` };
      }
      if (close < 0) return { problem: `the kubernetes block opened on line ${String(i + 1)} is never closed` };
      if (!serverKeys.some((key) => key === '.' || key.startsWith('.:') || /^dns:\/\/\.(:\d+)?$/.test(key))) {
        return { problem: `the kubernetes plugin is in the server block "${serverKeys.join(' ')}", which does not receive queries for ${CLUSTERSET_ZONE} (only a "." server block does)` };
      }
      found.push({ open: i, close, zones: tokens.slice(1, -1) });
      i = close;
      continue;
    }
    for (const token of tokens) {
      if (token === '{') {
        if (depth === 0) { serverKeys = pendingKeys; pendingKeys = []; }
        depth++;
      } else if (token === '}') {
        depth--;
        if (depth < 0) return { problem: `line ${String(i + 1)} closes a block that was never opened` };
      } else if (depth === 0) {
        pendingKeys.push(token);
      }
    }
    if (depth === 0 && tokens.at(-1) !== '{' && tokens[0] === 'import') pendingKeys = [];
  }
  if (depth !== 0) return { problem: 'a block is opened and never closed' };
  if (found.length === 0) return { problem: 'no kubernetes plugin block was found in a server block' };
  if (found.length > 1) return { problem: `${String(found.length)} kubernetes plugin blocks were found (lines ${found.map((b) => String(b.open + 1)).join(', ')}); only one is edited automatically` };
  return { block: found[0] as KubernetesBlock, lines };
}

function multiclusterLines(lines: readonly string[], block: KubernetesBlock): { index: number; zones: string[]; ours: boolean }[] {
  const out: { index: number; zones: string[]; ours: boolean }[] = [];
  for (let j = block.open + 1; j < block.close; j++) {
    const { code, comment } = splitComment(lines[j] ?? '');
    const tokens = code.split(/\s+/);
    if (tokens[0] === 'multicluster') out.push({ index: j, zones: tokens.slice(1), ours: comment.trim() === PATCH_MARKER });
  }
  return out;
}

function indentOf(line: string): string {
  return /^\s*/.exec(line)?.[0] ?? '';
}

/** Rewrites the zones of the `kubernetes` line, keeping its indentation and any comment. */
function withZones(line: string, zones: readonly string[]): string {
  const { comment } = splitComment(line);
  return `${indentOf(line)}kubernetes ${zones.join(' ')} {${comment === '' ? '' : ` ${comment}`}`;
}

const refuse = (why: string): CorefilePlan => ({ action: 'refuse', why, manual: MANUAL_INSTRUCTIONS });

/** The Corefile serving clusterset.local through the kubernetes plugin, or why it cannot be edited. */
export function planCorefilePatch(corefile: string): CorefilePlan {
  const found = findKubernetesBlock(corefile);
  if ('problem' in found) return refuse(found.problem);
  const { block, lines } = found;
  const multicluster = multiclusterLines(lines, block);
  const hasZone = block.zones.includes(CLUSTERSET_ZONE);
  const served = multicluster.some((m) => m.zones.includes(CLUSTERSET_ZONE));
  if (hasZone && served) return { action: 'none', why: `the kubernetes plugin already serves ${CLUSTERSET_ZONE} (multicluster)` };
  if (multicluster.length > 0) return refuse(`the kubernetes plugin already has "multicluster ${multicluster[0]?.zones.join(' ') ?? ''}" (line ${String((multicluster[0]?.index ?? 0) + 1)}), configured by someone else`);
  if (hasZone) return refuse(`the kubernetes plugin already lists ${CLUSTERSET_ZONE} without multicluster (line ${String(block.open + 1)}), configured by someone else`);
  if (block.zones.length === 0) return refuse(`the kubernetes plugin on line ${String(block.open + 1)} lists no zones (it then serves the server block's zones)`);

  const out = [...lines];
  // After the first forward zone (cluster.local in kubeadm's shape), before the reverse zones.
  const firstReverse = block.zones.findIndex((z) => /\.arpa\.?$/.test(z));
  const at = firstReverse < 0 ? block.zones.length : firstReverse;
  out[block.open] = withZones(lines[block.open] ?? '', [...block.zones.slice(0, at), CLUSTERSET_ZONE, ...block.zones.slice(at)]);
  const optionLine = lines.slice(block.open + 1, block.close).find((l) => l.trim() !== '');
  const indent = optionLine !== undefined ? indentOf(optionLine) : `${indentOf(lines[block.open] ?? '')}    `;
  out.splice(block.close, 0, `${indent}${MULTICLUSTER_LINE} ${PATCH_MARKER}`);
  return { action: 'write', corefile: out.join('\n') };
}

/** The Corefile without what {@link planCorefilePatch} added; a line written by hand is left alone. */
export function planCorefileRevert(corefile: string): CorefilePlan {
  const found = findKubernetesBlock(corefile);
  if ('problem' in found) return { action: 'none', why: `nothing of ours to remove: ${found.problem}` };
  const { block, lines } = found;
  const ours = multiclusterLines(lines, block).filter((m) => m.ours);
  if (ours.length === 0) return { action: 'none', why: `the kubernetes plugin has no multicluster line added by clusterset-agent` };
  const out = [...lines];
  out[block.open] = withZones(lines[block.open] ?? '', block.zones.filter((z) => z !== CLUSTERSET_ZONE));
  for (const m of ours.reverse()) out.splice(m.index, 1);
  return { action: 'write', corefile: out.join('\n') };
}

/** Whether the Corefile has the kubernetes plugin serving clusterset.local, by whoever configured it. */
export function corefileServesClusterset(corefile: string): { readonly served: boolean; readonly why: string } {
  const found = findKubernetesBlock(corefile);
  if ('problem' in found) return { served: false, why: found.problem };
  const { block, lines } = found;
  if (!block.zones.includes(CLUSTERSET_ZONE)) return { served: false, why: `the kubernetes plugin's zones (${block.zones.join(' ') || 'none'}) do not include ${CLUSTERSET_ZONE}` };
  if (!multiclusterLines(lines, block).some((m) => m.zones.includes(CLUSTERSET_ZONE))) return { served: false, why: `the kubernetes plugin has no "${MULTICLUSTER_LINE}"` };
  return { served: true, why: `the kubernetes plugin has ${CLUSTERSET_ZONE} and "${MULTICLUSTER_LINE}"` };
}
