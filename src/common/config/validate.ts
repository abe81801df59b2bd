// Validating the merged settings: each value against its own schema, then the checks between
// settings. Problems are collected, each naming where every value involved came from.

import type { z } from 'zod';
import { alwaysDenied, defaultAllowedKinds, type Leaf } from './schema.js';
import { origin, show, type Setting } from './setting-value.js';

// The schema's constraint messages where they are not written at the constraint itself.
const defaultMessage = (issue: z.core.$ZodRawIssue): string | undefined => {
  if (issue.code === 'too_small') {
    if (issue.origin === 'array') return `must list at least ${issue.minimum}`;
    return issue.inclusive === true ? `must be at least ${issue.minimum}` : `must be greater than ${issue.minimum}`;
  }
  if (issue.code === 'too_big') {
    if (issue.origin === 'array') return `must list at most ${issue.maximum}`;
    if (issue.origin === 'string') return `must be at most ${issue.maximum} characters`;
    return issue.inclusive === true ? `must be at most ${issue.maximum}` : `must be less than ${issue.maximum}`;
  }
  if (issue.code === 'invalid_value') return `must be one of ${issue.values.map(String).join(', ')}`;
  return undefined;
};

/** What is wrong with one setting's value, one line per distinct problem. */
export function leafProblems(leaf: Leaf, value: unknown): string[] {
  const result = leaf.check.safeParse(value, { error: defaultMessage });
  if (result.success) return [];
  const messages: string[] = [];
  const itemIssues = result.error.issues.filter((issue) => issue.path.length > 0);
  if (itemIssues.length > 0) {
    const items = value as readonly unknown[];
    const badIndexes = [...new Set(itemIssues.map((issue) => Number(issue.path[0])))];
    messages.push(
      leaf.meta.badItems === undefined
        ? itemIssues.map((issue) => `item ${String(issue.path[0])} ${show(items[Number(issue.path[0])])}: ${issue.message}`).join('; ')
        : leaf.meta.badItems(badIndexes.map((i) => items[i])),
    );
  }
  messages.push(...result.error.issues.filter((issue) => issue.path.length === 0).map((issue) => issue.message));
  return [...new Set(messages)];
}

/** Checks between settings: each problem names where every value involved came from. */
export function checkRelations(merged: ReadonlyMap<string, Setting>, problems: string[]): void {
  const value = (path: string): unknown => {
    const setting = merged.get(path);
    if (setting === undefined) throw new Error(`internal: no value for ${path}`);
    return setting.value;
  };
  const at = (path: string): string => origin(merged, path);
  const fail = (path: string, message: string): void => {
    problems.push(`${at(path)}: ${message}`);
  };
  const num = (path: string): number => value(path) as number;
  const list = (path: string): readonly string[] => value(path) as readonly string[];

  if (merged.has('heartbeat.requestTimeoutSeconds')) {
    const window = num('heartbeat.intervalSeconds') * num('heartbeat.failureThreshold');
    const timeout = num('heartbeat.requestTimeoutSeconds');
    if (timeout > 0 && timeout >= window) {
      fail(
        'heartbeat.requestTimeoutSeconds',
        `must be less than heartbeat.intervalSeconds × heartbeat.failureThreshold = ${window}, or a single hung request outlasts the failure window` +
          ` (${at('heartbeat.intervalSeconds')}, ${at('heartbeat.failureThreshold')})`,
      );
    }
  }

  if (num('leaderElection.renewDeadlineSeconds') >= num('leaderElection.leaseDurationSeconds')) {
    fail(
      'leaderElection.renewDeadlineSeconds',
      `must be less than leaderElection.leaseDurationSeconds, or another replica can take the lease while this one still acts as leader (${at('leaderElection.leaseDurationSeconds')})`,
    );
  }
  if (num('leaderElection.retryPeriodSeconds') >= num('leaderElection.renewDeadlineSeconds')) {
    fail(
      'leaderElection.retryPeriodSeconds',
      `must be less than leaderElection.renewDeadlineSeconds, or the leader gets no second renewal attempt before its deadline (${at('leaderElection.renewDeadlineSeconds')})`,
    );
  }

  // The same namespace policy rules for both directions; `what` completes "can never ...".
  const deniedAlways = alwaysDenied(value('namespace') as string);
  const checkNamespacePolicy = (section: 'imports' | 'exports', what: string): void => {
    const allowedPath = `${section}.allowedNamespaces`;
    const deniedPath = `${section}.deniedNamespaces`;
    const allowedButAlwaysDenied = list(allowedPath).filter((ns) => deniedAlways.includes(ns));
    if (allowedButAlwaysDenied.length > 0) {
      fail(allowedPath, `${allowedButAlwaysDenied.join(', ')} can never ${what} (always denied: ${deniedAlways.join(', ')})`);
    }
    const allowedAndDenied = list(allowedPath).filter((ns) => list(deniedPath).includes(ns));
    if (allowedAndDenied.length > 0) {
      fail(allowedPath, `${allowedAndDenied.join(', ')} also listed in ${deniedPath} (${at(deniedPath)})`);
    }
  };
  checkNamespacePolicy('imports', 'receive imports');

  const enableLabelIdentity = value('imports.enableLabelIdentity') as boolean;
  const allowedKinds: readonly string[] = merged.has('imports.allowedKinds') ? list('imports.allowedKinds') : defaultAllowedKinds(enableLabelIdentity);
  if (allowedKinds.includes('LabelIdentity') && !enableLabelIdentity) {
    fail('imports.allowedKinds', `lists LabelIdentity but imports.enableLabelIdentity is false (${at('imports.enableLabelIdentity')})`);
  }
  if (enableLabelIdentity && !allowedKinds.includes('LabelIdentity') && merged.has('imports.allowedKinds')) {
    fail('imports.enableLabelIdentity', `is true but imports.allowedKinds does not list LabelIdentity (${at('imports.allowedKinds')})`);
  }

  checkNamespacePolicy('exports', 'be exported from');

  if (num('leader.staleMemberSeconds') < num('leader.memberTimeoutSeconds')) {
    fail('leader.staleMemberSeconds', `must be at least leader.memberTimeoutSeconds (${at('leader.memberTimeoutSeconds')}): a member is only stale once it is Disconnected`);
  }
}
