// The leader's pure decisions outside aggregation: its books (which imports it may delete, what
// a sweep removes), announce handling, ClusterInfo checks, beat periods and flaps.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemberClusterAnnounce, ResourceExport, ResourceImport, ResourceImportSpec } from '../../src/common/api/antrea.js';
import { lastSignOfLife } from '../../src/common/api/announce-times.js';
import { decideAnnounce } from '../../src/leader/decisions/announce-plan.js';
import { BeatPeriods, FlapTracker, timeoutProblem, TimeoutReports } from '../../src/leader/decisions/beats.js';
import { decideImportWrite, forEachBounded, importBody, MANAGED_BY_LABEL, MANAGED_BY_LEADER, orphanExports, orphanImports } from '../../src/leader/decisions/books.js';
import { ClusterInfoJudge, clusterInfoVerdicts } from '../../src/leader/decisions/clusterinfo-check.js';
import { cidrsOverlap, parseCidr } from '../../src/common/net/cidr.js';
import { cidrProblem as importCidrProblem } from '../../src/importer/policy.js';
import { ExportIndex } from '../../src/leader/decisions/export-index.js';
import { countVerdicts, planImport } from '../../src/leader/decisions/aggregate.js';
import { memberLiveness } from '../../src/leader/decisions/liveness.js';
import { clusterInfoExportOf, serviceExport as harnessServiceExport, storedExport } from '../harness/resource-export.js';

const T0 = Date.parse('2026-12-02T10:00:00Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const SPEC: ResourceImportSpec = { name: 'web', namespace: 'ns', kind: 'ServiceImport', serviceImport: { spec: { ports: [{ port: 80, protocol: 'TCP' }], type: 'ClusterSetIP' } } };
const OWNED = { [MANAGED_BY_LABEL]: MANAGED_BY_LEADER };

function ri(name: string, options: { labels?: Record<string, string>; spec?: ResourceImportSpec; deleting?: boolean } = {}): ResourceImport {
  return {
    metadata: { name, ...(options.labels ? { labels: options.labels } : {}), ...(options.deleting ? { deletionTimestamp: at(0) as unknown as Date } : {}) },
    spec: options.spec ?? SPEC,
  };
}

function serviceExport(cluster: string, name: string, createdMs = 0, deleting = false): ResourceExport {
  return storedExport(harnessServiceExport(cluster, 'ns', name, { ports: [{ port: 80, protocol: 'TCP' }] }), at(createdMs), deleting ? at(1) : undefined);
}

function clusterInfo(cluster: string, createdMs: number, info: { serviceCIDR?: string; podCIDRs?: string[]; gatewayIP?: string }): ResourceExport {
  return storedExport(clusterInfoExportOf(cluster, info), at(createdMs));
}

function announce(clusterID: string, options: { touch?: string; created?: string; finalizers?: string[]; deleting?: boolean } = {}): MemberClusterAnnounce {
  return {
    metadata: {
      name: `member-announce-from-${clusterID}`,
      ...(options.touch === undefined ? {} : { annotations: { 'touch-ts': options.touch } }),
      ...(options.created === undefined ? {} : { creationTimestamp: options.created as unknown as Date }),
      ...(options.finalizers === undefined ? {} : { finalizers: options.finalizers }),
      ...(options.deleting ? { deletionTimestamp: at(0) as unknown as Date } : {}),
    },
    clusterID, clusterSetID: 'cs', leaderClusterID: 'leader',
  };
}

describe('leader books: import writes', () => {
  it('deletes an unfed import only when it carries the leader label, whatever the leader remembers', () => {
    assert.deepEqual(decideImportWrite(ri('k', { labels: OWNED }), undefined), { op: 'delete' });
    assert.deepEqual(decideImportWrite(ri('k'), undefined), { op: 'none' }, 'a hand-made import is left alone');
    assert.deepEqual(decideImportWrite(undefined, undefined), { op: 'none' });
    assert.deepEqual(decideImportWrite(ri('k', { labels: OWNED, deleting: true }), undefined), { op: 'none' });
  });

  it('creates, updates (also to label an unlabelled one), leaves an identical labelled one, waits on a deleting one', () => {
    assert.deepEqual(decideImportWrite(undefined, SPEC), { op: 'create', spec: SPEC });
    assert.deepEqual(decideImportWrite(ri('k', { labels: OWNED }), SPEC), { op: 'none' });
    assert.deepEqual(decideImportWrite(ri('k'), SPEC), { op: 'update', spec: SPEC });
    const other = { ...SPEC, name: 'api' };
    assert.deepEqual(decideImportWrite(ri('k', { labels: OWNED }), other), { op: 'update', spec: other });
    assert.deepEqual(decideImportWrite(ri('k', { labels: OWNED, deleting: true }), SPEC), { op: 'wait' });
  });

  it('every import body carries the leader label and keeps the stored metadata', () => {
    const created = importBody('v', 'ResourceImport', 'k', 'ns', SPEC);
    assert.deepEqual(created.metadata, { name: 'k', namespace: 'ns', labels: OWNED });
    const stored = { ...ri('k', { labels: { team: 'a' } }), metadata: { name: 'k', namespace: 'ns', resourceVersion: '7', labels: { team: 'a' } } };
    assert.deepEqual(importBody('v', 'ResourceImport', 'k', 'ns', SPEC, stored).metadata, { name: 'k', namespace: 'ns', resourceVersion: '7', labels: { team: 'a', ...OWNED } });
  });
});

describe('leader books: import annotations and verdict counts', () => {
  const SOURCES = { 'multicluster.clusterset-agent.io/endpoint-sources': 'east=1,west=1' };
  it('an import whose annotation differs is updated, and the body carries it beside the stored ones', () => {
    const stored = { ...ri('k', { labels: OWNED }), metadata: { name: 'k', namespace: 'ns', labels: OWNED, annotations: { keep: 'me' } } };
    assert.deepEqual(decideImportWrite(stored, SPEC, SOURCES), { op: 'update', spec: SPEC });
    const annotated = { ...stored, metadata: { ...stored.metadata, annotations: { keep: 'me', ...SOURCES } } };
    assert.deepEqual(decideImportWrite(annotated, SPEC, SOURCES), { op: 'none' });
    assert.deepEqual(importBody('v', 'ResourceImport', 'k', 'ns', SPEC, stored, SOURCES).metadata?.annotations, { keep: 'me', ...SOURCES });
    assert.deepEqual(importBody('v', 'ResourceImport', 'k', 'ns', SPEC, undefined, SOURCES).metadata?.annotations, SOURCES);
  });

  it('counts exports as accepted (Succeeded), refused (Failure, Antrea\'s status False) or pending, leaving out withdrawn ones', () => {
    const withStatus = (name: string, conditions: NonNullable<ResourceExport['status']>['conditions'], deleting = false): ResourceExport => ({
      metadata: { name, ...(deleting ? { deletionTimestamp: at(0) as unknown as Date } : {}) }, ...(conditions === undefined ? {} : { status: { conditions } }),
    });
    assert.deepEqual(countVerdicts([
      withStatus('a', [{ type: 'Succeeded', status: 'True' }]),
      withStatus('b', [{ type: 'Failure', status: 'False', reason: 'ConvergeFailure' }]),
      withStatus('c', undefined),
      withStatus('d', [{ type: 'Failure', status: 'False' }], true),
    ]), { accepted: 1, refused: 1, pending: 1 });
  });
});

describe('leader books: sweeps', () => {
  it('orphaned imports: labelled, not deleting, fed by no export', () => {
    const imports = [ri('b', { labels: OWNED }), ri('a', { labels: OWNED }), ri('fed', { labels: OWNED }), ri('hand'), ri('going', { labels: OWNED, deleting: true })];
    assert.deepEqual(orphanImports(imports, (name) => name === 'fed'), ['a', 'b']);
  });

  it('orphaned exports: their member has no announce, and they are older than the grace', () => {
    const exports = [serviceExport('east', 'web', 0), serviceExport('gone', 'web', 0), serviceExport('gone', 'new', 50_000), serviceExport('gone', 'dying', 0, true)];
    assert.deepEqual(orphanExports(exports, [announce('east')], T0 + 60_000, 30_000), ['gone-ns-web-service']);
  });

  it('forEachBounded: never more than the limit in flight, every item tried, the first error thrown at the end', async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    await assert.rejects(forEachBounded([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => { setImmediate(resolve); });
      inFlight--;
      done.push(n);
      if (n === 2 || n === 5) throw new Error(`item ${String(n)}`);
    }), /item 2/);
    assert.equal(most, 3);
    assert.deepEqual(done.sort(), [1, 2, 3, 4, 5, 6, 7]);
  });

  it('the export index follows adds, changes and deletes', () => {
    const index = new ExportIndex();
    const re = serviceExport('east', 'web');
    assert.deepEqual(index.update(re, false).sort(), ['ns-web-endpoints', 'ns-web-service']);
    assert.ok(index.feeds('ns-web-service'));
    assert.deepEqual(index.exportsOf('ns-web-endpoints'), ['east-ns-web-service']);
    assert.deepEqual(index.update(re, true).sort(), ['ns-web-endpoints', 'ns-web-service']);
    assert.equal(index.feeds('ns-web-service'), false);
  });
});

describe('leader announces', () => {
  const fin = 'memberclusterannounce.finalizer.antrea.io/east';
  it('a deleting announce: collect only that member\'s live exports, then release the finalizer', () => {
    const exports = [serviceExport('east', 'b'), serviceExport('east', 'a'), serviceExport('east', 'c', 0, true), serviceExport('west', 'a')];
    assert.deepEqual(decideAnnounce(announce('east', { deleting: true, finalizers: [fin] }), exports, T0, 60_000),
      { op: 'collect', exports: ['east-ns-a-service', 'east-ns-b-service'], releaseFinalizer: true });
    assert.deepEqual(decideAnnounce(announce('east', { deleting: true, finalizers: ['other'] }), [], T0, 60_000), { op: 'collect', exports: [], releaseFinalizer: false });
  });

  it('finalizes a live announce, reaps a stale one, and counts a fresh one without touch-ts from its creation', () => {
    assert.deepEqual(decideAnnounce(announce('east', { touch: at(0) }), [], T0 + 1000, 60_000), { op: 'finalize', recheckAt: T0 + 60_000 });
    assert.deepEqual(decideAnnounce(announce('east', { touch: at(0), finalizers: [fin] }), [], T0 + 1000, 60_000), { op: 'none', recheckAt: T0 + 60_000 });
    assert.deepEqual(decideAnnounce(announce('east', { touch: at(0), finalizers: [fin] }), [], T0 + 60_000, 60_000), { op: 'reap', lastBeat: T0 });
    assert.equal(lastSignOfLife(announce('east', { created: at(5000) })), T0 + 5000);
    assert.deepEqual(decideAnnounce(announce('east', { created: at(0) }), [], T0 + 61_000, 60_000), { op: 'reap', lastBeat: T0 });
  });
});

describe('leader announces: a touch-ts from the future does not postpone reaping', () => {
  const fin = 'memberclusterannounce.finalizer.antrea.io/east';
  const DAY = 86_400_000;
  it('stale counts from when the leader first saw the stamp, not from the stamp', () => {
    const ahead = announce('east', { touch: at(DAY), finalizers: [fin] });
    assert.deepEqual(decideAnnounce(ahead, [], T0 + 59_999, 60_000, T0), { op: 'none', recheckAt: T0 + 60_000 });
    assert.deepEqual(decideAnnounce(ahead, [], T0 + 60_000, 60_000, T0), { op: 'reap', lastBeat: T0 });
    assert.equal(lastSignOfLife(ahead, T0), T0);
    // An honest stamp is itself, whenever the leader first saw it (a restart changes nothing).
    assert.equal(lastSignOfLife(announce('east', { touch: at(0) }), T0 + 40_000), T0);
  });
});

describe('leader liveness that fits every member', () => {
  it('an announce created without touch-ts is Ready from its creation until the timeout', () => {
    const fresh = announce('east', { created: at(0) });
    assert.equal(memberLiveness(fresh, T0 + 5_000, 30_000).ready, true);
    assert.equal(memberLiveness(fresh, T0 + 5_000, 30_000).expiresAt, T0 + 30_000);
    assert.equal(memberLiveness(fresh, T0 + 30_001, 30_000).ready, false);
    assert.equal(memberLiveness(announce('east', { created: at(0), touch: 'garbage' }), T0, 30_000).ready, false, 'a malformed touch-ts is still not a beat');
  });

  it('learns a member\'s beat period from its touch-ts history, ignoring repeats', () => {
    const beats = new BeatPeriods();
    beats.observe('antrea', T0);
    beats.observe('antrea', T0);
    assert.equal(beats.periodOf('antrea'), undefined);
    beats.observe('antrea', T0 + 10_000);
    beats.observe('antrea', T0 + 30_000); // one beat missed: the period is still 10 s
    assert.equal(beats.periodOf('antrea'), 10_000);
  });

  it('a timeout within one beat period plus truncation is a problem naming the period and the fix', () => {
    assert.match(timeoutProblem('antrea', 10_000, 10_000) ?? '', /member antrea beats every 10.0 s, but the member timeout is 10.0 s.*above 12 s/);
    assert.equal(timeoutProblem('antrea', 11_000, 10_000) !== undefined, true);
    assert.equal(timeoutProblem('antrea', 30_000, 10_000), undefined);
    assert.equal(timeoutProblem('ours', 6_000, 2_000), undefined);
    assert.equal(timeoutProblem('new', 2_000, undefined), undefined);
  });

  it('a member\'s timeout problem is said once while it lasts, however its period moves, and again after it cleared', () => {
    const reports = new TimeoutReports();
    // A busy API server: the measured period moves by a second from beat to beat.
    const said = [47_000, 48_000, 49_000, 47_000].map((period) => reports.next('m1', timeoutProblem('m1', 30_000, period)));
    assert.equal(said.filter((s) => s !== undefined).length, 1);
    assert.match(said[0] ?? '', /beats every 47.0 s/);
    assert.match(reports.next('m2', timeoutProblem('m2', 30_000, 48_000)) ?? '', /member m2/, 'each member on its own');
    assert.equal(reports.next('m1', timeoutProblem('m1', 30_000, 10_000)), undefined, 'cleared');
    assert.match(reports.next('m1', timeoutProblem('m1', 30_000, 50_000)) ?? '', /beats every 50.0 s/, 'said again after it cleared');
    reports.forget('m2');
    assert.notEqual(reports.next('m2', timeoutProblem('m2', 30_000, 48_000)), undefined, 'a member gone and back is said again');
  });

  it('a flapping member is reported once, then quiet until steady for a window', () => {
    const flaps = new FlapTracker(60_000, 4);
    const reports = [0, 10, 20, 30, 40, 50].map((s) => flaps.transition('east', T0 + s * 1000));
    assert.deepEqual(reports.map((r) => r.logTransition), [true, true, true, false, false, false]);
    assert.deepEqual(reports.map((r) => r.startedFlapping), [false, false, false, true, false, false]);
    assert.ok(flaps.isFlapping('east'));
    assert.deepEqual(flaps.transition('east', T0 + 200_000), { logTransition: true, startedFlapping: false }, 'steady for a window: single transitions are logged again');
  });
});

describe('leader ClusterInfo checks', () => {
  it('parses IPv4 and IPv6 CIDRs and refuses anything else', () => {
    assert.ok(parseCidr('10.96.0.0/12'));
    assert.ok(parseCidr('fd00:10::/64'));
    for (const bad of ['10.96.0.0', '10.96.0.0/33', '300.1.1.1/8', 'fd00::/129', 'x/8', '10.0.0.0/-1', 'fe80::1%eth0/64', '10.0.0.0/08']) assert.equal(parseCidr(bad), undefined, bad);
  });

  it('leader and member read CIDRs alike: what the member imports, the leader judges, and back', () => {
    const samples = ['10.96.0.0/12', '::ffff:10.1.0.0/112', '64:ff9b::10.0.0.0/120', 'FD00::/64', '10.0.0.0/08', '1.2.3.4/33', 'fe80::1%eth0/64', '10.1.2.3/16', ' 10.0.0.0/8', '0.0.0.0/0'];
    for (const text of samples) {
      const member = importCidrProblem(text) !== 'is not a valid CIDR';
      const leader = clusterInfoVerdicts([clusterInfo('east', 0, { podCIDRs: [text] })], [clusterInfo('east', 0, { podCIDRs: [text] })]).get('east-clusterinfo')?.ok === true;
      assert.equal(leader, member, `${JSON.stringify(text)}: leader ${leader ? 'accepts' : 'refuses'}, member ${member ? 'accepts' : 'refuses'}`);
    }
    // A dual-stack cluster's serviceCIDR, as the member imports it (v4,v6): accepted, and each half judged for overlap.
    const dual = clusterInfo('east', 0, { serviceCIDR: '10.96.0.0/12,fd00:10:96::/108' });
    const other = clusterInfo('west', 1, { serviceCIDR: '10.200.0.0/16,fd00:10:96::/112' });
    const verdicts = clusterInfoVerdicts([dual, other], [dual, other]);
    assert.deepEqual(verdicts.get('east-clusterinfo'), { ok: true });
    assert.match(JSON.stringify(verdicts.get('west-clusterinfo')), /fd00:10:96::\/112 overlaps fd00:10:96::\/108 of cluster east/);
  });

  it('the sweep finds exactly the overlaps comparing every pair finds', () => {
    let seed = 7;
    const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
    for (let round = 0; round < 30; round++) {
      const exports = Array.from({ length: 6 }, (_, m) => clusterInfo(`m${String(m)}`, m * 1000, {
        podCIDRs: Array.from({ length: 1 + random(4) }, () => {
          const prefix = 8 + random(17);
          const value = (random(4) << 24) | (random(4) << 20) | (random(2) << 16);
          return `${[24, 16, 8, 0].map((shift) => String((value >>> shift) & 255)).join('.')}/${String(prefix)}`;
        }),
        gatewayIP: `172.18.0.${String(random(8))}`,
      }));
      // Brute force: the first holder keeps; a claim is refused when it clashes with a kept claim of another cluster.
      const kept: ResourceExport[] = [];
      for (const re of exports) {
        const mine = (re.spec?.clusterInfo?.podCIDRs ?? []).map((t) => parseCidr(t) ?? assert.fail(t));
        const clash = kept.some((k) => (k.spec?.clusterInfo?.podCIDRs ?? []).some((t) => mine.some((c) => cidrsOverlap(c, parseCidr(t) ?? assert.fail(t))))
          || k.spec?.clusterInfo?.gatewayInfos?.[0]?.gatewayIP === re.spec?.clusterInfo?.gatewayInfos?.[0]?.gatewayIP);
        if (!clash) kept.push(re);
      }
      const verdicts = clusterInfoVerdicts(exports, exports);
      for (const re of exports) assert.equal(verdicts.get(re.metadata?.name ?? '')?.ok, kept.includes(re), `round ${String(round)}: ${JSON.stringify(exports.map((e) => e.spec?.clusterInfo))}`);
    }
  });

  it('judged once per state of the ClusterInfo exports, each claim parsed once per resourceVersion', () => {
    const members = Array.from({ length: 50 }, (_, m) => ({ ...clusterInfo(`m${String(m)}`, m, { podCIDRs: [`10.${String(m)}.0.0/16`] }) }));
    for (const re of members) re.metadata = { ...re.metadata, resourceVersion: '1' };
    const judge = new ClusterInfoJudge();
    // A change re-judges every member's import key: 50 reconciles, one judgement.
    for (const re of members) assert.deepEqual(judge.verdicts([re], members).get(re.metadata?.name ?? ''), { ok: true });
    assert.equal(judge.judged, 1);
    const changed = { ...members[0], metadata: { ...members[0]?.metadata, resourceVersion: '2' }, spec: { ...members[0]?.spec, clusterInfo: { podCIDRs: ['10.1.0.0/24'] } } };
    const now = [changed, ...members.slice(1)];
    for (const re of now) judge.verdicts([re], now);
    assert.equal(judge.judged, 2);
    // m0 is the older: it keeps 10.1.0.0/24, and m1 loses its /16.
    assert.match(JSON.stringify(judge.verdicts([now[1] ?? assert.fail()], now).get('m1-clusterinfo')), /10\.1\.0\.0\/16 overlaps 10\.1\.0\.0\/24 of cluster m0/);
    assert.equal(judge.judged, 2);
  });

  it('a claim with thousands of malformed entries gets a bounded message', () => {
    const bad = clusterInfo('east', 0, { podCIDRs: Array.from({ length: 10_000 }, (_, i) => `bad-${String(i)}`) });
    const verdict = clusterInfoVerdicts([bad], [bad]).get('east-clusterinfo');
    assert.equal(verdict?.ok, false);
    assert.ok(!(verdict?.ok) && verdict.message.length < 1000, `message of ${String(!(verdict?.ok) ? verdict.message.length : 0)} characters`);
    assert.match(!(verdict?.ok) ? verdict.message : '', /and 9995 more/);
  });

  it('overlap: containment either way, per family', () => {
    const c = (t: string) => parseCidr(t) ?? assert.fail(t);
    assert.ok(cidrsOverlap(c('10.0.0.0/8'), c('10.244.1.0/24')));
    assert.ok(cidrsOverlap(c('10.244.1.7/24'), c('10.0.0.0/8')));
    assert.equal(cidrsOverlap(c('10.0.0.0/16'), c('10.1.0.0/16')), false);
    assert.ok(cidrsOverlap(c('fd00::/48'), c('fd00:0:0:1::/64')));
    assert.equal(cidrsOverlap(c('fd00::/64'), c('fd00:0:0:1::/64')), false);
    assert.equal(cidrsOverlap(c('0.0.0.0/0'), c('::/0')), false);
  });

  it('the first holder keeps its CIDRs; a later overlapping claim is refused naming both, whatever the names', () => {
    const first = clusterInfo('zeta', 0, { serviceCIDR: '10.96.0.0/16', podCIDRs: ['10.244.0.0/16'], gatewayIP: '172.18.0.2' });
    const late = clusterInfo('alpha', 1000, { serviceCIDR: '10.200.0.0/16', podCIDRs: ['10.244.5.0/24'], gatewayIP: '172.18.0.3' });
    const all = [late, first];
    assert.deepEqual(clusterInfoVerdicts([first], all).get('zeta-clusterinfo'), { ok: true });
    const verdict = clusterInfoVerdicts([late], all).get('alpha-clusterinfo');
    assert.equal(verdict?.ok, false);
    assert.match(!(verdict?.ok) ? verdict.message : '', /10\.244\.5\.0\/24 overlaps 10\.244\.0\.0\/16 of cluster zeta \(zeta-clusterinfo\); the first holder keeps it/);
    assert.equal(!(verdict?.ok) ? verdict.reason : '', 'CIDRConflict');
  });

  it('a gateway IP another member holds, and malformed syntax, are refused; a refused claim holds nothing', () => {
    const a = clusterInfo('a', 0, { serviceCIDR: '10.1.0.0/16', gatewayIP: '172.18.0.2' });
    const b = clusterInfo('b', 1, { serviceCIDR: 'ten/8', gatewayIP: 'nope' });
    const c = clusterInfo('c', 2, { serviceCIDR: '10.2.0.0/16', gatewayIP: '172.18.0.2' });
    const d = clusterInfo('d', 3, { serviceCIDR: '10.2.0.0/16', gatewayIP: '172.18.0.9' });
    const verdicts = clusterInfoVerdicts([a, b, c, d], [a, b, c, d]);
    assert.match(JSON.stringify(verdicts.get('b-clusterinfo')), /InvalidClusterInfo.*serviceCIDR \\"ten\/8\\" is not a CIDR; gatewayInfos\[0\]\.gatewayIP \\"nope\\" is not an IP address/);
    assert.match(JSON.stringify(verdicts.get('c-clusterinfo')), /gateway IP 172\.18\.0\.2 is the gateway of cluster a/);
    assert.deepEqual(verdicts.get('d-clusterinfo'), { ok: true }, 'c was refused, so its CIDR is free for d');
  });

  it('gives no verdict to other kinds', () => {
    assert.equal(clusterInfoVerdicts([serviceExport('east', 'web')], []).size, 0);
  });
});

describe('leader aggregation: the two mutations the issue names', () => {
  const svc = (cluster: string, createdMs: number, protocol: string): ResourceExport =>
    storedExport(harnessServiceExport(cluster, 'ns', 'web', { ports: [{ name: 'http', port: 80, protocol }] }), at(createdMs));

  it('"first exporter wins" goes by creation time, not by name (the oldest is alphabetically last here)', () => {
    const zeta = svc('zeta', 0, 'TCP');
    const alpha = { ...svc('alpha', 1000, 'TCP'), spec: { ...svc('alpha', 1000, 'TCP').spec, service: { serviceSpec: { ports: [{ name: 'http', port: 81, protocol: 'TCP' }] } } } };
    const plan = planImport('ns-web-service', [alpha, zeta]);
    assert.equal(plan.spec?.serviceImport?.spec?.ports?.[0]?.port, 80, 'zeta exported first');
    // KEP-1645: every conflicting exporter is told (Conflict on each ServiceExport); the oldest's ports are imported.
    assert.equal(plan.verdicts.get('zeta-ns-web-service')?.ok, false);
    assert.equal(plan.verdicts.get('alpha-ns-web-service')?.ok, false);
  });

  it('a port is its number and its protocol: 80/UDP is never taken for 80/TCP', () => {
    const plan = planImport('ns-web-service', [svc('east', 0, 'TCP'), svc('west', 1000, 'UDP')]);
    const imported = (plan.spec?.serviceImport?.spec?.ports ?? []).map((p) => `${String(p.port)}/${p.protocol ?? 'TCP'}`);
    const westAccepted = plan.verdicts.get('west-ns-web-service')?.ok === true;
    // Either refused as a conflict, or imported as its own port; never accepted while only 80/TCP is imported.
    assert.ok(!westAccepted || imported.includes('80/UDP'), `west 80/UDP accepted=${String(westAccepted)}, imported ${imported.join(', ')}`);
  });
});
