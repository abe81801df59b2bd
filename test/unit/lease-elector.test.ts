import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeaseElector, type LeaseClient, type LeaseElectorOptions, type LeaseRecord, type ObservedLease } from '../../src/common/election/lease-elector.js';
import { FakeClock } from './fake-clock.js';
import { apiError } from './fakes/fake-leader.js';

/** One Lease "in the apiserver": bumps resourceVersion on every write, 409 on a stale one. */
class FakeLeaseServer {
  lease: ObservedLease | undefined;
  readonly calls: string[] = [];
  #rv = 0;

  #store(record: LeaseRecord): ObservedLease {
    this.#rv += 1;
    this.lease = { record: { ...record }, resourceVersion: String(this.#rv) };
    return { record: { ...record }, resourceVersion: this.lease.resourceVersion };
  }

  /** The stored record (a call, so type narrowing from earlier reads does not carry over). */
  record(): LeaseRecord | undefined {
    return this.lease?.record;
  }

  /** A write by something else (another tool, a replica with a different implementation). */
  overwrite(record: LeaseRecord): void {
    this.#store(record);
  }

  client(name: string): FakeLeaseClient {
    return new FakeLeaseClient(this, name, (record) => this.#store(record));
  }
}

class FakeLeaseClient implements LeaseClient {
  readonly description = 'ns/lease';
  /** Requests fail as if the apiserver were unreachable. */
  unreachable = false;
  /** Requests never answer (until aborted). */
  hang = false;
  /** Requests answer after this many ms on `slowClock` (unless aborted first). */
  latencyMs = 0;
  slowClock: FakeClock | undefined;
  aborted = 0;

  constructor(private readonly server: FakeLeaseServer, private readonly name: string, private readonly store: (r: LeaseRecord) => ObservedLease) {}

  async #call<T>(verb: string, signal: AbortSignal, fn: () => T): Promise<T> {
    this.server.calls.push(`${this.name} ${verb}`);
    const clock = this.slowClock;
    if (this.latencyMs > 0 && clock !== undefined) {
      await new Promise<void>((resolve, reject) => {
        const timer = clock.setTimeout(resolve, this.latencyMs);
        signal.addEventListener('abort', () => { clock.clearTimeout(timer); this.aborted += 1; reject(signal.reason as Error); }, { once: true });
      });
    }
    if (this.hang) {
      return new Promise<T>((_resolve, reject) => {
        signal.addEventListener('abort', () => { this.aborted += 1; reject(signal.reason as Error); }, { once: true });
      });
    }
    await Promise.resolve();
    if (signal.aborted) throw signal.reason as Error;
    if (this.unreachable) throw Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    return fn();
  }

  get(signal: AbortSignal): Promise<ObservedLease | undefined> {
    return this.#call('get', signal, () => this.server.lease && structuredClone(this.server.lease));
  }

  create(record: LeaseRecord, signal: AbortSignal): Promise<ObservedLease> {
    return this.#call('create', signal, () => {
      if (this.server.lease) throw apiError(409, 'AlreadyExists', 'leases.coordination.k8s.io "lease" already exists');
      return this.store(record);
    });
  }

  update(current: ObservedLease, record: LeaseRecord, signal: AbortSignal): Promise<ObservedLease> {
    return this.#call('update', signal, () => {
      if (!this.server.lease) throw apiError(404, 'NotFound', 'leases.coordination.k8s.io "lease" not found');
      if (this.server.lease.resourceVersion !== current.resourceVersion) {
        throw apiError(409, 'Conflict', 'Operation cannot be fulfilled on leases.coordination.k8s.io "lease": the object has been modified');
      }
      return this.store(record);
    });
  }
}

interface Candidate {
  readonly elector: LeaseElector;
  readonly client: FakeLeaseClient;
  readonly events: string[];
}

function setup(names: readonly string[], options: Partial<LeaseElectorOptions> = {}) {
  const clock = new FakeClock();
  clock.advance(1_000_000); // a realistic epoch, so "renewTime 0" is long ago
  const server = new FakeLeaseServer();
  const candidates = new Map<string, Candidate>();
  for (const name of names) {
    const client = server.client(name);
    const events: string[] = [];
    const elector = new LeaseElector({
      lease: client,
      identity: name,
      clock,
      onStartedLeading: () => { events.push(`started@${String(clock.now())}`); },
      onStoppedLeading: (reason) => { events.push(`stopped@${String(clock.now())}: ${reason}`); },
      ...options,
    });
    candidates.set(name, { elector, client, events });
  }
  const get = (name: string): Candidate => {
    const c = candidates.get(name);
    if (c === undefined) throw new Error(name);
    return c;
  };
  /** Moves time in 100 ms steps, letting every attempt that starts finish before the next step. */
  const run = async (ms: number, watch?: () => void) => {
    for (let elapsed = 0; elapsed < ms; elapsed += 100) {
      clock.advance(Math.min(100, ms - elapsed));
      // A slow request answers at a later step: let it register its timer, do not wait for it.
      for (const c of candidates.values()) {
        if (c.client.hang || c.client.latencyMs > 0) await new Promise(setImmediate);
        else await c.elector.settled();
      }
      watch?.();
    }
  };
  const leaders = () => [...candidates.values()].filter((c) => c.elector.isLeader).map((c) => c.elector.identity);
  return { clock, server, get, run, leaders, start: () => { for (const c of candidates.values()) c.elector.start(); } };
}

describe('LeaseElector', () => {
  it('creates a missing Lease and leads at once', async () => {
    const t = setup(['a']);
    t.start();
    await t.run(100);
    const a = t.get('a');
    assert.equal(a.elector.isLeader, true);
    assert.deepEqual(a.events, ['started@1000100']);
    assert.deepEqual(t.server.lease?.record, {
      holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: 1_000_000, renewTime: 1_000_000, leaseTransitions: 0,
    });
    assert.deepEqual(t.server.calls, ['a get', 'a create']);
  });

  it('renews every retry period with one optimistic update and no reads', async () => {
    const t = setup(['a']);
    t.start();
    await t.run(100);
    t.server.calls.length = 0;
    await t.run(10_000);
    assert.deepEqual(t.server.calls, Array<string>(5).fill('a update'));
    assert.equal(t.server.lease?.record.renewTime, 1_010_100);
    assert.equal(t.server.lease.record.acquireTime, 1_000_000, 'acquireTime is kept while renewing');
    assert.equal(t.get('a').events.length, 1);
  });

  it('two candidates: exactly one leads, the other keeps reading', async () => {
    const t = setup(['a', 'b']);
    t.start();
    await t.run(60_000, () => { assert.equal(t.leaders().length, 1); });
    assert.deepEqual(t.leaders(), ['a']);
    assert.deepEqual(t.get('b').events, []);
    assert.equal(t.get('b').elector.leader, 'a');
    assert.ok(t.server.calls.filter((c) => c.startsWith('b ')).every((c) => c === 'b get' || c === 'b create'));
  });

  it('two candidates racing for an expired lease: one wins, the other gets 409 and follows', async () => {
    const t = setup(['a', 'b']);
    t.server.overwrite({ holderIdentity: 'dead', leaseDurationSeconds: 15, renewTime: 0, acquireTime: 0, leaseTransitions: 4 });
    t.start();
    await t.run(100);
    assert.equal(t.leaders().length, 1);
    assert.deepEqual(t.server.calls, ['a get', 'b get', 'a update', 'b update']);
    assert.equal(t.server.lease?.record.leaseTransitions, 5);
    await t.run(10_000, () => { assert.equal(t.leaders().length, 1); });
  });

  it('a partitioned leader stops at renewDeadline; the follower takes over only after leaseDuration', async () => {
    const t = setup(['a', 'b']);
    t.start();
    await t.run(4_000);
    const a = t.get('a');
    const lastRenew = t.server.lease?.record.renewTime ?? 0;
    a.client.unreachable = true;
    let stoppedAt: number | undefined;
    let takenAt: number | undefined;
    await t.run(30_000, () => {
      if (stoppedAt === undefined && !a.elector.isLeader) stoppedAt = t.clock.now();
      if (takenAt === undefined && t.get('b').elector.isLeader) takenAt = t.clock.now();
      assert.ok(t.leaders().length <= 1, 'never two leaders');
    });
    assert.equal(stoppedAt, lastRenew + 10_000, 'gives up exactly renewDeadline after the last successful renewal');
    assert.match(a.events.at(-1) ?? '', /^stopped@\d+: no successful renewal within the 10s renew deadline$/);
    assert.ok(takenAt !== undefined && takenAt > lastRenew + 15_000 && takenAt <= lastRenew + 15_000 + 2_000,
      `takeover ${String((takenAt ?? 0) - lastRenew)} ms after the last renewal`);
    assert.equal(t.server.lease?.record.holderIdentity, 'b');
    assert.equal(t.server.lease.record.leaseTransitions, 1);
    // The elector is finished: it neither campaigns again nor fires callbacks twice.
    a.client.unreachable = false;
    const before = t.server.calls.length;
    await t.run(10_000);
    assert.equal(t.server.calls.slice(before).filter((c) => c.startsWith('a ')).length, 0);
    assert.equal(a.events.length, 2);
  });

  it('a leader whose requests hang still gives up at the deadline, and the hung request is aborted', async () => {
    const t = setup(['a']);
    t.start();
    await t.run(2_000);
    const a = t.get('a');
    const lastRenew = t.server.lease?.record.renewTime ?? 0;
    a.client.hang = true;
    for (let steps = 0; steps < 200 && a.elector.isLeader; steps++) {
      t.clock.advance(100);
      await Promise.resolve();
    }
    assert.equal(t.clock.now(), lastRenew + 10_000);
    await a.elector.settled();
    assert.equal(a.client.aborted, 1);
    assert.match(a.events.at(-1) ?? '', /renew deadline/);
  });

  it('a leader keeps leading when the wall clock steps a minute ahead: its deadline is timed on the monotonic clock', async () => {
    const t = setup(['a']);
    t.start();
    await t.run(2_000);
    const a = t.get('a');
    // Requests take 50 ms: a budget made negative by the step (1 ms) would abort every one.
    a.client.slowClock = t.clock;
    a.client.latencyMs = 50;
    await t.run(4_000);
    t.clock.stepWall(60_000);
    const steppedAt = t.clock.now();
    await t.run(30_000);
    assert.equal(a.elector.isLeader, true);
    assert.deepEqual(a.events, ['started@1000100']);
    assert.equal(a.client.aborted, 0);
    assert.ok((t.server.lease?.record.renewTime ?? 0) >= steppedAt + 25_000, 'renewed at the wall clock as it now reads');
  });

  it('a leader that finds another holder in the Lease stops at once', async () => {
    const t = setup(['a']);
    t.start();
    await t.run(100);
    t.server.overwrite({ holderIdentity: 'intruder', leaseDurationSeconds: 15, renewTime: t.clock.now(), acquireTime: t.clock.now(), leaseTransitions: 1 });
    await t.run(2_000);
    const a = t.get('a');
    assert.equal(a.elector.isLeader, false);
    assert.match(a.events.at(-1) ?? '', /: the lease is now held by "intruder"$/);
    assert.equal(t.server.lease?.record.holderIdentity, 'intruder', 'the Lease is left alone');
  });

  it('a leader whose Lease changed under it but is still its own keeps leading', async () => {
    const t = setup(['a']);
    t.start();
    await t.run(100);
    const record = t.server.lease?.record;
    assert.ok(record);
    t.server.overwrite({ ...record }); // e.g. someone added a label: new resourceVersion, same holder
    t.server.calls.length = 0;
    await t.run(2_000);
    assert.equal(t.get('a').elector.isLeader, true);
    assert.deepEqual(t.server.calls, ['a update', 'a get', 'a update']);
  });

  it('a leader whose Lease was deleted recreates it in the same attempt and keeps leading', async () => {
    const t = setup(['a']);
    t.start();
    await t.run(100);
    t.server.lease = undefined;
    t.server.calls.length = 0;
    await t.run(2_000);
    assert.equal(t.get('a').elector.isLeader, true);
    assert.deepEqual(t.server.calls, ['a update', 'a get', 'a create']);
    assert.equal(t.server.record()?.holderIdentity, 'a');
    assert.equal(t.get('a').events.length, 1);
  });

  it('takes over a lease whose renewTime has expired at the first attempt', async () => {
    const t = setup(['a']);
    t.server.overwrite({ holderIdentity: 'dead', leaseDurationSeconds: 15, renewTime: 1_000_000 - 15_001, acquireTime: 0, leaseTransitions: 2 });
    t.start();
    await t.run(100);
    assert.equal(t.get('a').elector.isLeader, true);
    assert.deepEqual(t.server.lease?.record, {
      holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: 1_000_000, renewTime: 1_000_000, leaseTransitions: 3,
    });
  });

  it('does not take a lease renewed less than leaseDuration ago', async () => {
    const t = setup(['a']);
    t.server.overwrite({ holderIdentity: 'alive', leaseDurationSeconds: 15, renewTime: 1_000_000 - 14_000, leaseTransitions: 0 });
    t.start();
    await t.run(100);
    assert.equal(t.get('a').elector.isLeader, false);
    assert.equal(t.get('a').elector.leader, 'alive');
    await t.run(1_000);
    assert.equal(t.get('a').elector.isLeader, false, 'renewTime + 15 s is exactly now: not yet expired');
    await t.run(2_000);
    assert.equal(t.get('a').elector.isLeader, true);
  });

  it('a Lease without renewTime expires leaseDuration after it was first seen', async () => {
    const t = setup(['a']);
    t.server.overwrite({ holderIdentity: 'other-tool', leaseDurationSeconds: 15, leaseTransitions: 0 });
    t.start();
    await t.run(14_900);
    assert.equal(t.get('a').elector.isLeader, false);
    await t.run(2_200);
    assert.equal(t.get('a').elector.isLeader, true);
  });

  it('.release() - clears the holder so the follower takes over at its next retry', async () => {
    const t = setup(['a', 'b']);
    t.start();
    await t.run(4_000);
    const a = t.get('a');
    assert.equal(await a.elector.release(), true);
    assert.equal(a.elector.isLeader, false);
    assert.equal(t.server.lease?.record.holderIdentity, '');
    assert.equal(t.server.lease.record.leaseDurationSeconds, 1);
    const releasedAt = t.clock.now();
    let takenAt: number | undefined;
    await t.run(3_000, () => { if (takenAt === undefined && t.get('b').elector.isLeader) takenAt = t.clock.now(); });
    assert.ok(takenAt !== undefined && takenAt - releasedAt <= 2_000, `takeover ${String((takenAt ?? 0) - releasedAt)} ms after release`);
    assert.equal(t.server.record()?.leaseTransitions, 1);
    assert.deepEqual(a.events, ['started@1000100'], 'a release is not a loss: onStoppedLeading is not called');
  });

  it('.release() - a follower, or a stopped elector, writes nothing', async () => {
    const t = setup(['a', 'b']);
    t.start();
    await t.run(100);
    const calls = t.server.calls.length;
    assert.equal(await t.get('b').elector.release(), true);
    assert.equal(t.server.calls.length, calls);
    await t.get('a').elector.stop();
    assert.equal(await t.get('a').elector.release(), true);
    assert.equal(t.server.calls.length, calls);
    assert.equal(t.server.lease?.record.holderIdentity, 'a', 'stop() leaves the Lease as it is, like a crash');
  });

  it('.release() - a failed write is reported, and the lease then simply expires', async () => {
    const t = setup(['a']);
    t.start();
    await t.run(100);
    t.get('a').client.unreachable = true;
    assert.equal(await t.get('a').elector.release(), false);
  });

  it('.stop() - ends campaigning without callbacks', async () => {
    const t = setup(['a', 'b']);
    t.start();
    await t.run(100);
    await t.get('b').elector.stop();
    await t.get('a').elector.stop();
    const calls = t.server.calls.length;
    await t.run(20_000);
    assert.equal(t.server.calls.length, calls);
    assert.equal(t.clock.pending, 0, 'no timers left behind');
    assert.deepEqual(t.get('a').events, ['started@1000100']);
  });

  it('keeps trying while the apiserver is unreachable and acquires when it is back', async () => {
    const t = setup(['a']);
    t.get('a').client.unreachable = true;
    t.start();
    await t.run(10_000);
    assert.equal(t.get('a').elector.isLeader, false);
    t.get('a').client.unreachable = false;
    await t.run(2_000);
    assert.equal(t.get('a').elector.isLeader, true);
  });

  it('rejects inconsistent durations, an empty identity and a second start()', () => {
    const lease = new FakeLeaseServer().client('x');
    assert.throws(() => new LeaseElector({ lease, leaseDurationSeconds: 10, renewDeadlineSeconds: 10 }), /retryPeriod \(2s\) < renewDeadline \(10s\) < leaseDuration \(10s\)/);
    assert.throws(() => new LeaseElector({ lease, renewDeadlineSeconds: 2 }), /retryPeriod/);
    assert.throws(() => new LeaseElector({ lease, identity: '' }), /identity/);
    const elector = new LeaseElector({ lease, clock: new FakeClock() });
    assert.match(elector.identity, /^.+_[0-9a-f]{16}$/);
    elector.start();
    assert.throws(() => { elector.start(); }, /only be started once/);
    void elector.stop();
  });

  it('a callback that throws is logged, not fatal', async () => {
    const errors: string[] = [];
    const t = setup(['a'], {
      onStartedLeading: () => { throw new Error('boom'); },
      logger: { debug() { /* */ }, info() { /* */ }, warn() { /* */ }, error: (m) => { errors.push(m); } },
    });
    t.start();
    await t.run(2_100);
    assert.equal(t.get('a').elector.isLeader, true);
    assert.deepEqual(errors, ['onStartedLeading failed']);
  });
});
