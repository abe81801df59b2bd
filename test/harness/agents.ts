// A ClusterSet of this project alone, in process: `leader run`'s controller on a leader control
// plane and an agent per member, each joined with its own member token and waited Ready. The
// setup the MCS, dual-stack and DNS tests share.
import type winston from 'winston';
import { startAgent, type Agent } from '../../src/agent.js';
import { loadConfig } from '../../src/common/config/config.js';
import { LeaderController } from '../../src/leader/controller.js';
import {
  AGENT_NS, capturedLogger, CLUSTERSET_ID, createClusterSet, createMemberAccess, installCrds, LEADER_NS, setupLeader, waitForReady, writeLeaderSecret,
} from './clusterset.js';
import type { ControlPlane } from './control-plane.js';
import { createNamespace } from './kube.js';

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
    const config = loadConfig({ env: {}, readFile: () => '' });
    m.agent = await startAgent({ ...config, namespace: AGENT_NS, heartbeat: { ...config.heartbeat, intervalSeconds: 2 } }, m.log.logger, cp.adminConfig());
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
