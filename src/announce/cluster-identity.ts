// This member cluster's identity: the UID of its kube-system Namespace, which is created with the
// cluster and lives as long as it does, so two clusters configured with one cluster ID differ in
// it, and a rebuilt cluster gets a new one. Read once: a success is kept for the life of the
// process (no request at rest); a failure (e.g. RBAC without `get namespaces`) is logged and
// asked again at most once a minute, while announces go out unstamped.
import type { KubeConfig } from '@kubernetes/client-node';
import { apisOf } from '../common/kube/typed-api.js';
import { describeError } from '../common/kube/errors.js';

export const IDENTITY_NAMESPACE = 'kube-system';
const RETRY_MS = 60_000;

export interface IdentityLogger {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

/** A provider of the identity, shared by every ClusterSet of the agent. */
export function clusterIdentity(read: () => Promise<string | undefined>, logger: IdentityLogger, now: () => number = Date.now): () => Promise<string | undefined> {
  let known: string | undefined;
  let pending: Promise<string | undefined> | undefined;
  let failedAt: number | undefined;
  return async () => {
    if (known !== undefined) return known;
    if (failedAt !== undefined && now() - failedAt < RETRY_MS) return undefined;
    pending ??= (async () => {
      try {
        const uid = await read();
        if (uid === undefined || uid === '') throw new Error(`Namespace ${IDENTITY_NAMESPACE} has no metadata.uid`);
        known = uid;
        failedAt = undefined;
        logger.info('member cluster identity', { clusterUid: uid, from: `Namespace ${IDENTITY_NAMESPACE} uid` });
        return uid;
      } catch (err) {
        failedAt = now();
        logger.warn(`cannot read this cluster's identity (the UID of Namespace ${IDENTITY_NAMESPACE}): announces go out without it, ` +
          'so another member cluster using the same cluster ID cannot be detected; grant the agent get on namespaces', { error: describeError(err) });
        return undefined;
      } finally {
        pending = undefined;
      }
    })();
    return pending;
  };
}

/** Reads the kube-system Namespace's UID through the member's own API server. */
export function readNamespaceUid(kubeConfig: KubeConfig, name = IDENTITY_NAMESPACE): () => Promise<string | undefined> {
  const { core } = apisOf(kubeConfig, 'member');
  return async () => (await core.readNamespace({ name })).metadata?.uid;
}
