// A setting's value on its way into the configuration: where it came from (for messages that
// point at the file line, variable or flag to fix), and how text from the environment or a
// flag, or a typed YAML value, becomes a value of the setting's kind. The schema checks the
// rest (validate.ts).

import type { LeafKind } from './schema.js';

export type Source =
  | { readonly kind: 'default' }
  | { readonly kind: 'file'; readonly path: string; readonly line: number }
  | { readonly kind: 'env'; readonly name: string }
  | { readonly kind: 'flag'; readonly name: string };

function describeSource(source: Source): string {
  switch (source.kind) {
    case 'default':
      return 'default';
    case 'file':
      return `file ${source.path} line ${source.line}`;
    case 'env':
      return `env ${source.name}`;
    case 'flag':
      return `flag --${source.name}`;
  }
}

export interface Setting {
  readonly value: unknown;
  readonly source: Source;
}

export function show(value: unknown): string {
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

/** `path=value (from source)`, the prefix of every problem about a merged setting. */
export function origin(merged: ReadonlyMap<string, Setting>, path: string): string {
  const setting = merged.get(path);
  if (setting === undefined) throw new Error(`internal: no value for ${path}`);
  return `${path}=${show(setting.value)} (from ${describeSource(setting.source)})`;
}

// ---------------------------------------------------------------------------------------------
// Parsing text (env and flags) and typed YAML values into a setting's kind; the schema checks
// the rest.

export type Parsed = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

export function parseText(kind: LeafKind, text: string): Parsed {
  switch (kind) {
    case 'string':
      return { ok: true, value: text };
    case 'integer': {
      const value = Number(text);
      return /^[+-]?[0-9]+$/.test(text.trim()) && Number.isSafeInteger(value)
        ? { ok: true, value }
        : { ok: false, reason: 'must be an integer' };
    }
    case 'number': {
      const value = Number(text);
      return /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)$/.test(text.trim()) && Number.isFinite(value)
        ? { ok: true, value }
        : { ok: false, reason: 'must be a number' };
    }
    case 'boolean': {
      const lower = text.trim().toLowerCase();
      if (lower === 'true') return { ok: true, value: true };
      if (lower === 'false') return { ok: true, value: false };
      return { ok: false, reason: 'must be true or false' };
    }
    case 'stringList':
      return {
        ok: true,
        value: text
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== ''),
      };
  }
}

export function checkYamlType(kind: LeafKind, value: unknown): Parsed {
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? { ok: true, value } : { ok: false, reason: `must be a string, got ${typeName(value)}` };
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value)
        ? { ok: true, value }
        : { ok: false, reason: `must be an integer, got ${typeName(value)}` };
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
        ? { ok: true, value }
        : { ok: false, reason: `must be a number, got ${typeName(value)}` };
    case 'boolean':
      return typeof value === 'boolean' ? { ok: true, value } : { ok: false, reason: `must be a boolean, got ${typeName(value)}` };
    case 'stringList': {
      if (!Array.isArray(value)) return { ok: false, reason: `must be a list of strings, got ${typeName(value)}` };
      const bad = value.findIndex((item) => typeof item !== 'string');
      return bad === -1
        ? { ok: true, value }
        : { ok: false, reason: `must be a list of strings, item ${bad} is ${typeName(value[bad])}` };
    }
  }
}

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number') return Number.isInteger(value) ? `integer ${value}` : `number ${value}`;
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}
