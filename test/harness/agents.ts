// A ClusterSet of this project alone, in process: `leader run`'s controller on a leader control
// plane and an agent per member, each joined with its own member token and waited Ready. The
// setup the MCS, dual-stack, exported-labels and DNS tests share; and a member of a ClusterSet
// listing several leaders, made by hand as the several-leaders and leave-leader tests make it.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type winston from 'winston';
import { startAgent, type Agent } from '../../src/agent.js';
import { CLUSTERSET } from '../../src/common/api/antrea.js';
import { loadConfig, type AgentConfig } from '../../src/common/config/config.js';
import { LeaderController } from '../../src/leader/controller.js';
import {
  AGENT_NS, capturedLogger, CLUSTERSET_ID, createClusterSet, createMemberAccess, installCrds, LEADER_NS, setupLeader, waitForReady, writeLeaderSecret,
} from './clusterset.js';
import type { ControlPlane } from './control-plane.js';
import { createNamespace } from './kube.js';
import { onFailureShowLogs } from './report.js';

export interface AgentMember<Id extends string = string> {
  readonly id: Id;
  readonly cp: ControlPlane;
  agent?: Agent;
  readonly log: ReturnType<typeof capturedLogger>;
}

/** The leader set up (namespace, member Role, leader ClusterSet) and its controller running. */
export async function startLeaderController(leader: ControlPlane, logger: winston.Logger): Promise<LeaderController> {
  await setupLeader(leader);
  const controller = new LeaderController({ kubeConfig: leader.adminConfig(), namespace: LEADER_NS, memberTimeoutMs: 30_000, staleMemberMs: 86_400_000, logger });
  await controller.start();
  return controller;
}

/**
 * Joins each member to `leader` with its own token and starts its agent (2 s heartbeat), pushing
 * each into `into` as soon as it runs (so a failed setup still stops what it started), then waits
 * for every member to be Ready.
 */
export async function joinAgents<Id extends string>(leader: ControlPlane, members: readonly (readonly [Id, ControlPlane])[], appNamespace: string, into: AgentMember<Id>[]): Promise<void> {
  for (const [id, cp] of members) {
    await installCrds(cp);
    for (const ns of [AGENT_NS, appNamespace]) await createNamespace(cp.adminConfig(), ns);
    const access = await createMemberAccess(leader, id);
    await writeLeaderSecret(cp, 'leader-token', { caPem: leader.caPem, token: access.token });
    await createClusterSet(cp, { clusterID: id, server: leader.server, secret: 'leader-token' });
    const m: AgentMember<Id> = { id, cp, log: capturedLogger() };
    m.agent = await startAgent(agentConfig({ heartbeat: { intervalSeconds: 2 } }), m.log.logger, cp.adminConfig());
    into.push(m);
  }
  await Promise.all(into.map((m) => waitForReady(m.cp, CLUSTERSET_ID, 'True', 'Connected', 60_000)));
}

/** Stops the agents, the controller, then every control plane. */
export async function stopAgentsAndLeader(leader: ControlPlane, controller: LeaderController | undefined, members: readonly AgentMember[]): Promise<void> {
  await Promise.all(members.map(async (m) => { await m.agent?.stop(); }));
  await controller?.stop();
  await Promise.all([leader.stop(), ...members.map((m) => m.cp.stop())]);
}

/** The agent's defaults in the agents' namespace, with `heartbeat` and `imports` settings of a test's own. */
export function agentConfig(overrides: { readonly heartbeat?: Partial<AgentConfig['heartbeat']>; readonly imports?: Partial<AgentConfig['imports']> } = {}): AgentConfig {
  const config = loadConfig({ env: {}, readFile: () => '' });
  return { ...config, namespace: AGENT_NS, heartbeat: { ...config.heartbeat, ...overrides.heartbeat }, imports: { ...config.imports, ...overrides.imports } };
}

export interface AgentClusterSet<Id extends string> {
  /** The leader's control plane (set in before()). */
  readonly leader: ControlPlane;
  /** The members, each as soon as its agent runs. */
  readonly members: AgentMember<Id>[];
}

/**
 * A leader with its controller and agent members joined to it, for the describe block this is
 * called in: started in before() (`start` starts the control planes), stopped in after(), every
 * log shown under a failed test.
 */
export function useAgentClusterSet<Id extends string>(appNamespace: string,
  start: () => Promise<{ readonly leader: ControlPlane; readonly members: readonly (readonly [Id, ControlPlane])[] }>): AgentClusterSet<Id> {
  let leader: ControlPlane | undefined;
  let controller: LeaderController | undefined;
  const leaderLog = capturedLogger();
  const members: AgentMember<Id>[] = [];
  before(async () => {
    const planes = await start();
    leader = planes.leader;
    controller = await startLeaderController(leader, leaderLog.logger);
    await joinAgents(leader, planes.members, appNamespace, members);
  });
  after(async () => {
    if (leader) await stopAgentsAndLeader(leader, controller, members);
  });
  onFailureShowLogs(() => [leader, ...members.map((m) => m.cp)], () =>
    `--- leader log ---\n${leaderLog.text()}\n${members.map((m) => `--- ${m.id} log ---\n${m.log.text()}`).join('\n')}`);
  return { get leader() { return leader ?? assert.fail('the leader is not started'); }, members };
}

/**
 * A member made ready, by hand, for an agent of a ClusterSet listing several leaders: the CRDs,
 * the agents' namespace and `appNamespace`, on each leader a member access of its own with its
 * token in a Secret `<leader>-token`, and the ClusterSet listing the leaders in the order given.
 */
export async function prepareMemberOfLeaders(member: ControlPlane, clusterID: string, leaders: readonly (readonly [string, ControlPlane])[], appNamespace: string): Promise<void> {
  await installCrds(member);
  for (const ns of [AGENT_NS, appNamespace]) await createNamespace(member.adminConfig(), ns);
  for (const [id, leader] of leaders) {
    const access = await createMemberAccess(leader, clusterID);
    await writeLeaderSecret(member, `${id}-token`, { caPem: leader.caPem, token: access.token });
  }
  await member.adminConfig().makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural, namespace: AGENT_NS,
    body: {
      apiVersion: `${CLUSTERSET.group}/${CLUSTERSET.version}`, kind: CLUSTERSET.kind, metadata: { name: CLUSTERSET_ID },
      spec: { clusterID, namespace: LEADER_NS, leaders: leaders.map(([id, leader]) => ({ clusterID: id, server: leader.server, secret: `${id}-token` })) },
    },
  });
}
