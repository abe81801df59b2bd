// Mixing this project with the real Antrea: set-up steps shared by the antrea-*.test.ts files.
// Leaders of either kind (`leader run` behind the chart's policies, or antrea-mc-controller
// leader with Antrea's manifests) and members of either kind (this agent with the chart's CRDs,
// or antrea-mc-controller member with Antrea's manifests), joined the way each one's docs say.
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { SERVICE_EXPORT_V1ALPHA1 } from '../../src/common/api/mcs.js';
import { CLUSTERSET, type ClusterSet } from '../../src/common/api/antrea.js';
import { startAgent, type Agent } from '../../src/agent.js';
import { loadConfig } from '../../src/common/config/config.js';
import { LeaderController } from '../../src/leader/controller.js';
import {
  ANTREA_LEADER_NS, ANTREA_MEMBER_NS, createAntreaLeaderClusterSet, createAntreaMemberToken, installAntreaLeader, installAntreaMember,
  startAntreaController, type AntreaController,
} from './antrea.js';
import { AGENT_NS, capturedLogger, CLUSTERSET_ID, createClusterSet, createMemberAccess, installCrds, setupLeader, writeLeaderSecret } from './clusterset.js';
import type { ControlPlane } from './control-plane.js';
import { maybe } from './imports.js';
import { createNamespace, issueToken, kubectlApply, tokenConfig } from './kube.js';
import { CHART, helmTemplate } from './leader-admission.js';
import { waitFor } from './wait.js';

export const APP_NS = 'team-a';
const RELEASE_NS = 'csa-leader';
const LEADER_SA = 'csa-leader-clusterset-agent';

/** A leader of either kind: what a member needs to join it, and how to stop it. */
export interface InteropLeader {
  readonly kind: 'ours' | 'antrea';
  readonly cp: ControlPlane;
  /** The leader's cluster ID (its own ClusterSet's; members name it in spec.leaders). */
  readonly clusterID: string;
  /** A token for member `clusterID`, the way this kind of leader issues one. */
  memberToken(clusterID: string): Promise<string>;
  log(): string;
  stop(): Promise<void>;
}

/** This project's `leader run` (in-process), with the chart in mode=leader and its own ServiceAccount's token. */
export async function startOurLeader(cp: ControlPlane, options: { memberTimeoutMs?: number; staleMemberMs?: number; clusterID?: string } = {}): Promise<InteropLeader & { controller: LeaderController; restart(staleMemberMs?: number): Promise<void> }> {
  const clusterID = options.clusterID ?? 'leader';
  await setupLeader(cp, clusterID);
  await createNamespace(cp.adminConfig(), RELEASE_NS);
  await kubectlApply(cp, await helmTemplate(['csa-leader', CHART, '--namespace', RELEASE_NS, '--set', 'mode=leader', '--set', 'leader.createNamespace=false']));
  const token = await issueToken(cp.adminConfig(), RELEASE_NS, LEADER_SA);
  let log = capturedLogger();
  const make = (staleMemberMs: number) => new LeaderController({
    kubeConfig: tokenConfig(cp, token, LEADER_SA), namespace: 'antrea-multicluster',
    memberTimeoutMs: options.memberTimeoutMs ?? 15_000, staleMemberMs, logger: log.logger,
  });
  const leader = {
    kind: 'ours' as const, cp, clusterID,
    controller: make(options.staleMemberMs ?? 86_400_000),
    memberToken: async (clusterID: string) => (await createMemberAccess(cp, clusterID)).token,
    log: () => log.text(),
    stop: async () => { await leader.controller.stop(); },
    async restart(staleMemberMs = options.staleMemberMs ?? 86_400_000) {
      await leader.controller.stop();
      log = capturedLogger();
      leader.controller = make(staleMemberMs);
      await leader.controller.start();
    },
  };
  await leader.controller.start();
  return leader;
}

/** Antrea's leader: its manifests as they are, its controller process, and the leader's own ClusterSet. */
export async function startAntreaLeader(cp: ControlPlane, clusterID = 'leader'): Promise<InteropLeader & { controller: AntreaController }> {
  await installAntreaLeader(cp);
  const controller = await startAntreaController(cp, 'leader');
  await createAntreaLeaderClusterSet(cp, CLUSTERSET_ID, clusterID);
  return {
    kind: 'antrea', cp, clusterID, controller,
    memberToken: (clusterID) => createAntreaMemberToken(cp, clusterID),
    log: () => controller.logs(80),
    stop: () => controller.stop(),
  };
}

/** A member of either kind, joined to `leader` under `clusterID`. */
export interface InteropMember {
  readonly kind: 'ours' | 'antrea';
  readonly id: string;
  readonly cp: ControlPlane;
  /** The namespace holding its ClusterSet. */
  readonly namespace: string;
  log(): string;
  /** Stops the member's process (its ClusterSet stays). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Deletes its ClusterSet: the member leaves. */
  leave(): Promise<void>;
  /** Points its ClusterSet at another leader (deleted, then created again). */
  join(leader: InteropLeader): Promise<void>;
}

async function writeClusterSet(cp: ControlPlane, namespace: string, id: string, leader: InteropLeader, token: string): Promise<void> {
  await writeLeaderSecret(cp, 'leader-token', { caPem: leader.cp.caPem, token }, namespace);
  await createClusterSet(cp, { clusterID: id, leaderClusterID: leader.clusterID, server: leader.cp.server, secret: 'leader-token' }, namespace);
}

/** Deletes the member's ClusterSet and waits until it is gone (its controller releases its finalizer). */
async function deleteClusterSet(cp: ControlPlane, namespace: string): Promise<void> {
  const api = cp.adminConfig().makeApiClient(CustomObjectsApi);
  const ref = { group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace, name: CLUSTERSET_ID };
  await maybe(() => api.deleteNamespacedCustomObject(ref));
  await waitFor(`ClusterSet ${namespace}/${CLUSTERSET_ID} gone from ${cp.name}`, async () => (await maybe(() => api.getNamespacedCustomObject(ref))) === undefined,
    { timeoutMs: 60_000, intervalMs: 200 });
}

/** This project's agent (in-process, admin kubeconfig of `cp`), with the chart's CRDs. */
export async function startOurMember(cp: ControlPlane, id: string, leader: InteropLeader, options: { heartbeatSeconds?: number } = {}): Promise<InteropMember & { agent(): Agent | undefined }> {
  await installCrds(cp);
  for (const ns of [AGENT_NS, APP_NS]) await createNamespace(cp.adminConfig(), ns);
  await writeClusterSet(cp, AGENT_NS, id, leader, await leader.memberToken(id));
  let log = capturedLogger();
  let agent: Agent | undefined;
  const member: InteropMember & { agent(): Agent | undefined } = {
    kind: 'ours', id, cp, namespace: AGENT_NS,
    agent: () => agent,
    log: () => log.text(),
    async start() {
      log = capturedLogger();
      const config = loadConfig({ env: {}, readFile: () => '' });
      agent = await startAgent({ ...config, namespace: AGENT_NS, heartbeat: { ...config.heartbeat, intervalSeconds: options.heartbeatSeconds ?? 2, requestTimeoutSeconds: 2 } }, log.logger, cp.adminConfig());
    },
    async stop() { await agent?.stop(); agent = undefined; },
    leave: () => deleteClusterSet(cp, AGENT_NS),
    async join(next) {
      await deleteClusterSet(cp, AGENT_NS);
      await writeClusterSet(cp, AGENT_NS, id, next, await next.memberToken(id));
    },
  };
  await member.start();
  return member;
}

/** Antrea's member: its manifests and Antrea's CRDs, its controller process, then its Secret and ClusterSet in kube-system. */
export async function startAntreaMember(cp: ControlPlane, id: string, leader: InteropLeader): Promise<InteropMember & { controller(): AntreaController | undefined }> {
  await installAntreaMember(cp);
  await createNamespace(cp.adminConfig(), APP_NS);
  let controller: AntreaController | undefined = await startAntreaController(cp, 'member');
  let lastLog = '';
  await writeClusterSet(cp, ANTREA_MEMBER_NS, id, leader, await leader.memberToken(id));
  return {
    kind: 'antrea', id, cp, namespace: ANTREA_MEMBER_NS,
    controller: () => controller,
    log: () => controller?.logs(80) ?? lastLog,
    async start() { controller = await startAntreaController(cp, 'member'); },
    async stop() { lastLog = controller?.logs(80) ?? ''; await controller?.stop(); controller = undefined; },
    leave: () => deleteClusterSet(cp, ANTREA_MEMBER_NS),
    async join(next) {
      await deleteClusterSet(cp, ANTREA_MEMBER_NS);
      // Antrea v2.7's member cannot join a second ClusterSet in the same process: its
      // ResourceImport controller is registered again and refused ("controller with name
      // resourceimport already exists"), so nothing is imported until it restarts.
      await controller?.stop();
      controller = await startAntreaController(cp, 'member');
      await writeClusterSet(cp, ANTREA_MEMBER_NS, id, next, await next.memberToken(id));
    },
  };
}

/** The member's own ClusterSet (either kind writes a Ready condition into its status). */
export async function memberClusterSet(m: InteropMember): Promise<ClusterSet | undefined> {
  return maybe(async () => (await m.cp.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: m.namespace, name: CLUSTERSET_ID,
  })) as ClusterSet);
}

/** The leader's ClusterSet in the common area, with the per-member statuses its controller writes. */
export async function leaderClusterSet(leader: InteropLeader): Promise<ClusterSet> {
  return (await leader.cp.adminConfig().makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: ANTREA_LEADER_NS, name: CLUSTERSET_ID,
  })) as ClusterSet;
}

/** The Ready condition the leader reports for member `id` (undefined until it has one). */
export async function memberStatusOnLeader(leader: InteropLeader, id: string) {
  const cs = await leaderClusterSet(leader);
  return cs.status?.clusterStatuses?.find((s) => s.clusterID === id)?.conditions?.find((c) => c.type === 'Ready');
}

/** A ClusterIP Service with an EndpointSlice, exported with a ServiceExport; returns its ClusterIP. */
export async function exportService(cp: ControlPlane, name: string, port: number, namespace = APP_NS,
  exportSpec?: { exportedLabels?: Record<string, string>; exportedAnnotations?: Record<string, string> }): Promise<string> {
  const kc = cp.adminConfig();
  const svc = await kc.makeApiClient(CoreV1Api).createNamespacedService({ namespace, body: { metadata: { name }, spec: { type: 'ClusterIP', ports: [{ name: 'http', port, protocol: 'TCP', targetPort: 8080 }] } } });
  await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
    namespace,
    body: {
      metadata: { name: `${name}-abc`, labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4',
      endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    },
  });
  await kc.makeApiClient(CoreV1Api).createNamespacedEndpoints({
    namespace, body: { metadata: { name }, subsets: [{ addresses: [{ ip: '10.244.1.5' }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }] },
  });
  // v1alpha1: the only version Antrea's member CRDs serve (the chart's serve it too).
  await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: SERVICE_EXPORT_V1ALPHA1.group, version: SERVICE_EXPORT_V1ALPHA1.version, plural: SERVICE_EXPORT_V1ALPHA1.plural, namespace,
    body: { apiVersion: `${SERVICE_EXPORT_V1ALPHA1.group}/${SERVICE_EXPORT_V1ALPHA1.version}`, kind: SERVICE_EXPORT_V1ALPHA1.kind, metadata: { name }, ...(exportSpec && { spec: exportSpec }) },
  });
  return svc.spec?.clusterIP ?? '';
}

/** What a member imported for `name`: the ServiceImport's ports and the `antrea-mc-<name>` Endpoints' IPs. */
export async function imported(cp: ControlPlane, name: string, namespace = APP_NS): Promise<{ ports: number[]; ips: string[] } | undefined> {
  const kc = cp.adminConfig();
  const si = await maybe(async () => (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: 'multicluster.x-k8s.io', version: 'v1alpha1', plural: 'serviceimports', namespace, name,
  })) as { spec?: { ports?: { port: number }[] } });
  const ep = await maybe(() => kc.makeApiClient(CoreV1Api).readNamespacedEndpoints({ namespace, name: `antrea-mc-${name}` }));
  const svc = await maybe(() => kc.makeApiClient(CoreV1Api).readNamespacedService({ namespace, name: `antrea-mc-${name}` }));
  if (!si || !svc) return undefined;
  return { ports: (si.spec?.ports ?? []).map((p) => p.port), ips: (ep?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort() };
}
