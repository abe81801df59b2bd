// The area's own logic with an in-memory leader: retries inside a beat, trust that pauses
// imports at once and resumes them on the next accepted beat, ownership, and leaving.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { AreaEvent } from '../../src/commonarea/area-events.js';
import type { LeaderApi } from '../../src/commonarea/leader-api.js';
import { RemoteCommonArea, type LeaderLink } from '../../src/commonarea/remote-common-area.js';
import type { LeaderCredentials } from '../../src/commonarea/credentials.js';
import { failure, FailureReason } from '../../src/conditions/reasons.js';
import { UnexpectedResponseError } from '../../src/common/kube/rest-client.js';
import { apiError, FakeLeader } from './fakes/fake-leader.js';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined };
const credentials: LeaderCredentials = { server: 'https://leader.example:6443', caPem: 'pem', token: 't', fingerprint: 'f1' };
// A schedule that never fires during a test: beats are driven with beatNow().
const NEVER = '0 0 0 1 1 *';

class RecordingImporter implements LeaderLink {
  readonly calls: string[] = [];
  resume(api: LeaderApi): void { this.calls.push(`resume ${api.server}`); }
  pause(why: string): void { this.calls.push(`pause ${why.split(':')[0] ?? ''}`); }
  stop(): Promise<void> { this.calls.push('stop'); return Promise.resolve(); }
  leave(): Promise<void> { this.calls.push('leave'); return Promise.resolve(); }
}

const running: RemoteCommonArea[] = [];
// A failed assertion must not leave a heartbeat schedule keeping the test process alive.
afterEach(async () => { await Promise.all(running.splice(0).map((a) => a.stop())); });

function setup(options: { intervalMs?: number; requestTimeoutMs?: number; leader?: FakeLeader } = {}) {
  const leader = options.leader ?? new FakeLeader();
  const importer = new RecordingImporter();
  const events: AreaEvent[] = [];
  const area = new RemoteCommonArea({
    identity: { clusterID: 'east', clusterSetID: 'set', leaderClusterID: 'leader' },
    leaderNamespace: leader.namespace,
    heartbeatCron: NEVER,
    intervalMs: options.intervalMs ?? 2000,
    requestTimeoutMs: options.requestTimeoutMs ?? 500,
    failureThreshold: 3,
    createApi: () => leader,
    logger: silent,
    importer,
    random: () => 0.5,
  });
  area.events.subscribe((e) => { events.push(e); });
  running.push(area);
  return { leader, importer, events, area };
}

const beats = (events: AreaEvent[]) => events.filter((e) => e.type === 'beat');
const unavailable = () => apiError(503, 'ServiceUnavailable', 'injected');
const reset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

describe('RemoteCommonArea heartbeat', () => {
  it('retries lost requests inside the beat: a 503 and a reset do not make a failed beat', async () => {
    const { leader, events, area } = setup();
    area.setCredentials({ ok: true, credentials });
    leader.failNext.push(unavailable(), reset());
    await area.start();
    const [beat] = beats(events);
    assert.deepEqual(beat && { ok: beat.ok, attempts: beat.attempts }, { ok: true, attempts: 3 });
    assert.equal(area.getStatus().ready.status, 'True');
    assert.equal(area.getStatus().consecutiveFailures, 0);
    await area.stop();
  });

  it('does not retry what a retry cannot fix (403), and fails the beat at once', async () => {
    const { leader, events, area } = setup();
    area.setCredentials({ ok: true, credentials });
    leader.failWith = apiError(403, 'Forbidden', 'forbidden');
    await area.start();
    const [beat] = beats(events);
    assert.deepEqual(beat && { ok: beat.ok, attempts: beat.attempts, reason: beat.reason }, { ok: false, attempts: 1, reason: 'Forbidden' });
    await area.stop();
  });

  it('keeps every retry within the beat budget (90% of the interval)', async () => {
    const { leader, events, area } = setup({ intervalMs: 1000, requestTimeoutMs: 300 });
    area.setCredentials({ ok: true, credentials });
    leader.failWith = unavailable();
    const started = performance.now();
    await area.start();
    const took = performance.now() - started;
    const [beat] = beats(events);
    assert.equal(beat?.ok, false);
    assert.ok((beat?.attempts ?? 0) >= 2, `retried (${String(beat?.attempts)} attempts)`);
    assert.ok(took < 900, `ended within the budget (${took.toFixed(0)} ms)`);
    await area.stop();
  });
});

describe('RemoteCommonArea trust', () => {
  it('resumes imports on an accepted beat and pauses them at once when trust is lost (401), Ready still True', async () => {
    const { leader, importer, events, area } = setup();
    area.setCredentials({ ok: true, credentials });
    await area.start();
    assert.deepEqual(importer.calls, [`resume ${leader.server}`]);
    assert.equal(area.importing, true);
    leader.failWith = Object.assign(new Error('401'), { statusCode: 401 });
    await area.beatNow();
    assert.deepEqual(importer.calls.slice(1), ['pause Unauthorized']);
    assert.equal(area.importing, false);
    assert.equal(area.getStatus().ready.status, 'True', 'hysteresis still holds Ready');
    assert.ok(events.some((e) => e.type === 'imports' && e.state === 'paused' && e.why.reason === 'Unauthorized'));
    leader.failWith = undefined;
    await area.beatNow();
    assert.equal(importer.calls.at(-1), `resume ${leader.server}`);
    assert.ok(events.some((e) => e.type === 'imports' && e.state === 'resumed'));
    await area.stop();
  });

  it('pauses imports the moment the credentials go (Secret deleted), without waiting for a beat', async () => {
    const { importer, area } = setup();
    area.setCredentials({ ok: true, credentials });
    await area.start();
    area.setCredentials({ ok: false, failure: failure(FailureReason.SecretNotFound, 'Secret ns/s not found', true) });
    assert.equal(importer.calls.at(-1), 'pause SecretNotFound');
    assert.equal(area.getStatus().ready.status, 'False');
    await area.stop();
  });

  it('a connection failure pauses imports only when Ready turns False', async () => {
    const { leader, importer, area } = setup({ intervalMs: 200, requestTimeoutMs: 150 });
    area.setCredentials({ ok: true, credentials });
    await area.start();
    leader.failWith = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    await area.beatNow();
    await area.beatNow();
    assert.deepEqual(importer.calls, [`resume ${leader.server}`], 'tolerated failures do not pause');
    await area.beatNow();
    assert.equal(area.getStatus().ready.status, 'False');
    assert.equal(importer.calls.at(-1), 'pause ConnectionFailed');
    await area.stop();
  });

  it('an announce owned by another ClusterSet is DuplicateMembership at once, and nothing is written', async () => {
    const leader = new FakeLeader();
    const { importer, area } = setup({ leader });
    leader.announces.set('member-announce-from-east', {
      apiVersion: 'multicluster.crd.antrea.io/v1alpha1', kind: 'MemberClusterAnnounce',
      metadata: { name: 'member-announce-from-east', uid: 'u', resourceVersion: '1' }, clusterID: 'east', clusterSetID: 'other', leaderClusterID: 'leader',
    });
    area.setCredentials({ ok: true, credentials });
    await area.start();
    assert.equal(area.getStatus().ready.status, 'False');
    assert.equal(area.getStatus().ready.reason, 'DuplicateMembership');
    assert.deepEqual(leader.calls, ['get member-announce-from-east']);
    assert.equal(importer.calls.at(-1), 'pause DuplicateMembership');
    await area.stop();
  });
});

describe('RemoteCommonArea 404 classification', () => {
  const notFoundPage = () => new UnexpectedResponseError(404, 'text/plain', 'expected a Kubernetes Status', '404 page not found', 'leader GET /x');

  it('a plain-text 404 from a Kubernetes API server whose discovery lacks the group is CRDNotInstalled', async () => {
    const { leader, area } = setup();
    leader.failWith = notFoundPage();
    leader.discovery = 'not-served';
    area.setCredentials({ ok: true, credentials });
    await area.start();
    const { ready } = area.getStatus();
    assert.equal(ready.reason, 'CRDNotInstalled');
    assert.match(ready.message ?? '', /does not serve memberclusterannounces\.multicluster\.crd\.antrea\.io: install the leader CRDs/);
  });

  it('a 404 page from something whose discovery is not Kubernetes stays UnexpectedResponse', async () => {
    const { leader, area } = setup();
    leader.failWith = notFoundPage();
    leader.discovery = notFoundPage();
    area.setCredentials({ ok: true, credentials });
    await area.start();
    assert.equal(area.getStatus().ready.reason, 'UnexpectedResponse', 'a 404 page that discovery does not explain');
    assert.ok(leader.calls.includes('get /apis'));
  });

  it('a 404 page while discovery lists the group stays UnexpectedResponse', async () => {
    const { leader, area } = setup();
    leader.failWith = notFoundPage();
    area.setCredentials({ ok: true, credentials });
    await area.start();
    assert.equal(area.getStatus().ready.reason, 'UnexpectedResponse');
  });
});

describe('RemoteCommonArea.leave()', () => {
  it('leaving a leader that never accepted this member sends nothing to it', async () => {
    const { leader, area } = setup();
    leader.failWith = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    area.setCredentials({ ok: true, credentials });
    await area.start();
    leader.calls.length = 0;
    assert.equal(await area.leave(), 'never-joined');
    assert.deepEqual(leader.calls, []);
  });

  it('leaving after joining deletes our announce, then removes the imports when asked', async () => {
    const { leader, importer, area } = setup();
    area.setCredentials({ ok: true, credentials });
    await area.start();
    assert.equal(await area.leave(), 'deleted');
    assert.equal(leader.announces.size, 0);
    await area.removeImports();
    assert.deepEqual(importer.calls.slice(-2), ['stop', 'leave']);
  });
});
