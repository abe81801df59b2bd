// Reading the YAML config file into settings: keys nest along the setting paths
// (`heartbeat:\n  intervalSeconds: 10`), each value remembers its line, and every problem is
// collected rather than thrown, for loadConfig's single ConfigError.

import { isAlias, isMap, isScalar, LineCounter, parseDocument, type Document, type Node as YamlNode } from 'yaml';
import { suggest } from './did-you-mean.js';
import { COMPUTED_PATHS, LEAVES, type Leaf } from './schema.js';
import { checkYamlType, show, typeName, type Setting } from './setting-value.js';

interface SchemaTree {
  readonly [key: string]: SchemaTree | Leaf;
}

function isLeaf(node: SchemaTree | Leaf): node is Leaf {
  return typeof (node as { path?: unknown }).path === 'string';
}

const TREE: SchemaTree = buildTree();

function buildTree(): SchemaTree {
  const root: Record<string, unknown> = {};
  for (const leaf of LEAVES) {
    const segments = leaf.path.split('.');
    let node = root;
    for (const segment of segments.slice(0, -1)) {
      node[segment] ??= {};
      node = node[segment] as Record<string, unknown>;
    }
    node[segments[segments.length - 1] ?? leaf.path] = leaf;
  }
  return root as SchemaTree;
}

interface FileResult {
  readonly settings: Map<string, Setting>;
  readonly problems: string[];
}

/** The settings `text` (the file at `filePath`, named by `origin`) sets, and what is wrong with it. */
export function readConfigFile(text: string, filePath: string, origin: string): FileResult {
  const settings = new Map<string, Setting>();
  const problems: string[] = [];
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  const yamlIssues = [...doc.errors, ...doc.warnings];
  if (yamlIssues.length > 0) {
    // The parser recovers from errors with guesses; values from a broken file are not used at all.
    for (const issue of yamlIssues) {
      const pos = issue.linePos?.[0];
      const firstLine =
        issue.code === 'MULTIPLE_DOCS' && pos !== undefined
          ? `the file must hold a single YAML document (found a second one at line ${pos.line}, column ${pos.col})`
          : (issue.message.split('\n')[0] ?? issue.message).replace(/:$/, '');
      problems.push(`config file ${filePath} (from ${origin}): YAML ${issue.code}: ${firstLine}`);
    }
    return { settings, problems };
  }
  const lineOf = (node: { range?: [number, number, number] | null } | null | undefined): number =>
    node?.range ? lineCounter.linePos(node.range[0]).line : 1;
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return { settings, problems };
  walk(root, TREE, [], lineOf(root));
  return { settings, problems };

  function walk(node: unknown, tree: SchemaTree, prefix: readonly string[], line: number): void {
    const resolved = resolveAlias(doc, node);
    const where = prefix.length === 0 ? 'the top level' : prefix.join('.');
    if (!isMap(resolved)) {
      problems.push(`${where} (from file ${filePath} line ${line}): must be a mapping, got ${typeName(toJs(doc, resolved))}`);
      return;
    }
    for (const pair of resolved.items) {
      const keyNode = pair.key as YamlNode | null;
      const keyLine = lineOf(keyNode);
      const key = isScalar(keyNode) ? String(keyNode.value) : JSON.stringify(toJs(doc, keyNode));
      const path = [...prefix, key];
      const dotted = path.join('.');
      const valueNode = resolveAlias(doc, pair.value);
      const value = toJs(doc, valueNode);
      const computed = COMPUTED_PATHS.get(dotted);
      if (computed !== undefined) {
        problems.push(`${dotted} (from file ${filePath} line ${keyLine}): ${computed}`);
        continue;
      }
      const spec = Object.hasOwn(tree, key) ? tree[key] : undefined;
      if (spec === undefined) {
        const known = Object.keys(tree);
        problems.push(`${dotted} (from file ${filePath} line ${keyLine}): unknown key under ${where}${suggest(key, known)} (known: ${known.join(', ')})`);
        continue;
      }
      // `key:` with nothing after it, or `key: null`, leaves the lower layers in charge. Helm
      // renders an unset value that way, and it cannot be a typo of anything.
      if (value === null || value === undefined) continue;
      if (!isLeaf(spec)) {
        walk(valueNode, spec, path, keyLine);
        continue;
      }
      const checked = checkYamlType(spec.kind, spec.meta.fromYaml === undefined ? value : spec.meta.fromYaml(value));
      if (checked.ok) settings.set(spec.path, { value: checked.value, source: { kind: 'file', path: filePath, line: keyLine } });
      else problems.push(`${spec.path}=${show(value)} (from file ${filePath} line ${keyLine}): ${checked.reason}`);
    }
  }
}

function resolveAlias(doc: Document, node: unknown): unknown {
  return isAlias(node) ? node.resolve(doc) : node;
}

function toJs(doc: Document, node: unknown): unknown {
  if (node === null || node === undefined) return null;
  const withToJs = node as { toJS?: (doc: Document) => unknown };
  return typeof withToJs.toJS === 'function' ? withToJs.toJS(doc) : node;
}
