// Benchmark (issue 29, item 4): can one member stall `leader run`? On the COMPILED build, two
// leader replicas with Lease election against a real leader control plane with the chart's
// admission policies, 50 members (each its own token, an announce and a ClusterInfo export).
// Then one member, with its own token, sends
//   * a ClusterInfo with --cidrs /32 pod CIDRs (default 60,000: 1.15 MB), changed --rounds times;
//   * a Service export with --ports ports (default 30,000), which a second member exports too
//     with other ports (a conflict: every exporter gets a verdict naming both port lists).
// When admission refuses a payload the refusal is printed and the largest payload the chart's
// bounds admit (values.yaml leader.admissionPolicy.limits) is sent instead.
//
//   npm run bench:leader-stall -- [--members 50] [--cidrs 60000] [--ports 30000] [--rounds 3] [--observe 20] [--unbounded]
//
// --unbounded installs the chart with its admission size bounds lifted, so the payloads reach
// the leader whatever the bounds say.
//
// Throughout, /healthz of both replicas is polled (one request at a time, 100 ms apart, 30 s
// timeout) and the largest latency kept; the Lease holder is read before and after. Prints
// them; asserts nothing. The acceptance: max /healthz latency < 1 s, the holder unchanged.
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CoordinationV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { MEMBER_CLUSTER_ANNOUNCE, RESOURCE_EXPORT, RESOURCE_IMPORT, type ResourceExport, type ResourceImport } from '../src/common/api/antrea.js';
import { apiStatus, httpStatus } from '../src/common/kube/errors.js';
import { createMemberToken } from '../src/leader/member-token.js';
import { LEADER_NS, setupLeader } from '../test/harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../test/harness/control-plane.js';
import { createNamespace, tokenConfig } from '../test/harness/kube.js';
import { clusterInfoExportOf } from '../test/harness/resource-export.js';
import { waitFor } from '../test/harness/wait.js';
import { buildDist, pool, repoRoot, runBench } from './common.js';
import { announceOf, serviceExport as fleetServiceExport } from './fleet.js';
import { installOurLeader, RELEASE_NS, spawnOurLeader } from './fleet-leaders.js';

const { values } = parseArgs({ options: {
  members: { type: 'string', default: '50' }, cidrs: { type: 'string', default: '60000' },
  ports: { type: 'string', default: '30000' }, rounds: { type: 'string', default: '3' },
  observe: { type: 'string', default: '20' },
  // The chart's size bounds lifted: the leader itself must cope with what admission would refuse.
  unbounded: { type: 'boolean', default: false },
} });
const MEMBERS = Number(values.members);
const ROUNDS = Number(values.rounds);
const OBSERVE_MS = Number(values.observe) * 1000;
const LEASE = 'clusterset-agent';
const group = RESOURCE_EXPORT.group;
const ref = (d: { plural: string }) => ({ group, version: 'v1alpha1', plural: d.plural, namespace: LEADER_NS });

/** The chart's admission bounds, when it has them: what the largest admitted payload is. */
function chartLimits(): { podCIDRs: number | undefined; ports: number | undefined } {
  if (values.unbounded) return { podCIDRs: undefined, ports: undefined };
  const chartValues = parse(readFileSync(path.join(repoRoot, 'charts', 'clusterset-agent', 'values.yaml'), 'utf8')) as { leader?: { admissionPolicy?: { limits?: { podCIDRsPerClusterInfo?: number; portsPerService?: number } } } };
  const limits = chartValues.leader?.admissionPolicy?.limits;
  return { podCIDRs: limits?.podCIDRsPerClusterInfo, ports: limits?.portsPerService };
}

function podCidrs(count: number, round: number): string[] {
  // 100.64.0.0/10 holds 4M addresses: no overlap with the other members' 10.x pod CIDRs.
  return Array.from({ length: count }, (_, i) => `100.${String(64 + Math.floor(i / 65_536))}.${String(Math.floor(i / 256) % 256)}.${String(i % 256)}/32`)
    .map((c, i) => (i === 0 ? `100.127.255.${String(round)}/32` : c));
}

function clusterInfoExport(clusterID: string, i: number, podCIDRs: string[]): ResourceExport {
  return clusterInfoExportOf(clusterID, { serviceCIDR: `192.168.${String(i)}.0/24`, podCIDRs, gatewayIP: `172.18.${String(Math.floor(i / 200))}.${String((i % 200) + 2)}` });
}

function serviceExport(clusterID: string, ports: number, offset: number): ResourceExport {
  return fleetServiceExport(clusterID, 'wide', Array.from({ length: ports }, (_, p) => ({ name: `p${String(p + offset)}`, port: 1024 + p + offset, protocol: 'TCP' })));
}

/** Waits like waitFor, but a missed deadline is reported and the bench goes on to its figures. */
async function softWait<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs: number): Promise<T | undefined> {
  try {
    return await waitFor(what, check, { timeoutMs, intervalMs: 250 });
  } catch {
    console.log(`  NOT SEEN within ${String(timeoutMs / 1000)} s: ${what}`);
    return undefined;
  }
}

const replicas: { name: string; proc: ChildProcess; healthPort: number; maxMs: number; slow: number; exited?: number; stop(): Promise<void> }[] = [];
const polling = { on: true };
let leader: ControlPlane | undefined;
let kubeconfig = '';
const tmp = mkdtempSync(path.join(tmpdir(), 'bench-leader-stall-'));

async function startReplica(name: string): Promise<void> {
  const leaderProcess = await spawnOurLeader(kubeconfig, tmp, name, { elect: true });
  const { proc, healthPort } = leaderProcess;
  const replica = { name, proc, healthPort, maxMs: 0, slow: 0, stop: () => leaderProcess.stop() } as (typeof replicas)[number];
  proc.once('exit', (code) => { replica.exited = code ?? -1; });
  replicas.push(replica);
  // One request at a time: a stalled event loop shows as one long answer.
  void (async () => {
    while (polling.on && replica.exited === undefined) {
      const t0 = performance.now();
      await fetch(`http://127.0.0.1:${String(healthPort)}/healthz`, { signal: AbortSignal.timeout(30_000) }).then((r) => r.text(), () => undefined);
      const took = performance.now() - t0;
      // An exited replica answers nothing: its last (failed) request is no latency.
      if ((replica as { exited?: number }).exited !== undefined) break;
      replica.maxMs = Math.max(replica.maxMs, took);
      if (took >= 1000) replica.slow += 1;
      await delay(100);
    }
  })();
}

await runBench('bench:leader-stall', async () => {
  buildDist();
  leader = await startControlPlane('bench-stall', { startTimeoutSeconds: 180 });
  const admin = leader.adminConfig();
  const custom = admin.makeApiClient(CustomObjectsApi);
  await setupLeader(leader);
  await createNamespace(admin, 'bench');
  kubeconfig = await installOurLeader(leader, tmp, ['--set', 'leader.controller.replicaCount=2',
    ...(values.unbounded ? ['podCIDRsPerClusterInfo', 'gatewayInfosPerClusterInfo', 'portsPerService', 'addressesPerEndpoints'].flatMap((k) => ['--set', `leader.admissionPolicy.limits.${k}=1000000`]) : [])]);
  const leases = admin.makeApiClient(CoordinationV1Api);
  const holder = async () => (await leases.readNamespacedLease({ namespace: RELEASE_NS, name: LEASE }).catch(() => undefined))?.spec?.holderIdentity;
  await startReplica('replica-a');
  await waitFor('replica-a holds the Lease', holder, { timeoutMs: 60_000, intervalMs: 100 });
  await startReplica('replica-b');

  const ids = Array.from({ length: MEMBERS }, (_, i) => `m${String(i).padStart(3, '0')}`);
  const clients = new Map<string, CustomObjectsApi>();
  const cp = leader;
  await pool(ids, 4, async (id) => {
    const token = await createMemberToken(admin, { memberId: id, namespace: LEADER_NS, durationSeconds: 86_400 });
    const secret = parse(token.secretYaml) as { data: { token: string } };
    clients.set(id, tokenConfig(cp, Buffer.from(secret.data.token, 'base64').toString('utf8'), `member-${id}`).makeApiClient(CustomObjectsApi));
  });
  const as = (id: string) => clients.get(id) ?? (() => { throw new Error(id); })();
  await pool(ids.map((id, i) => ({ id, i })), 8, async ({ id, i }) => waitFor(`${id} admitted`, async () => {
    await as(id).createNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), body: announceOf(id, new Date().toISOString()) }).catch((err: unknown) => { if (httpStatus(err) !== 409) throw err; });
    await as(id).createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: clusterInfoExport(id, i, [`10.${String(i)}.0.0/16`]) }).catch((err: unknown) => { if (httpStatus(err) !== 409) throw err; });
    return true;
  }, { timeoutMs: 60_000, intervalMs: 250 }));
  const getRI = async (name: string) => (await custom.getNamespacedCustomObject({ ...ref(RESOURCE_IMPORT), name }).catch(() => undefined)) as ResourceImport | undefined;
  await waitFor(`${String(MEMBERS)} ClusterInfo imports`, async () => {
    const list = (await custom.listNamespacedCustomObject({ ...ref(RESOURCE_IMPORT) })) as { items: ResourceImport[] };
    return list.items.filter((ri) => ri.spec?.kind === 'ClusterInfo').length === MEMBERS;
  }, { timeoutMs: 5 * 60_000, intervalMs: 500 });
  const holderBefore = await holder();
  for (const r of replicas) { r.maxMs = 0; r.slow = 0; }
  const attackStart = performance.now();

  // Sends `body` as `id`; a refusal is printed, and `fallback()` is sent instead when there is one.
  const send = async (what: string, id: string, write: (body: ResourceExport) => Promise<unknown>, body: ResourceExport, fallback?: () => ResourceExport): Promise<ResourceExport | undefined> => {
    try {
      await write(body);
      console.log(`  ${what}: admitted (${(JSON.stringify(body).length / 1e6).toFixed(2)} MB)`);
      return body;
    } catch (err) {
      console.log(`  ${what}: REFUSED by admission (HTTP ${String(httpStatus(err))}): ${(apiStatus(err)?.message ?? String(err)).slice(0, 300)}`);
      if (fallback === undefined) return undefined;
      const smaller = fallback();
      await write(smaller);
      console.log(`  ${what}: the largest admitted instead: admitted (${(JSON.stringify(smaller).length / 1e6).toFixed(2)} MB)`);
      return smaller;
    }
  };
  const tooLarge = async (name: string) => ((await custom.getNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name })) as ResourceExport).status?.conditions?.[0]?.reason === 'ImportTooLarge';
  const limits = chartLimits();
  const attacker = ids[0] ?? '';
  const wanted = Number(values.cidrs);
  console.log(`\nattack by member ${attacker} (own token); ${String(MEMBERS)} members present`);
  for (let round = 1; round <= ROUNDS; round++) {
    const current = (await as(attacker).getNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name: `${attacker}-clusterinfo` })) as ResourceExport;
    const withCidrs = (n: number): ResourceExport => ({ ...current, spec: { ...current.spec, clusterInfo: { ...current.spec?.clusterInfo, podCIDRs: podCidrs(n, round) } } });
    const replace = (body: ResourceExport) => as(attacker).replaceNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name: `${attacker}-clusterinfo`, body });
    const sent = await send(`round ${String(round)}: ClusterInfo with ${String(wanted)} /32 pod CIDRs`, attacker, replace, withCidrs(wanted),
      limits.podCIDRs === undefined || limits.podCIDRs >= wanted ? undefined : () => withCidrs(limits.podCIDRs ?? 0));
    const first = sent?.spec?.clusterInfo?.podCIDRs?.[0];
    // Imported, or refused by the leader's import budget (what a 1.15 MB ClusterInfo gets once admitted).
    if (first !== undefined) await softWait('the attacker\'s ClusterInfo imported (or refused as too large)', async () => (await getRI(`${attacker}-clusterinfo`))?.spec?.clusterinfo?.podCIDRs?.[0] === first || await tooLarge(`${attacker}-clusterinfo`), 3 * 60_000);
  }
  const wantedPorts = Number(values.ports);
  const create = (id: string) => (body: ResourceExport) => as(id).createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body });
  const wide = await send(`Service export with ${String(wantedPorts)} ports`, attacker, create(attacker), serviceExport(attacker, wantedPorts, 0),
    limits.ports === undefined || limits.ports >= wantedPorts ? undefined : () => serviceExport(attacker, limits.ports ?? 0, 0));
  const portCount = wide?.spec?.service?.serviceSpec?.ports?.length ?? 0;
  if (portCount > 0) {
    await softWait('the wide ServiceImport (or its refusal as too large)', async () => (await getRI('bench-wide-service'))?.spec?.serviceImport?.spec?.ports.length === portCount || await tooLarge(`${attacker}-bench-wide-service`), 3 * 60_000);
    // A second exporter with other ports: a conflict, every exporter's verdict names both lists.
    const second = ids[1] ?? '';
    await send('the same Service from a second member, other ports', second, create(second), serviceExport(second, 1, portCount));
    const verdict = await softWait('the conflict verdict', async () => {
      const re = (await custom.getNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name: `${attacker}-bench-wide-service` })) as ResourceExport;
      return re.status?.conditions?.[0]?.type === 'Failure' ? re.status.conditions[0] : undefined;
    }, 3 * 60_000);
    if (verdict !== undefined) console.log(`  verdict on the wide export: ${verdict.reason ?? ''}, message ${String((verdict.message ?? '').length)} characters`);
  }
  // What is still queued after the last visible write (the other members' ClusterInfo re-judged) runs in this window.
  await delay(OBSERVE_MS);
  const holderAfter = await holder().catch(() => undefined);
  polling.on = false;
  console.log(`\nleader run under one member's payloads, compiled build, 2 replicas with Lease election, ${String(MEMBERS)} members${values.unbounded ? ', admission size bounds lifted' : ''}`);
  console.log(`  attack and ${String(OBSERVE_MS / 1000)} s after it: ${((performance.now() - attackStart) / 1000).toFixed(1)} s`);
  for (const r of replicas) console.log(`  ${r.name}: max /healthz latency ${r.maxMs.toFixed(0)} ms, answers >= 1 s: ${String(r.slow)}${r.exited === undefined ? '' : `, EXITED with code ${String(r.exited)} (log ${path.join(tmp, `${r.name}.log`)})`}`);
  console.log(`  Lease holder before: ${String(holderBefore)}; after: ${String(holderAfter)}; ${holderBefore === holderAfter ? 'unchanged' : 'CHANGED'}`);
}, async () => {
  polling.on = false;
  for (const r of replicas) if (r.exited === undefined) await r.stop();
  await leader?.stop();
});
