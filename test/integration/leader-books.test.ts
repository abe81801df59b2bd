// A leader every member can trust, on a real leader control plane with the chart installed in
// mode=leader (its Role, admission policies and RBAC) and `leader run`'s controller running with
// the chart's own ServiceAccount token. Members are driven with real member tokens from
// `leader create-member-token`, writing exactly what a member writes. Each finding of issue 19:
// the withdraw-before-seen race, an orphaned labelled import across a restart, exempt and
// reserved names, export squatting, overlapping ClusterInfo CIDRs, a stripped announce
// finalizer, a fresh announce without touch-ts, one cluster-ID grammar, and revoking a member.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import {
  CLUSTERSET,
  MEMBER_CLUSTER_ANNOUNCE,
  RESOURCE_EXPORT,
  RESOURCE_IMPORT,
  type ClusterSet,
  type MemberClusterAnnounce,
  type ResourceExport,
  type ResourceImport,
} from '../../src/common/api/antrea.js';
import { apiStatus, httpStatus } from '../../src/common/kube/errors.js';
import type { WatchLike } from '../../src/common/kube/informer.js';
import { MANAGED_BY_LABEL, MANAGED_BY_LEADER } from '../../src/leader/decisions/books.js';
import { LeaderController } from '../../src/leader/controller.js';
import { createMemberToken, MemberTokenError } from '../../src/leader/member-token.js';
import { capturedLogger, CLUSTERSET_ID, LEADER_NS, setupLeader } from '../harness/clusterset.js';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.js';
import { createNamespace, createServiceAccountWithRole, issueToken, kubectl, kubectlApply, tokenConfig, waitForAccess } from '../harness/kube.js';
import { maybe } from '../harness/imports.js';
import { CHART, helmTemplate } from '../harness/leader-admission.js';
import { ANTREA_MEMBER_ROLE_RULES } from '../harness/clusterset.js';
import { onFailureShowLogs } from '../harness/report.js';
import {
  clusterInfoExportOf,
  endpointsExport as harnessEndpointsExport,
  labelIdentityExport as harnessLabelIdentityExport,
  serviceExport as harnessServiceExport,
} from '../harness/resource-export.js';
import { waitFor } from '../harness/wait.js';

const RELEASE_NS = 'csa-leader';
const LEADER_SA = 'csa-leader-clusterset-agent';
const MEMBER_TIMEOUT_MS = 4_000;
const SWEEP_MS = 3_000;
const converge = { timeoutMs: 20_000, intervalMs: 100 };
/** Small enough for a test to cross; east and west stay well below. */
const MAX_EXPORTS = 20;
const MAX_IMPORT_BYTES = 64 * 1024;
const ref = (d: { group: string; version: string; plural: string }) => ({ group: d.group, version: d.version, plural: d.plural, namespace: LEADER_NS });

/** Holds the import informer's watch events back while `held` (its cache stays behind), then delivers them in order. */
class HeldWatch {
  held = false;
  readonly #buffered: (() => void)[] = [];
  wrap(inner: WatchLike): WatchLike {
    return {
      watch: (path, params, callback, done) => inner.watch(path, params, (phase, obj, raw) => {
        if (this.held) this.#buffered.push(() => { callback(phase, obj, raw); });
        else callback(phase, obj, raw);
      }, done),
    };
  }
  release(): void {
    this.held = false;
    for (const deliver of this.#buffered.splice(0)) deliver();
  }
}

function serviceExport(clusterID: string, name: string, namespace = 'default'): ResourceExport {
  return harnessServiceExport(clusterID, namespace, name);
}

/** `addresses` ready Pod IPs 10.<base>.x.y (PodIP mode). */
function endpointsExport(clusterID: string, name: string, addresses: number, base: number): ResourceExport {
  return harnessEndpointsExport(clusterID, 'default', name, {
    podIPs: Array.from({ length: addresses }, (_, i) => `10.${String(base)}.${String(Math.floor(i / 250))}.${String((i % 250) + 1)}`),
  });
}

function labelIdentityExport(clusterID: string, n: number): ResourceExport {
  return harnessLabelIdentityExport(clusterID, `ns:x=${String(n)}&pod:`, `${clusterID}-${n.toString(16).padStart(16, '0')}`);
}

function clusterInfoExport(clusterID: string, serviceCIDR: string, podCIDR: string, gatewayIP: string): ResourceExport {
  return clusterInfoExportOf(clusterID, { serviceCIDR, podCIDRs: [podCIDR], gatewayIP });
}

function announceBody(clusterID: string, touch: string | undefined): MemberClusterAnnounce {
  return {
    apiVersion: MEMBER_CLUSTER_ANNOUNCE.apiVersion, kind: MEMBER_CLUSTER_ANNOUNCE.kind,
    metadata: { name: `member-announce-from-${clusterID}`, ...(touch === undefined ? {} : { annotations: { 'touch-ts': touch } }) },
    clusterID, clusterSetID: CLUSTERSET_ID, leaderClusterID: 'leader',
  };
}

async function deniedWith(call: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(call, (err: unknown) => {
    assert.ok([403, 422].includes(httpStatus(err) ?? 0), `denied, got ${String(httpStatus(err))}`);
    assert.match(apiStatus(err)?.message ?? String(err), pattern);
    return true;
  });
}

describe('leader books and member trust', () => {
  let leader: ControlPlane;
  let admin: KubeConfig;
  let controller: LeaderController | undefined;
  let leaderLog = capturedLogger();
  let leaderToken = '';
  const held = new HeldWatch();
  const tokens: Record<string, string> = {};
  const as = (id: string) => tokenConfig(leader, tokens[id] ?? '', `member-${id}`).makeApiClient(CustomObjectsApi);
  const adminObjects = () => admin.makeApiClient(CustomObjectsApi);
  const getRI = (name: string) => maybe(async () => (await adminObjects().getNamespacedCustomObject({ ...ref(RESOURCE_IMPORT), name })) as ResourceImport);
  const getRE = (name: string) => maybe(async () => (await adminObjects().getNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name })) as ResourceExport);

  const startLeader = async (staleMemberMs = 86_400_000) => {
    leaderLog = capturedLogger();
    controller = new LeaderController({
      kubeConfig: tokenConfig(leader, leaderToken, LEADER_SA), namespace: LEADER_NS,
      memberTimeoutMs: MEMBER_TIMEOUT_MS, staleMemberMs, sweepIntervalMs: SWEEP_MS, gcParallelism: 4,
      maxExportsPerMember: MAX_EXPORTS, maxImportBytes: MAX_IMPORT_BYTES,
      logger: leaderLog.logger, wrapImportWatch: (w) => held.wrap(w),
    });
    await controller.start();
  };
  const stopLeader = async () => {
    await controller?.stop();
    controller = undefined;
  };
  /** A member joins as `leader create-member-token` lets it: its token, then its announce. */
  const join = async (id: string, touch: string | undefined = new Date().toISOString()) => {
    const result = await createMemberToken(admin, { memberId: id, namespace: LEADER_NS, durationSeconds: 3600 });
    const secret = parse(result.secretYaml) as { data: { token: string } };
    tokens[id] = Buffer.from(secret.data.token, 'base64').toString('utf8');
    await waitForAccess(leader, tokens[id], { verb: 'create', resource: 'resourceexports', group: RESOURCE_EXPORT.group, namespace: LEADER_NS });
    await waitFor(`${id} admitted (its ID in the admission parameter)`, async () => {
      await as(id).createNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), body: announceBody(id, touch) });
      return true;
    }, converge);
  };

  before(async () => {
    leader = await startControlPlane('leader');
    admin = leader.adminConfig();
    await setupLeader(leader);
    await createNamespace(admin, RELEASE_NS);
    // The chart as an operator installs it, with one exempt ServiceAccount named explicitly.
    await kubectlApply(leader, await helmTemplate(['csa-leader', CHART, '--namespace', RELEASE_NS, '--set', 'mode=leader', '--set', 'leader.createNamespace=false',
      '--set', 'leader.admissionPolicy.exemptServiceAccounts={ops-robot}']));
    leaderToken = await issueToken(admin, RELEASE_NS, LEADER_SA);
    await startLeader();
    await join('east');
    await join('west');
  });
  after(async () => {
    await stopLeader();
    await leader.stop();
  });
  onFailureShowLogs(() => [leader], () => `--- leader log ---\n${leaderLog.text()}`);

  it('an export withdrawn before the leader has seen the import it created: the import is still removed', async () => {
    held.held = true;
    await as('east').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport('east', 'race') });
    // The leader created the import; its informer has not shown it to the leader yet.
    await waitFor('import created on the API server', () => getRI('default-race-service'), converge);
    await as('east').deleteNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name: 'east-default-race-service' });
    await waitFor('the withdrawn export released (finalizer removed) while the import event is held', async () => !(await getRE('east-default-race-service')), converge);
    assert.ok(await getRI('default-race-service'), 'the race is forced: the import is still there');
    held.release();
    await waitFor('the orphaned import removed once the leader sees it', async () => !(await getRI('default-race-service')), converge);
  });

  it('a restarted leader removes a labelled import no export feeds, and leaves a hand-made one alone', async () => {
    await stopLeader();
    const ri = (name: string, labels?: Record<string, string>): ResourceImport => ({
      apiVersion: RESOURCE_IMPORT.apiVersion, kind: RESOURCE_IMPORT.kind, metadata: { name, ...(labels ? { labels } : {}) },
      spec: { name: 'ghost', namespace: 'default', kind: 'ServiceImport', serviceImport: { spec: { ports: [{ port: 80, protocol: 'TCP' }], type: 'ClusterSetIP' } } },
    });
    await adminObjects().createNamespacedCustomObject({ ...ref(RESOURCE_IMPORT), body: ri('default-ghost-service', { [MANAGED_BY_LABEL]: MANAGED_BY_LEADER }) });
    await adminObjects().createNamespacedCustomObject({ ...ref(RESOURCE_IMPORT), body: ri('hand-made-service') });
    await startLeader();
    await waitFor('the orphaned labelled import removed', async () => !(await getRI('default-ghost-service')), converge);
    await controller?.idle();
    assert.ok(await getRI('hand-made-service'), 'an unlabelled import is not the leader\'s to delete');
  });

  it('every import the leader writes carries its label', async () => {
    await as('east').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport('east', 'web') });
    const ri = await waitFor('web imported', () => getRI('default-web-service'), converge);
    assert.equal(ri.metadata?.labels?.[MANAGED_BY_LABEL], MANAGED_BY_LEADER);
  });

  // Item 1 of issue 29: my-app/web and my/app-web both map to my-app-web-service. One Service
  // holds the import; the other's export is refused, naming the holder, and never merged.
  it('two Services, one import name: the first holds it, the second gets ImportNameConflict naming the holder; a restart changes nothing', async () => {
    await as('east').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport('east', 'web', 'my-app') });
    await waitFor('my-app/web imported', async () => (await getRE('east-my-app-web-service'))?.status?.conditions?.[0]?.type === 'Succeeded', converge);
    const other = serviceExport('west', 'app-web', 'my');
    const otherSpec = other.spec?.service?.serviceSpec;
    assert.ok(otherSpec);
    otherSpec.ports = [{ name: 'grpc', port: 9000, protocol: 'TCP', targetPort: 9000 }];
    await as('west').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: other });
    const refused = await waitFor('my/app-web refused', async () => {
      const c = (await getRE('west-my-app-web-service'))?.status?.conditions?.[0];
      return c?.type === 'Failure' ? c : undefined;
    }, converge);
    assert.equal(refused.reason, 'ImportNameConflict');
    assert.match(refused.message ?? '', /^Service my\/app-web maps to ResourceImport my-app-web-service \(<namespace>-<name>-<kind>\), which Service my-app\/web \(exported by cluster east\) holds: this export is not imported/);
    await controller?.idle();
    const holder = (await getRE('east-my-app-web-service'))?.status?.conditions?.[0];
    assert.equal(holder?.type, 'Succeeded', `the holder keeps Succeeded: ${JSON.stringify(holder)}`);
    const ri = (await getRI('my-app-web-service')) ?? assert.fail('import');
    assert.deepEqual([ri.spec?.namespace, ri.spec?.name, ri.spec?.serviceImport?.spec?.ports], ['my-app', 'web', [{ name: 'http', port: 80, protocol: 'TCP' }]]);
    const endpoints = (await getRI('my-app-web-endpoints'));
    assert.ok(endpoints === undefined || endpoints.spec?.namespace === 'my-app', 'no Endpoints import of the refused Service');
    // A restarted leader decides the same and writes nothing.
    await stopLeader();
    await startLeader();
    await controller?.idle();
    assert.equal((await getRI('my-app-web-service'))?.metadata?.resourceVersion, ri.metadata?.resourceVersion, 'the import is not rewritten');
    assert.equal((await getRE('west-my-app-web-service'))?.status?.conditions?.[0]?.reason, 'ImportNameConflict');
    assert.equal((await getRE('east-my-app-web-service'))?.status?.conditions?.[0]?.type, 'Succeeded');
    await as('west').deleteNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name: 'west-my-app-web-service' });
    await waitFor('the refused export withdrawn', async () => !(await getRE('west-my-app-web-service')), converge);
    assert.equal((await getRI('my-app-web-service'))?.spec?.namespace, 'my-app', 'withdrawing the refused export leaves the holder\'s import');
  });

  it('no member token for a reserved or exempt name; an exempt name with a member ID is not exempt', async () => {
    for (const [serviceAccount, pattern] of [
      ['antrea-mc-controller', /ServiceAccount name "antrea-mc-controller" is reserved/],
      ['ops-robot', /ServiceAccount antrea-multicluster\/ops-robot is exempt from the leader's admission policies/],
    ] as const) {
      await assert.rejects(createMemberToken(admin, { memberId: 'robot', namespace: LEADER_NS, serviceAccount }),
        (err: unknown) => err instanceof MemberTokenError && pattern.test(err.message));
      assert.equal(await maybe(() => admin.makeApiClient(CoreV1Api).readNamespacedServiceAccount({ namespace: LEADER_NS, name: serviceAccount })), undefined, 'refused before any write');
    }
    // An admin makes ops-robot a member by hand: from then on it is checked like any member.
    await createServiceAccountWithRole(admin, { namespace: LEADER_NS, serviceAccount: 'ops-robot', rules: ANTREA_MEMBER_ROLE_RULES, annotations: { 'multicluster.antrea.io/cluster-id': 'robot' } });
    const robot = tokenConfig(leader, await issueToken(admin, LEADER_NS, 'ops-robot'), 'ops-robot').makeApiClient(CustomObjectsApi);
    await waitFor('ops-robot in the admission parameter', async () =>
      (await admin.makeApiClient(CoreV1Api).readNamespacedConfigMap({ namespace: LEADER_NS, name: 'clusterset-member-ids' })).data?.['ops-robot'] === 'robot', converge);
    const east = (await getRE('east-default-web-service')) ?? assert.fail('east web export');
    await waitFor('ops-robot denied deleting east\'s export', async () => {
      await deniedWith(robot.deleteNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name: 'east-default-web-service', dryRun: 'All' }), /belongs to cluster "east"; ServiceAccount ops-robot may only delete exports of cluster "robot"/);
      return true;
    }, converge);
    await deniedWith(robot.replaceNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-east', dryRun: 'All',
      body: (await adminObjects().getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-east' })) as object }), /ClusterID "east" is not permitted for ServiceAccount "ops-robot"/);
    assert.ok(east.metadata?.uid);
  });

  it('squatting: a dash-prefix pair fails closed naming both, and a squatted export name is denied', async () => {
    // create-member-token refuses the pair, so an admin makes east-1 by hand.
    await assert.rejects(createMemberToken(admin, { memberId: 'east-1', namespace: LEADER_NS }), /differ only by a dash suffix/);
    await createServiceAccountWithRole(admin, { namespace: LEADER_NS, serviceAccount: 'member-east-1', rules: ANTREA_MEMBER_ROLE_RULES, annotations: { 'multicluster.antrea.io/cluster-id': 'east-1' }, roleName: 'member-east-1' });
    await waitFor('the pair reported, naming both', () => /cluster IDs east \(ServiceAccount member-east\) and east-1 \(ServiceAccount member-east-1\) form a dash-prefix pair/.test(leaderLog.lines.join('\n')), converge);
    await waitFor('east denied while the pair exists', async () => {
      await deniedWith(as('east').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport('east', 'web', '1-default'), dryRun: 'All' }), /has no cluster ID in ConfigMap/);
      return true;
    }, converge);
    // The export rule itself, with a parameter kept by hand (the leader stopped): east may not take east-1's names.
    await stopLeader();
    const core = admin.makeApiClient(CoreV1Api);
    const params = await core.readNamespacedConfigMap({ namespace: LEADER_NS, name: 'clusterset-member-ids' });
    // Kept by hand: without the leader's DashPrefixPairsRefused, which says no pair is in it.
    const { DashPrefixPairsRefused: leadersWord, ...handKept } = params.data ?? {};
    assert.equal(leadersWord, 'true', 'the leader says its parameter holds no dash-prefix pair');
    await core.replaceNamespacedConfigMap({ namespace: LEADER_NS, name: 'clusterset-member-ids', body: { metadata: { name: 'clusterset-member-ids', namespace: LEADER_NS, labels: params.metadata?.labels ?? {} }, data: { ...handKept, 'member-east': 'east', 'member-east-1': 'east-1' } } });
    await waitFor('east denied the name east-1 derives', async () => {
      await deniedWith(as('east').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport('east', 'web', '1-default'), dryRun: 'All' }),
        /ResourceExport east-1-default-web-service of cluster "east" would take the name member "east-1" derives for its own exports/);
      return true;
    }, converge);
    await as('east').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport('east', 'api'), dryRun: 'All' });
    await core.deleteNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-east-1' });
    await startLeader();
    await waitFor('east admitted again once the pair is gone', async () => {
      await as('east').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport('east', 'api'), dryRun: 'All' });
      return true;
    }, converge);
  });

  it('a member\'s exports beyond leader.maxExportsPerMember get Failure TooManyExports, the newest ones, and feed nothing', async () => {
    await join('flood');
    const condition = async (name: string) => (await getRE(name))?.status?.conditions?.[0];
    // LabelIdentity exports count (held, never aggregated), one at a time so creation order is the order of age.
    for (let n = 0; n < MAX_EXPORTS; n++) await as('flood').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: labelIdentityExport('flood', n) });
    // Created after them, or in the same second and after them by name ('d' > '0'): the newest.
    await as('flood').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport('flood', 'overflow') });
    const refused = await waitFor('the export beyond the cap refused', async () => {
      const c = await condition('flood-default-overflow-service');
      return c?.type === 'Failure' ? c : undefined;
    }, converge);
    assert.equal(refused.reason, 'TooManyExports');
    assert.match(refused.message ?? '', /cluster flood has 21 exports; the leader takes in its 20 oldest \(leader\.maxExportsPerMember\)/);
    await controller?.idle();
    assert.equal(await getRI('default-overflow-service'), undefined, 'beyond the cap: not imported');
    assert.equal((await condition('flood-000000000000000f'))?.reason, undefined, 'the older ones are not refused');
    // One older export withdrawn: the newest is within the cap again, and imported.
    await as('flood').deleteNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name: 'flood-0000000000000000' });
    await waitFor('imported once within the cap', () => getRI('default-overflow-service'), converge);
    await waitFor('its verdict is Succeeded', async () => (await condition('flood-default-overflow-service'))?.type === 'Succeeded', converge);
  });

  it('an Endpoints import over leader.maxImportBytes leaves the newest contributor out with ImportTooLarge; the older ones stay imported', async () => {
    await as('east').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport('east', 'big') });
    await as('east').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: endpointsExport('east', 'big', 100, 1) });
    await waitFor('east\'s endpoints imported', async () => (await getRI('default-big-endpoints'))?.spec?.endpoints?.subsets?.length === 1, converge);
    await as('west').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport('west', 'big') });
    // 5,000 addresses: admitted (the chart's bound), but over the leader's 64 KiB import budget with east's.
    await as('west').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: endpointsExport('west', 'big', 5000, 2) });
    const refused = await waitFor('west\'s endpoints refused', async () => {
      const c = (await getRE('west-default-big-endpoints'))?.status?.conditions?.[0];
      return c?.type === 'Failure' ? c : undefined;
    }, converge);
    assert.equal(refused.reason, 'ImportTooLarge');
    assert.match(refused.message ?? '', /over the leader's budget of 65536 bytes \(leader\.maxImportBytes\): this export, the newest contributor, is not imported; the 1 older ones are/);
    await controller?.idle();
    const ri = await getRI('default-big-endpoints');
    assert.equal(ri?.spec?.endpoints?.subsets?.[0]?.addresses?.length, 100, 'east\'s endpoints still imported');
    assert.equal(ri?.spec?.endpoints?.subsets?.length, 1);
    assert.equal((await getRE('east-default-big-endpoints'))?.status?.conditions?.[0]?.type, 'Succeeded');
  });

  it('a member may report DuplicateClusterID only about its own cluster ID\'s announce (chart policy)', async () => {
    const core = (id: string) => tokenConfig(leader, tokens[id] ?? '', `member-${id}`).makeApiClient(CoreV1Api);
    const report = (about: string) => ({
      metadata: { generateName: 'dup-', annotations: { 'multicluster.clusterset-agent.io/cluster-uid': 'forged-uid' } },
      involvedObject: { apiVersion: MEMBER_CLUSTER_ANNOUNCE.apiVersion, kind: MEMBER_CLUSTER_ANNOUNCE.kind, name: `member-announce-from-${about}`, namespace: LEADER_NS },
      reason: 'DuplicateClusterID', type: 'Warning', message: 'forged', source: { component: 'x' },
      firstTimestamp: new Date(), lastTimestamp: new Date(), count: 1,
    });
    await assert.rejects(core('west').createNamespacedEvent({ namespace: LEADER_NS, body: report('east') }), (err: unknown) => {
      assert.equal(httpStatus(err), 403);
      assert.match(apiStatus(err)?.message ?? '', /ServiceAccount member-west \(cluster ID "west"\) may only report DuplicateClusterID about member-announce-from-west, not member-announce-from-east/);
      return true;
    });
    // About its own cluster ID's announce: admitted (what a real duplicate reports).
    await core('west').createNamespacedEvent({ namespace: LEADER_NS, body: report('west') });
  });

  it('a ClusterInfo overlapping another member\'s CIDR is refused on its status; the first holder keeps it', async () => {
    await as('east').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: clusterInfoExport('east', '10.96.0.0/16', '10.244.0.0/16', '172.18.0.2') });
    await waitFor('east ClusterInfo imported', () => getRI('east-clusterinfo'), converge);
    await as('west').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: clusterInfoExport('west', '10.97.0.0/16', '10.244.8.0/24', '172.18.0.3') });
    const refused = await waitFor('west ClusterInfo refused', async () => {
      const re = await getRE('west-clusterinfo');
      return re?.status?.conditions?.[0]?.type === 'Failure' ? re.status.conditions[0] : undefined;
    }, converge);
    assert.equal(refused.reason, 'CIDRConflict');
    assert.match(refused.message ?? '', /10\.244\.8\.0\/24 overlaps 10\.244\.0\.0\/16 of cluster east \(east-clusterinfo\); the first holder keeps it/);
    await controller?.idle();
    assert.equal(await getRI('west-clusterinfo'), undefined, 'the refused ClusterInfo is not imported');
    assert.deepEqual((await getRI('east-clusterinfo'))?.spec?.clusterinfo?.podCIDRs, ['10.244.0.0/16']);
    // Fixed: imported.
    const west = (await getRE('west-clusterinfo')) ?? assert.fail('west export');
    await as('west').replaceNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), name: 'west-clusterinfo', body: { ...west, spec: { ...west.spec, clusterInfo: { ...west.spec?.clusterInfo, podCIDRs: ['10.245.0.0/16'] } } } });
    await waitFor('west ClusterInfo imported once fixed', () => getRI('west-clusterinfo'), converge);
  });

  it('a fresh announce without touch-ts is Ready from its creation (Antrea\'s first CREATE)', async () => {
    await join('north', undefined);
    const cs = await waitFor('north Ready on the leader', async () => {
      const c = (await adminObjects().getNamespacedCustomObject({ ...ref(CLUSTERSET), name: CLUSTERSET_ID })) as ClusterSet;
      return c.status?.clusterStatuses?.find((s) => s.clusterID === 'north')?.conditions?.[0]?.status === 'True' ? c : undefined;
    }, { timeoutMs: MEMBER_TIMEOUT_MS - 500, intervalMs: 100 });
    assert.ok(cs);
  });

  it('a member that strips the leader\'s finalizer and deletes its announce: its exports are swept within one sweep period', async () => {
    await as('west').createNamespacedCustomObject({ ...ref(RESOURCE_EXPORT), body: serviceExport('west', 'web') });
    await waitFor('west web export accepted', async () => (await getRE('west-default-web-service'))?.status?.conditions?.[0]?.type === 'Succeeded', converge);
    const mca = (await as('west').getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-west' })) as MemberClusterAnnounce;
    assert.deepEqual(mca.metadata?.finalizers, ['memberclusterannounce.finalizer.antrea.io/west']);
    // While the leader is down (a running one may re-add its finalizer between the two writes):
    // the member strips the finalizer, then deletes its announce, which is gone at once.
    await stopLeader();
    await as('west').replaceNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-west', body: { ...mca, metadata: { ...mca.metadata, finalizers: [] } } });
    await as('west').deleteNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-west' });
    assert.equal(await maybe(() => adminObjects().getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-west' })), undefined);
    await startLeader();
    const goneAt = Date.now();
    await waitFor('west\'s exports swept', async () => !(await getRE('west-default-web-service')) && !(await getRE('west-clusterinfo')), { timeoutMs: MEMBER_TIMEOUT_MS + 2 * SWEEP_MS + 5_000, intervalMs: 100 });
    const took = Date.now() - goneAt;
    assert.ok(took <= MEMBER_TIMEOUT_MS + SWEEP_MS + 3_000, `swept after ${String(took)} ms (grace ${String(MEMBER_TIMEOUT_MS)} + one sweep period ${String(SWEEP_MS)})`);
    await waitFor('west ClusterInfo import gone, east\'s web import kept', async () => !(await getRI('west-clusterinfo')) && (await getRI('default-web-service')) !== undefined, converge);
    assert.match(leaderLog.text(), /exports of members without an announce are being deleted/);
  });

  it('one cluster-ID grammar: a dotted ID gets no token, and its announce is denied with the same words', async () => {
    await assert.rejects(createMemberToken(admin, { memberId: 'south.example', namespace: LEADER_NS }),
      (err: unknown) => err instanceof MemberTokenError && /member cluster ID "south\.example" is not valid: a cluster ID is a DNS-1123 label.*\(no dots\); no token was issued/.test(err.message));
    assert.equal(await maybe(() => admin.makeApiClient(CoreV1Api).readNamespacedServiceAccount({ namespace: LEADER_NS, name: 'member-south.example' })), undefined);
    // Made by hand anyway: the leader's ID map leaves it out, in the same words, and admission denies it.
    await createServiceAccountWithRole(admin, { namespace: LEADER_NS, serviceAccount: 'member-south', rules: ANTREA_MEMBER_ROLE_RULES, annotations: { 'multicluster.antrea.io/cluster-id': 'south.example' } });
    await waitFor('the leader reports the dotted ID', () => leaderLog.lines.some((line) =>
      /cluster ID "south\.example" is not valid: a cluster ID is a DNS-1123 label/.test(String((JSON.parse(line) as { problem?: unknown }).problem))), converge);
    const south = tokenConfig(leader, await issueToken(admin, LEADER_NS, 'member-south'), 'member-south').makeApiClient(CustomObjectsApi);
    await waitForAccess(leader, await issueToken(admin, LEADER_NS, 'member-south'), { verb: 'create', resource: 'memberclusterannounces', group: MEMBER_CLUSTER_ANNOUNCE.group, namespace: LEADER_NS });
    await deniedWith(south.createNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), body: announceBody('south.example', new Date().toISOString()), dryRun: 'All' }), /ClusterID "south\.example" is not permitted/);
  });

  it('revoking one member is one command: its old token is refused within seconds, the others keep working', async () => {
    const before = Date.now();
    await kubectl(leader, ['-n', LEADER_NS, 'delete', 'serviceaccount', 'member-north']);
    await waitFor('north\'s token refused', async () => {
      try {
        await as('north').getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-north' });
        return false;
      } catch (err) {
        return httpStatus(err) === 401;
      }
    }, { timeoutMs: 10_000, intervalMs: 100 });
    assert.ok(Date.now() - before < 10_000);
    await as('east').getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-east' });
  });

  // Item 7 of issue 29: a member's clock a day fast. Its touch-ts must not keep it Ready, nor
  // unreaped, after it stops beating: a beat counts from when the leader saw it.
  it('a member clock a day fast: Disconnected one timeout after its touch-ts stops changing, reaped one stale period after the leader saw it', async (t) => {
    const STALE_MS = 12_000;
    const DAY = 86_400_000;
    await stopLeader();
    await startLeader(STALE_MS);
    const memberStatus = async (id: string) => ((await adminObjects().getNamespacedCustomObject({ ...ref(CLUSTERSET), name: CLUSTERSET_ID })) as ClusterSet)
      .status?.clusterStatuses?.find((s) => s.clusterID === id)?.conditions?.[0];
    await join('skew', new Date(Date.now() + DAY).toISOString());
    await waitFor('skew Ready, its clock reported as ahead', async () => {
      const c = await memberStatus('skew');
      return c?.status === 'True' && /its touch-ts runs ahead of the leader's clock/.test(c.message ?? '');
    }, converge);
    // One more beat, still a day ahead; then the member dies.
    // As a member beats: read, stamp, replace (again if the leader's finalizer landed in between).
    await waitFor('skew beats once more', async () => {
      const mca = (await as('skew').getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-skew' })) as MemberClusterAnnounce;
      await as('skew').replaceNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-skew',
        body: { ...mca, metadata: { ...mca.metadata, annotations: { ...mca.metadata?.annotations, 'touch-ts': new Date(Date.now() + DAY).toISOString() } } } });
      return true;
    }, converge);
    const lastBeat = Date.now();
    const down = await waitFor('skew Disconnected', async () => {
      const c = await memberStatus('skew');
      return c?.status === 'False' ? c : undefined;
    }, { timeoutMs: MEMBER_TIMEOUT_MS + 10_000, intervalMs: 100 });
    const disconnectedAfter = Date.now() - lastBeat;
    assert.ok(disconnectedAfter >= MEMBER_TIMEOUT_MS - 500 && disconnectedAfter <= MEMBER_TIMEOUT_MS + 2_500, `Disconnected ${String(disconnectedAfter)} ms after the last beat (timeout ${String(MEMBER_TIMEOUT_MS)} ms)`);
    assert.match(down.message ?? '', /^No MemberClusterAnnounce update after \S+; its touch-ts runs ahead of the leader's clock/);
    assert.ok(leaderLog.lines.some((l) => /member clock ahead of the leader's.*member skew stamps touch-ts \S+, 24\.0 h ahead of the leader's clock/.test(l)), 'the skew is logged with its size');
    await waitFor('skew reaped (announce deleted)', async () =>
      !(await maybe(() => adminObjects().getNamespacedCustomObject({ ...ref(MEMBER_CLUSTER_ANNOUNCE), name: 'member-announce-from-skew' }))), { timeoutMs: STALE_MS + 10_000, intervalMs: 100 });
    const reapedAfter = Date.now() - lastBeat;
    t.diagnostic(`Disconnected ${String(disconnectedAfter)} ms and reaped ${String(reapedAfter)} ms after the last beat (timeout ${String(MEMBER_TIMEOUT_MS)} ms, stale ${String(STALE_MS)} ms)`);
    assert.ok(reapedAfter >= STALE_MS - 500 && reapedAfter <= STALE_MS + 3_000, `reaped ${String(reapedAfter)} ms after the last beat (stale period ${String(STALE_MS)} ms)`);
    assert.ok(leaderLog.lines.some((l) => l.includes('stale member removed') && l.includes('member skew')), 'the reaping is logged');
  });
});
