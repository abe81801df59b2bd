// The member cluster's own credentials, checked before the first request. client-node reads the
// ServiceAccount token lazily and sends no Authorization header when the file is empty or gone,
// so a Pod without a mounted token would retry 403s for system:anonymous forever. Say so at start.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/config.js';

/** Where client-node's `loadFromCluster(pathPrefix)` reads the ServiceAccount (see its config.js). */
export const SERVICEACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface InClusterFiles {
  readonly token: string;
  readonly ca: string;
}

/** The files `loadFromCluster(pathPrefix)` uses; the prefix lets tests point at a temp dir. */
export function inClusterFiles(pathPrefix = ''): InClusterFiles {
  return { token: `${pathPrefix}${SERVICEACCOUNT_DIR}/token`, ca: `${pathPrefix}${SERVICEACCOUNT_DIR}/ca.crt` };
}

type FileState = 'ok' | 'missing' | 'empty' | 'unreadable';

function fileState(file: string): { state: FileState; detail?: string } {
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'missing' };
    return { state: 'unreadable', detail: code ?? String(err) };
  }
  return { state: content.trim() === '' ? 'empty' : 'ok' };
}

function describeState(what: string, file: string, s: { state: FileState; detail?: string }): string {
  const how = s.state === 'missing' ? 'does not exist' : s.state === 'empty' ? 'is empty' : `cannot be read (${s.detail ?? 'error'})`;
  return `${what} ${file} ${how}`;
}

/**
 * Problems with the member credentials the agent would use: the kubeconfig file when one is
 * configured, else the in-cluster ServiceAccount token and CA. Empty when all is well.
 */
export function memberCredentialProblems(kubeconfig: string | undefined, files: InClusterFiles = inClusterFiles()): string[] {
  if (kubeconfig !== undefined) {
    const s = fileState(kubeconfig);
    return s.state === 'ok' ? [] : [`${describeState('kubeconfig', kubeconfig, s)}: pass an existing kubeconfig with --kubeconfig (or KUBECONFIG), or leave it unset to use the in-cluster ServiceAccount`];
  }
  const problems: string[] = [];
  for (const [what, file] of [['in-cluster ServiceAccount token', files.token], ['in-cluster ServiceAccount CA', files.ca]] as const) {
    const s = fileState(file);
    if (s.state !== 'ok') problems.push(`${describeState(what, file, s)}: mount the ServiceAccount token (automountServiceAccountToken) or pass --kubeconfig`);
  }
  return problems;
}

/** Throws a {@link ConfigError} naming every missing or empty credential file. */
export function assertMemberCredentials(kubeconfig: string | undefined, files?: InClusterFiles): void {
  const problems = memberCredentialProblems(kubeconfig, files);
  if (problems.length > 0) throw new ConfigError(problems);
}
