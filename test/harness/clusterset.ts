// Builds the multi-cluster scenario the way an operator would: leader CRDs, namespace and
// per-member ServiceAccount (Antrea's member Role, cluster-id annotation, TokenRequest
// token) on the leader; CRDs, Secret and ClusterSet on the member.
import { PassThrough } from 'node:stream';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type V1PolicyRule } from '@kubernetes/client-node';
import { CLUSTERSET, type ClusterSet } from '../../src/common/api/antrea.js';
import { CLUSTER_ID_ANNOTATION } from '../../src/common/api/names.js';
import { ANTREA_MEMBER_ROLE_RULES } from '../../src/leader/decisions/member-role.js';
import { createLogger } from '../../src/common/log/logger.js';
import type { ControlPlane } from './control-plane.js';
import { applyCrds, createNamespace, createServiceAccountWithRole, issueToken, loadCrdFiles, waitForAccess } from './kube.js';
import { waitFor } from './wait.js';

// The canonical list lives with the `leader create-member-token` command; re-exported for tests.
export { ANTREA_MEMBER_ROLE_RULES };

export const LEADER_NS = 'antrea-multicluster';
export const AGENT_NS = 'clusterset-agent';
export const CLUSTERSET_ID = 'test-clusterset';

export async function installCrds(cp: ControlPlane): Promise<void> {
  await applyCrds(cp.adminConfig(), loadCrdFiles());
}

/** Leader side: CRDs, the leader namespace and the leader's own ClusterSet. */
export async function setupLeader(leader: ControlPlane, leaderClusterID = 'leader', namespace = LEADER_NS): Promise<void> {
  const kc = leader.adminConfig();
  await installCrds(leader);
  await createNamespace(kc, namespace);
  await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace,
    body: { apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind, metadata: { name: CLUSTERSET_ID },
      spec: { clusterID: leaderClusterID, leaders: [{ clusterID: leaderClusterID }] } },
  });
}

export interface MemberAccess {
  readonly serviceAccount: string;
  readonly token: string;
}

/** What `antctl mc create membertoken` does: an annotated SA bound to the member Role, and a token. */
export async function createMemberAccess(leader: ControlPlane, memberID: string, options: {
  serviceAccount?: string; namespace?: string; rules?: readonly V1PolicyRule[]; expirationSeconds?: number;
} = {}): Promise<MemberAccess> {
  const kc = leader.adminConfig();
  const namespace = options.namespace ?? LEADER_NS;
  const serviceAccount = options.serviceAccount ?? `member-${memberID}`;
  await createServiceAccountWithRole(kc, {
    namespace, serviceAccount, rules: options.rules ?? ANTREA_MEMBER_ROLE_RULES,
    annotations: { [CLUSTER_ID_ANNOTATION]: memberID },
  });
  const token = await issueToken(kc, namespace, serviceAccount, options.expirationSeconds);
  if ((options.rules ?? ANTREA_MEMBER_ROLE_RULES).some((r) => r.resources?.includes('memberclusterannounces') && r.verbs.includes('get'))) {
    await waitForAccess(leader, token, { verb: 'get', resource: 'memberclusterannounces', group: 'multicluster.crd.antrea.io', namespace });
  }
  return { serviceAccount, token };
}

export async function writeLeaderSecret(member: ControlPlane, name: string, data: { caPem?: string; token?: string }, namespace = AGENT_NS): Promise<void> {
  const core = member.adminConfig().makeApiClient(CoreV1Api);
  await createNamespace(member.adminConfig(), namespace);
  const body = {
    metadata: { name },
    type: 'Opaque',
    data: {
      ...(data.caPem !== undefined ? { 'ca.crt': Buffer.from(data.caPem).toString('base64') } : {}),
      ...(data.token !== undefined ? { token: Buffer.from(data.token).toString('base64') } : {}),
    },
  };
  try {
    await core.createNamespacedSecret({ namespace, body });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
    await core.replaceNamespacedSecret({ namespace, name, body });
  }
}

export interface ClusterSetSpecInput {
  readonly name?: string;
  readonly clusterID: string;
  readonly leaderClusterID?: string;
  readonly server: string;
  readonly secret: string;
  readonly leaderNamespace?: string;
}

export async function createClusterSet(member: ControlPlane, input: ClusterSetSpecInput, namespace = AGENT_NS): Promise<void> {
  await member.adminConfig().makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace,
    body: {
      apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind,
      metadata: { name: input.name ?? CLUSTERSET_ID },
      spec: {
        clusterID: input.clusterID,
        namespace: input.leaderNamespace ?? LEADER_NS,
        leaders: [{ clusterID: input.leaderClusterID ?? 'leader', server: input.server, secret: input.secret }],
      },
    },
  });
}

export function clusterSetApi(kc: KubeConfig, namespace = AGENT_NS) {
  const api = kc.makeApiClient(CustomObjectsApi);
  const ref = { group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace };
  return {
    get: async (name: string) => (await api.getNamespacedCustomObject({ ...ref, name })) as ClusterSet,
    delete: async (name: string) => { await api.deleteNamespacedCustomObject({ ...ref, name }); },
  };
}

export function readyCondition(cs: ClusterSet) {
  return cs.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Waits until the ClusterSet's Ready condition matches; returns the ClusterSet. */
export async function waitForReady(member: ControlPlane, name: string, status: 'True' | 'False' | 'Unknown', reason: string | undefined, timeoutMs: number): Promise<ClusterSet> {
  const api = clusterSetApi(member.adminConfig());
  return waitFor(`ClusterSet ${name} Ready=${status}${reason ? ` reason=${reason}` : ''}`, async () => {
    const cs = await api.get(name);
    const ready = readyCondition(cs);
    if (ready?.status === status && (reason === undefined || ready.reason === reason)) return cs;
    throw new Error(`Ready is ${JSON.stringify(ready)}`);
  }, { timeoutMs, intervalMs: 100 });
}

/** A logger that keeps the agent's JSON lines in memory, to show them when a test fails. */
export function capturedLogger(level: 'debug' | 'info' = 'debug') {
  const lines: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => { lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)); });
  return { logger: createLogger({ level, stream }), lines, text: () => lines.slice(-80).join('\n') };
}
