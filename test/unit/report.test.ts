// `clusterset-agent status`: what the report says about a member's and a leader's ClusterSet,
// from objects as the agent and the leader controller write them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ServiceExport } from '../../src/common/api/mcs.js';
import type { ClusterSet, MemberClusterAnnounce, ResourceExport, ResourceImport } from '../../src/common/api/antrea.js';
import { exitCodeOf, foldWarnings, leaderReport, memberReport, tokenExpiry, type MemberInput } from '../../src/cli/report/model.js';
import { renderReports } from '../../src/cli/report/render.js';

const NOW = Date.parse('2026-12-03T12:00:00Z');
const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;

const memberCS = (ready: { status: 'True' | 'False'; reason: string; message?: string }): ClusterSet => ({
  metadata: { name: 'cs1', namespace: 'clusterset-agent' },
  spec: { clusterID: 'east', namespace: 'antrea-multicluster', leaders: [{ clusterID: 'leader', server: 'https://127.0.0.1:6443', secret: 'leader-token' }] },
  status: {
    conditions: [{ type: 'Ready', lastTransitionTime: '2026-12-03T11:00:00Z', ...ready }],
    clusterStatuses: [{ clusterID: 'leader', lastHeartbeatTime: '2026-12-03T11:59:50Z', conditions: [{ type: 'Ready', status: 'True' }, { type: 'IsLeader', status: 'True' }] }],
    imports: { total: 4, rejected: 1, conflicts: 0 },
  },
});

const member = (overrides: Partial<MemberInput> = {}) => memberReport({
  clusterSet: memberCS({ status: 'True', reason: 'Connected' }),
  token: { value: jwt({ exp: NOW / 1000 + 30 * 86_400, sub: 'system:serviceaccount:antrea-multicluster:member-east' }) },
  events: [], serviceExports: [], nowMs: NOW, ...overrides,
});

describe('status report: member', () => {
  it('several leaders: each shown with its own Ready and last beat; a missing one needs attention, the ClusterSet stays Ready', () => {
    const base = memberCS({ status: 'True', reason: 'Connected' });
    const cs: ClusterSet = {
      ...base,
      spec: { clusterID: 'east', namespace: 'antrea-multicluster', leaders: [
        { clusterID: 'leader-a', server: 'https://a:6443', secret: 'a-token' }, { clusterID: 'leader-b', server: 'https://b:6443', secret: 'b-token' },
      ] },
      status: {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Connected', lastTransitionTime: '2026-12-03T11:00:00Z' },
          { type: 'AllLeadersConnected', status: 'False', reason: 'LeadersDisconnected', message: '1/2 leaders connected; not connected: leader-a (Disconnected)', lastTransitionTime: '2026-12-03T11:30:00Z' },
        ],
        clusterStatuses: [
          { clusterID: 'leader-a', lastHeartbeatTime: '2026-12-03T11:29:00Z', conditions: [{ type: 'Ready', status: 'False', reason: 'Disconnected' }, { type: 'IsLeader', status: 'Unknown' }] },
          { clusterID: 'leader-b', lastHeartbeatTime: '2026-12-03T11:59:50Z', conditions: [{ type: 'Ready', status: 'True', reason: 'Connected' }, { type: 'IsLeader', status: 'True' }] },
        ],
        imports: { total: 4 },
      },
    };
    const r = member({ clusterSet: cs });
    assert.deepEqual(r.leaders?.map((l) => [l.clusterID, l.ready?.status, l.lastHeartbeatAgeSeconds]), [['leader-a', 'False', 1860], ['leader-b', 'True', 10]]);
    assert.equal(r.ready?.status, 'True');
    assert.ok(r.problems.some((p) => p.startsWith('AllLeadersConnected=False (LeadersDisconnected)') && p.includes('leader-a')), r.problems.join('\n'));
    const text = renderReports([r]);
    assert.match(text, /Leaders: {4}1\/2 connected\n {4}leader-a at https:\/\/a:6443: Ready False \(Disconnected\)/);
    assert.match(text, /\n {4}leader-b at https:\/\/b:6443: Ready True \(Connected\), last beat 2026-12-03T11:59:50Z/);
    assert.equal(member().leaders, undefined, 'one leader: the report is as before');
  });

  it("several leaders: each leader's token expiry from its own Secret, the one expiring soon named", () => {
    const cs: ClusterSet = {
      ...memberCS({ status: 'True', reason: 'Connected' }),
      spec: { clusterID: 'east', namespace: 'antrea-multicluster', leaders: [
        { clusterID: 'leader-a', server: 'https://a:6443', secret: 'a-token' }, { clusterID: 'leader-b', server: 'https://b:6443', secret: 'b-token' },
      ] },
    };
    const r = member({
      clusterSet: cs,
      token: { value: jwt({ exp: NOW / 1000 + 30 * 86_400 }) },
      leaderTokens: { 'b-token': { value: jwt({ exp: NOW / 1000 + 2 * 86_400 }) } },
    });
    assert.deepEqual(r.leaders?.map((l) => [l.clusterID, l.credential.secret, l.credential.expiresInSeconds]), [['leader-a', 'a-token', 30 * 86_400], ['leader-b', 'b-token', 2 * 86_400]]);
    assert.deepEqual(r.problems.filter((p) => p.includes('token')), ['leader leader-b: the leader token in Secret b-token expires in 2d: issue a new one (leader create-member-token)']);
    const text = renderReports([r]);
    assert.match(text, /\n {4}leader-a at https:\/\/a:6443: .*\n {6}credential: Secret a-token, expires 2027-01-02T12:00:00Z \(in 30d\)/);
    assert.match(text, /\n {4}leader-b at https:\/\/b:6443: .*\n {6}credential: Secret b-token, expires 2026-12-05T12:00:00Z \(in 2d\)/);
    // A leader whose Secret could not be read says so in its own entry.
    const unread = member({ clusterSet: cs, leaderTokens: { 'b-token': { problem: 'Secret clusterset-agent/b-token does not exist' } } });
    assert.ok(unread.problems.includes('leader leader-b: credential: Secret clusterset-agent/b-token does not exist'), unread.problems.join('\n'));
  });

  it('a healthy member with a rejected import needs attention for the rejection only', () => {
    const r = member();
    assert.equal(r.ready?.status, 'True');
    assert.equal(r.isLeader?.status, 'True');
    assert.equal(r.lastHeartbeatAgeSeconds, 10);
    assert.equal(r.credential.expiresInSeconds, 30 * 86_400);
    assert.deepEqual(r.problems, ['1 import(s) rejected by the member\'s import policy']);
    assert.equal(exitCodeOf([r]), 3);
    assert.equal(exitCodeOf([member({ clusterSet: { ...memberCS({ status: 'True', reason: 'Connected' }), status: { ...memberCS({ status: 'True', reason: 'Connected' }).status, imports: { total: 4 } } } })]), 0);
  });

  it('names the reason of a member that is not Ready, and an expiring or expired token', () => {
    const r = member({
      clusterSet: memberCS({ status: 'False', reason: 'Unauthorized', message: 'the leader refused the token' }),
      token: { value: jwt({ exp: NOW / 1000 + 3 * 86_400 }) },
    });
    assert.ok(r.problems.includes('not Ready (Unauthorized): the leader refused the token'));
    assert.ok(r.problems.some((p) => p.includes('expires in 3d')), r.problems.join('\n'));
    const expired = member({ token: { value: jwt({ exp: NOW / 1000 - 7200 }) } });
    assert.ok(expired.problems.some((p) => p.includes('expired 2h ago')), expired.problems.join('\n'));
    const unreadable = member({ token: { problem: 'Secret clusterset-agent/leader-token does not exist' } });
    assert.ok(unreadable.problems.includes('credential: Secret clusterset-agent/leader-token does not exist'));
  });

  it('lists each ServiceExport with its verdict and names a conflicting one', () => {
    const se = (name: string, status: NonNullable<ServiceExport['status']>): ServiceExport => ({ metadata: { name, namespace: 'team-a' }, status });
    const r = member({
      serviceExports: [
        se('web', { conditions: [{ type: 'Valid', status: 'True', reason: 'Succeed', message: '', lastTransitionTime: '2026-12-03T11:00:00Z' }, { type: 'Conflict', status: 'True', reason: 'PortConflict', message: 'port 80/TCP differs from west', lastTransitionTime: '2026-12-03T11:00:00Z' }] }),
        se('api', { conditions: [{ type: 'Valid', status: 'True', reason: 'Succeed', message: '', lastTransitionTime: '2026-12-03T11:00:00Z' }] }),
      ],
    });
    assert.deepEqual(r.exports.map((e) => e.name), ['api', 'web'], 'sorted by namespace/name');
    assert.ok(r.problems.includes('ServiceExport team-a/web conflicts (PortConflict): port 80/TCP differs from west'));
    assert.ok(!r.problems.some((p) => p.includes('team-a/api')));
    const text = renderReports([r]);
    assert.match(text, /team-a\/web: Valid=True \(Succeed\), Conflict=True \(PortConflict\): port 80\/TCP differs from west/);
    assert.match(text, /NEEDS ATTENTION \(2\)/);
  });

  it('folds Warning Events by reason, newest first, and ignores Normal ones', () => {
    const folded = foldWarnings([
      { type: 'Warning', reason: 'ImportRejectedNamespaceDenied', message: 'old', count: 2, lastTimestamp: '2026-12-03T11:00:00Z' },
      { type: 'Warning', reason: 'ImportConflict', message: 'conflict', lastTimestamp: '2026-12-03T11:30:00Z' },
      { type: 'Warning', reason: 'ImportRejectedNamespaceDenied', message: 'new', count: 1, lastTimestamp: '2026-12-03T11:40:00Z' },
      { type: 'Normal', reason: 'Connected', message: 'hi', lastTimestamp: '2026-12-03T11:50:00Z' },
    ]);
    assert.deepEqual(folded.map((e) => [e.reason, e.count, e.lastMessage]), [['ImportRejectedNamespaceDenied', 3, 'new'], ['ImportConflict', 1, 'conflict']]);
  });

  it('reads only the exp claim of a token, and says when it cannot', () => {
    assert.deepEqual(tokenExpiry(jwt({ exp: 1_800_000_000 })), { expiresAtMs: 1_800_000_000_000 });
    assert.equal(tokenExpiry(jwt({ sub: 'x' })), undefined);
    assert.deepEqual(tokenExpiry('opaque-token'), { problem: 'the token is not a JWT; its expiry cannot be read' });
    assert.deepEqual(tokenExpiry(jwt({ exp: 'soon' })), { problem: "the token's exp claim is not a number" });
    const secret = jwt({ exp: NOW / 1000 + 86_400 * 30 });
    const text = renderReports([member({ token: { value: secret } })]) + JSON.stringify(member({ token: { value: secret } }));
    assert.ok(!text.includes(secret) && !text.includes(secret.split('.')[1] ?? '-'), 'the token itself is never shown');
  });
});

describe('status report: leader', () => {
  const leaderCS: ClusterSet = {
    metadata: { name: 'cs1', namespace: 'antrea-multicluster' },
    spec: { clusterID: 'leader', leaders: [{ clusterID: 'leader' }] },
    status: {
      totalClusters: 2, readyClusters: 1,
      conditions: [{ type: 'Ready', status: 'True', reason: '', lastTransitionTime: '2026-12-03T11:00:00Z' }],
      clusterStatuses: [
        { clusterID: 'east', conditions: [{ type: 'Ready', status: 'True', reason: 'Connected', message: 'Member Connected' }] },
        { clusterID: 'west', conditions: [{ type: 'Ready', status: 'False', reason: 'Disconnected', message: 'No MemberClusterAnnounce update after 2026-12-03T11:58:00.000Z' }] },
      ],
    },
  };
  const announce = (id: string, ts: string): MemberClusterAnnounce => ({ metadata: { name: `member-announce-from-${id}`, annotations: { 'touch-ts': ts } }, clusterID: id });
  const re = (name: string, cluster: string, status?: ResourceExport['status']): ResourceExport => ({
    metadata: { name, labels: { sourceClusterID: cluster } }, spec: { clusterID: cluster, kind: 'Service', name: 'web', namespace: 'team-a' }, ...(status && { status }),
  });
  const ri = (name: string, kind: string): ResourceImport => ({ metadata: { name }, spec: { kind } });

  it('names the disconnected member and the refused export, counts imports by kind', () => {
    const r = leaderReport({
      clusterSet: leaderCS,
      announces: [announce('east', '2026-12-03T11:59:58Z'), announce('west', '2026-12-03T11:58:00Z')],
      exports: [
        re('east-team-a-web-service', 'east', { conditions: [{ type: 'Succeeded', status: 'True' }] }),
        re('west-team-a-web-service', 'west', { conditions: [{ type: 'Failure', status: 'False', reason: 'PortConflict', message: 'ports differ from east' }] }),
        re('west-team-a-api-service', 'west'),
      ],
      imports: [ri('team-a-web-service', 'ServiceImport'), ri('team-a-web-endpoints', 'Endpoints'), ri('east-clusterinfo', 'ClusterInfo')],
      events: [], nowMs: NOW,
    });
    assert.deepEqual(r.members.map((m) => [m.clusterID, m.ready?.status, m.lastBeatAgeSeconds]), [['east', 'True', 2], ['west', 'False', 120]]);
    assert.deepEqual(r.problems, [
      'member west is disconnected: No MemberClusterAnnounce update after 2026-12-03T11:58:00.000Z',
      'export west-team-a-web-service from west refused (PortConflict): ports differ from east',
    ]);
    assert.equal(r.exports.pending, 1);
    assert.deepEqual(r.imports.byKind, { ClusterInfo: 1, Endpoints: 1, ServiceImport: 1 });
    const text = renderReports([r]);
    assert.match(text, /west: DISCONNECTED, last beat 2026-12-03T11:58:00Z \(2m ago\)/);
    assert.match(text, /1 of 2 ready/);
    assert.match(text, /Imports: {4}3 ResourceImport\(s\): 1 ClusterInfo, 1 Endpoints, 1 ServiceImport/);
  });

  it('a member announced moments ago and not in the leader\'s status yet is joining, not disconnected; one missing for over a minute is a problem', () => {
    // The leader writes a burst of joins together (within half its member timeout): `join`, `join`, `status` runs inside it.
    const fresh = (id: string, createdAgoMs: number): MemberClusterAnnounce => ({ ...announce(id, '2026-12-03T11:59:58Z'), metadata: { ...announce(id, '2026-12-03T11:59:58Z').metadata, creationTimestamp: new Date(NOW - createdAgoMs) } });
    const r = leaderReport({ clusterSet: leaderCS, announces: [announce('east', '2026-12-03T11:59:58Z'), announce('west', '2026-12-03T11:59:58Z'), fresh('north', 3_000)], exports: [], imports: [], events: [], nowMs: NOW });
    assert.deepEqual(r.problems.filter((p) => p.includes('north')), []);
    assert.deepEqual(r.members.filter((m) => m.joining).map((m) => m.clusterID), ['north']);
    const text = renderReports([r]);
    assert.match(text, /Members: {4}1 of 2 ready, 1 joining \(not in the leader's status yet\)/);
    assert.match(text, /north: joining, last beat 2026-12-03T11:59:58Z/);
    const late = leaderReport({ clusterSet: leaderCS, announces: [announce('east', '2026-12-03T11:59:58Z'), fresh('north', 61_000)], exports: [], imports: [], events: [], nowMs: NOW });
    assert.ok(late.problems.includes('member north announced itself over 60s ago and is not in the leader\'s status: is the leader controller (leader run) running?'), late.problems.join('\n'));
  });

  it('a member in the status without an announce has left', () => {
    const r = leaderReport({ clusterSet: leaderCS, announces: [announce('east', '2026-12-03T11:59:58Z')], exports: [], imports: [], events: [], nowMs: NOW });
    assert.ok(r.problems.includes('member west has no MemberClusterAnnounce: it left, or never joined'));
  });

  it('no ClusterSet at all is said plainly', () => {
    assert.equal(renderReports([]), 'No ClusterSet found.\n');
    assert.equal(exitCodeOf([]), 0);
  });
});

describe('status report: what a stopped agent, a stopped leader controller and a warning condition leave behind', () => {
  const withBeat = (lastHeartbeatTime: string, extra: ClusterSet['status'] = {}): ClusterSet => {
    const cs = memberCS({ status: 'True', reason: 'Connected' });
    const status = { ...cs.status, imports: { total: 4 }, clusterStatuses: [{ ...cs.status?.clusterStatuses?.[0], lastHeartbeatTime }], ...extra };
    return { ...cs, status };
  };

  it('a member whose last heartbeat is older than --stale-after while Ready says True: the agent is not running', () => {
    assert.deepEqual(member({ clusterSet: withBeat('2026-12-03T11:56:00Z') }).problems, [], '4 minutes: within the default 5');
    const dead = member({ clusterSet: withBeat('2026-12-03T09:00:00Z') });
    assert.deepEqual(dead.problems, ['last heartbeat 3h ago (2026-12-03T09:00:00Z), over 5m, while Ready still says True: the agent is not running, or cannot write its status']);
    assert.equal(exitCodeOf([dead]), 3);
    assert.equal(member({ clusterSet: withBeat('2026-12-03T11:58:00Z'), staleAfterSeconds: 60 }).problems.length, 1, 'the bound is the caller\'s');
  });

  it("a member's failing condition other than Ready (ImportsSynced=False) is named with its reason and since when", () => {
    const cs = withBeat('2026-12-03T11:59:50Z', {
      conditions: [
        { type: 'Ready', status: 'True', reason: 'Connected', lastTransitionTime: '2026-12-03T11:00:00Z' },
        { type: 'ImportsSynced', status: 'False', reason: 'Forbidden', message: 'cannot watch resourceimports', lastTransitionTime: '2026-12-03T11:30:00Z' },
      ],
    });
    assert.deepEqual(member({ clusterSet: cs }).problems, ['ImportsSynced=False (Forbidden) since 2026-12-03T11:30:00Z: cannot watch resourceimports']);
  });

  const leaderCS = (conditions: NonNullable<ClusterSet['status']>['conditions'] = [{ type: 'Ready', status: 'True', reason: '', lastTransitionTime: '2026-12-03T11:00:00Z' }]): ClusterSet => ({
    metadata: { name: 'cs1', namespace: 'antrea-multicluster' },
    spec: { clusterID: 'leader', leaders: [{ clusterID: 'leader' }] },
    status: {
      totalClusters: 2, readyClusters: 2, conditions,
      clusterStatuses: ['east', 'west'].map((clusterID) => ({ clusterID, conditions: [{ type: 'Ready', status: 'True', reason: 'Connected' }] })),
    },
  });
  const announce = (id: string, ts: string): MemberClusterAnnounce => ({ metadata: { name: `member-announce-from-${id}`, annotations: { 'touch-ts': ts } }, clusterID: id });

  it('a leader that shows members connected whose beats stopped long ago: leader run is not refreshing it', () => {
    const fresh = leaderReport({ clusterSet: leaderCS(), announces: [announce('east', '2026-12-03T11:59:58Z'), announce('west', '2026-12-03T11:59:55Z')], exports: [], imports: [], events: [], nowMs: NOW });
    assert.deepEqual(fresh.problems, []);
    const stale = leaderReport({ clusterSet: leaderCS(), announces: [announce('east', '2026-12-03T10:00:00Z'), announce('west', '2026-12-03T11:59:55Z')], exports: [], imports: [], events: [], nowMs: NOW });
    assert.deepEqual(stale.problems, ['stale leader status: east shown connected, but last beat up to 2h ago (over 5m): is the leader controller (leader run) running?']);
    assert.equal(exitCodeOf([stale]), 3);
  });

  it("the leader's DuplicateClusterID condition needs attention, with its message", () => {
    const r = leaderReport({
      clusterSet: leaderCS([
        { type: 'Ready', status: 'True', reason: '', lastTransitionTime: '2026-12-03T11:00:00Z' },
        { type: 'DuplicateClusterID', status: 'True', reason: 'DuplicateClusterID', message: 'cluster ID east is used by 2 member clusters', lastTransitionTime: '2026-12-03T11:50:00Z' },
      ]),
      announces: [announce('east', '2026-12-03T11:59:58Z'), announce('west', '2026-12-03T11:59:55Z')], exports: [], imports: [], events: [], nowMs: NOW,
    });
    assert.deepEqual(r.problems, ['DuplicateClusterID=True (DuplicateClusterID) since 2026-12-03T11:50:00Z: cluster ID east is used by 2 member clusters']);
    assert.equal(exitCodeOf([r]), 3);
  });
});
