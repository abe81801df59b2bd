// ResilientInformer over the real client-node ListWatch, driven by a fake Watch and list
// function and a fake clock, so each failure mode of ListWatch is exercised deterministically.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type KubernetesListObject, type KubernetesObject, V1ListMeta, V1ObjectMeta } from '@kubernetes/client-node';
import {
  createListWatch,
  InformerStoppedError,
  type InformerLogger,
  ResilientInformer,
  type ResilientInformerOptions,
  setWatchTimeout,
  watchQuery,
  type WatchLike,
  MIN_WATCH_TIMEOUT_S,
} from '../../src/common/kube/informer.js';
import { FakeClock } from './fake-clock.js';

type Obj = KubernetesObject & { metadata: { name: string; resourceVersion: string } };

// client-node types metadata as classes; watch events deliver plain JSON, which the cache treats alike.
function obj(name: string, resourceVersion: string): Obj {
  const metadata = Object.assign(new V1ObjectMeta(), { name, resourceVersion });
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata };
}

/** Resolves `waitFor(n)` once `n` items have been recorded. */
class Recorder<T> {
  readonly items: T[] = [];
  #waiters: { n: number; resolve: (item: T) => void }[] = [];
  push(item: T): void {
    this.items.push(item);
    const ready = this.#waiters.filter((w) => this.items.length >= w.n);
    this.#waiters = this.#waiters.filter((w) => this.items.length < w.n);
    for (const w of ready) {
      w.resolve(item);
    }
  }
  waitFor(n: number): Promise<T> {
    const item = this.items[n - 1];
    if (item !== undefined) {
      return Promise.resolve(item);
    }
    return new Promise((resolve) => this.#waiters.push({ n, resolve }));
  }
}

interface WatchCall {
  readonly query: Record<string, unknown>;
  readonly aborted: boolean;
  emit(type: string, object: unknown): void;
  /** Ends the request the way client-node's Watch does: `done` once, `null` for a clean close. */
  end(err: unknown): void;
}

/** Stands in for client-node's Watch; `failNext` makes the next call behave like a non-200 answer or a rejection. */
class FakeWatch implements WatchLike {
  readonly calls = new Recorder<WatchCall>();
  #next: { kind: 'status' | 'reject'; err: Error } | undefined;

  failNext(kind: 'status' | 'reject', err: Error): void {
    this.#next = { kind, err };
  }

  watch(
    _path: string,
    query: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const next = this.#next;
    this.#next = undefined;
    if (next?.kind === 'reject') {
      return Promise.reject(next.err);
    }
    const controller = new AbortController();
    let ended = false;
    const end = (err: unknown): void => {
      if (!ended) {
        ended = true;
        done(err);
      }
    };
    controller.signal.addEventListener('abort', () => {
      end(new DOMException('This operation was aborted', 'AbortError'));
    });
    this.calls.push({
      query: { ...query },
      get aborted() {
        return controller.signal.aborted;
      },
      emit: (type, object) => {
        callback(type, object);
      },
      end,
    });
    if (next?.kind === 'status') {
      end(next.err);
    }
    return Promise.resolve(controller);
  }
}

/** A list function whose answers the test sets; failures are queued with `failNext`. */
class FakeList {
  items: Obj[] = [];
  resourceVersion = '1';
  readonly calls = new Recorder<number>();
  readonly #failures: unknown[] = [];
  #hold: Promise<unknown> | undefined;

  failNext(err: unknown): void {
    this.#failures.push(err);
  }

  /** The next call waits until `release` resolves. */
  holdNext(release: Promise<unknown>): void {
    this.#hold = release;
  }

  readonly list = async (): Promise<KubernetesListObject<Obj>> => {
    this.calls.push(this.calls.items.length + 1);
    const hold = this.#hold;
    this.#hold = undefined;
    if (hold !== undefined) {
      await hold;
    }
    if (this.#failures.length > 0) {
      throw this.#failures.shift();
    }
    return { apiVersion: 'v1', kind: 'List', metadata: Object.assign(new V1ListMeta(), { resourceVersion: this.resourceVersion }), items: [...this.items] };
  };
}

interface LogLine {
  readonly level: string;
  readonly message: string;
  readonly meta: Record<string, unknown>;
}

class MemoryLogger implements InformerLogger {
  readonly lines: LogLine[] = [];
  #waiters: { message: string; resolve: () => void }[] = [];
  info(message: string, meta: Record<string, unknown>): void {
    this.#log({ level: 'info', message, meta });
  }
  warn(message: string, meta: Record<string, unknown>): void {
    this.#log({ level: 'warn', message, meta });
  }
  /** Resolves once a line with this message has been logged. */
  waitFor(message: string): Promise<void> {
    if (this.lines.some((l) => l.message === message)) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push({ message, resolve }));
  }
  #log(line: LogLine): void {
    this.lines.push(line);
    const ready = this.#waiters.filter((w) => w.message === line.message);
    this.#waiters = this.#waiters.filter((w) => w.message !== line.message);
    for (const w of ready) {
      w.resolve();
    }
  }
}

function setup(extra: Partial<ResilientInformerOptions<Obj>> = {}) {
  const clock = new FakeClock();
  const watch = new FakeWatch();
  const lister = new FakeList();
  const logger = new MemoryLogger();
  const informer = new ResilientInformer<Obj>({
    name: 'configmaps',
    path: '/api/v1/namespaces/ns/configmaps',
    list: lister.list,
    watch,
    logger,
    clock,
    random: () => 0,
    ...extra,
  });
  const events: string[] = [];
  informer.on('add', (o) => events.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`));
  informer.on('update', (o) => events.push(`update ${o.metadata.name}@${o.metadata.resourceVersion}`));
  informer.on('delete', (o) => events.push(`delete ${o.metadata.name}`));
  return { clock, watch, lister, logger, informer, events };
}

const serverError = (): Error => Object.assign(new Error('Internal Server Error'), { statusCode: 500 });
const refused = (): Error =>
  new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6443'), { code: 'ECONNREFUSED' }) });

describe('ResilientInformer', () => {
  it('resumes a quiet watch that the server ended from its last bookmark, without a LIST', async () => {
    const { watch, lister, informer } = setup();
    lister.items = [obj('a', '5')];
    lister.resourceVersion = '10';
    await informer.start();
    const first = await watch.calls.waitFor(1);
    first.emit('BOOKMARK', { metadata: { resourceVersion: '42' } });
    // The server's timeoutSeconds ran out: the watch ends cleanly.
    first.end(null);
    const second = await watch.calls.waitFor(2);
    assert.equal(second.query.resourceVersion, '42', 'from the bookmark');
    assert.equal(lister.calls.items.length, 1, 'no LIST');
    assert.notEqual(second.query.timeoutSeconds, undefined);
    await informer.stop();
  });


  it('asks for a server-side timeout from the process setting to twice it (apiClient.watchTimeoutSeconds)', () => {
    try {
      setWatchTimeout(3);
      assert.deepEqual(watchQuery(() => 0), { allowWatchBookmarks: true, timeoutSeconds: 3 });
      assert.deepEqual(watchQuery(() => 0.999), { allowWatchBookmarks: true, timeoutSeconds: 5 });
      assert.throws(() => { setWatchTimeout(0); }, RangeError);
    } finally {
      setWatchTimeout(MIN_WATCH_TIMEOUT_S);
    }
    assert.equal(watchQuery(() => 0).timeoutSeconds, 300);
    assert.equal(watchQuery(() => 0.999).timeoutSeconds, 599);
  });

  it('.start() - resolves after the first list; cache and add events follow the list, watch starts from its RV', async () => {
    const { watch, lister, informer, events, logger } = setup({ labelSelector: 'app=x' });
    lister.items = [obj('a', '5'), obj('b', '6')];
    lister.resourceVersion = '10';
    assert.equal(informer.hasSynced, false);
    await informer.start();
    assert.equal(informer.hasSynced, true);
    assert.deepEqual(events, ['add a@5', 'add b@6']);
    assert.deepEqual(informer.list().map((o) => o.metadata.name).sort(), ['a', 'b']);
    assert.equal(informer.get('a')?.metadata.resourceVersion, '5');
    const call = await watch.calls.waitFor(1);
    assert.equal(call.query.resourceVersion, '10');
    assert.equal(call.query.labelSelector, 'app=x');
    assert.equal(call.query.allowWatchBookmarks, true, 'bookmarks, as client-go asks for them');
    assert.ok(typeof call.query.timeoutSeconds === 'number' && call.query.timeoutSeconds >= 300 && call.query.timeoutSeconds < 600, String(call.query.timeoutSeconds));
    call.emit('MODIFIED', obj('a', '11'));
    call.emit('DELETED', obj('b', '12'));
    assert.deepEqual(events.slice(2), ['update a@11', 'delete b']);
    assert.ok(logger.lines.some((l) => l.message === 'informer synced'));
    await informer.stop();
  });

  it('drops managedFields from listed and watched objects before caching them, unless the transform is turned off', async () => {
    const withFields = (name: string, rv: string): Obj => {
      const o = obj(name, rv);
      Object.assign(o.metadata, { managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:data': {} } }], labels: { keep: 'me' } });
      return o;
    };
    const seen: unknown[] = [];
    const stripped = setup();
    stripped.informer.on('update', (o) => seen.push(o.metadata));
    stripped.lister.items = [withFields('a', '1')];
    await stripped.informer.start();
    (await stripped.watch.calls.waitFor(1)).emit('MODIFIED', withFields('a', '2'));
    const cached = stripped.informer.get('a')?.metadata as Record<string, unknown> | undefined;
    assert.equal(cached?.resourceVersion, '2');
    assert.equal('managedFields' in (cached ?? {}), false);
    assert.deepEqual(cached?.labels, { keep: 'me' });
    assert.equal(seen.length, 1);
    assert.equal('managedFields' in (seen[0] as object), false, 'handlers see the transformed object');
    await stripped.informer.stop();

    const raw = setup({ transform: null });
    raw.lister.items = [withFields('a', '1')];
    await raw.informer.start();
    assert.equal('managedFields' in (raw.informer.get('a')?.metadata ?? {}), true);
    await raw.informer.stop();
  });

  it('a failing list is retried with growing backoff until it succeeds', async () => {
    const { clock, lister, informer, logger } = setup();
    lister.items = [obj('a', '1')];
    lister.failNext(refused());
    lister.failNext(refused());
    let synced = false;
    const started = informer.start().then(() => (synced = true));

    await clock.waitForTimers(1);
    assert.deepEqual(clock.pendingDelays(), [1000]);
    assert.equal(lister.calls.items.length, 1);
    assert.equal(informer.hasSynced, false);
    assert.ok(informer.lastError instanceof TypeError);
    const warn = logger.lines.find((l) => l.level === 'warn');
    assert.equal(warn?.meta.error, 'fetch failed: connect ECONNREFUSED 10.0.0.1:6443');

    clock.advance(999);
    assert.equal(lister.calls.items.length, 1, 'no retry before the backoff elapsed');
    clock.advance(1);
    await lister.calls.waitFor(2);
    await clock.waitForTimers(1);
    assert.deepEqual(clock.pendingDelays(), [2000], 'second failure doubles the delay');

    clock.advance(2000);
    await started;
    assert.equal(synced, true);
    assert.equal(lister.calls.items.length, 3);
    assert.equal(informer.get('a')?.metadata.resourceVersion, '1');
    await informer.stop();
  });

  it('a watch error restarts after backoff and relists, emitting deletes for vanished objects', async () => {
    const { clock, watch, lister, informer, events, logger } = setup();
    lister.items = [obj('a', '1'), obj('b', '1')];
    await informer.start();
    const first = await watch.calls.waitFor(1);

    first.end(serverError());
    assert.equal(clock.pending, 1, 'restart scheduled instead of ListWatch stopping for good');
    assert.deepEqual(clock.pendingDelays(), [1000]);
    assert.equal((informer.lastError as Error).message, 'Internal Server Error');

    lister.items = [obj('a', '2')];
    lister.resourceVersion = '7';
    clock.advance(1000);
    const second = await watch.calls.waitFor(2);
    assert.equal(lister.calls.items.length, 2, 'relisted after the failure');
    assert.equal(second.query.resourceVersion, '7');
    assert.deepEqual(events, ['add a@1', 'add b@1', 'delete b', 'update a@2']);
    // The watch counts as back once Watch.watch() has resolved (HTTP 200), just after the call.
    await logger.waitFor('informer recovered');
    assert.equal(informer.lastError, undefined, 'cleared once the watch is back');
    assert.equal(clock.pending, 0);
    await informer.stop();
  });

  it('onHealthChange: told each failure, then undefined once a watch is established again', async () => {
    const health: string[] = [];
    const { clock, watch, lister, informer, logger } = setup({ onHealthChange: (err) => { health.push(err === undefined ? 'recovered' : (err as Error).message); } });
    lister.items = [obj('a', '1')];
    await informer.start();
    const first = await watch.calls.waitFor(1);
    assert.deepEqual(health, [], 'a healthy start says nothing');
    first.end(serverError());
    assert.deepEqual(health, ['Internal Server Error']);
    clock.advance(1000);
    await watch.calls.waitFor(2);
    await logger.waitFor('informer recovered');
    assert.deepEqual(health, ['Internal Server Error', 'recovered']);
    await informer.stop();
  });

  it('backoff resets after a successful reconnect', async () => {
    const { clock, watch, lister, informer, logger } = setup();
    await informer.start();
    lister.failNext(refused());
    (await watch.calls.waitFor(1)).end(serverError());
    clock.advance(1000); // relist fails
    await clock.waitForTimers(1);
    assert.deepEqual(clock.pendingDelays(), [2000]);
    clock.advance(2000); // relist succeeds, watch established
    const third = await watch.calls.waitFor(2);
    await logger.waitFor('informer recovered');
    third.end(serverError());
    assert.deepEqual(clock.pendingDelays(), [1000]);
    await informer.stop();
  });

  it('a watch answered with HTTP 500 is restarted too', async () => {
    const { clock, watch, lister, informer } = setup();
    await informer.start();
    (await watch.calls.waitFor(1)).end(null); // clean close: ListWatch re-watches on its own
    await watch.calls.waitFor(2);
    watch.failNext('status', serverError());
    (await watch.calls.waitFor(2)).end(null);
    await clock.waitForTimers(1);
    // ListWatch's own reconnect delay (1 s) comes first, through the injected clock.
    clock.advance(1000);
    await watch.calls.waitFor(3);
    assert.deepEqual(clock.pendingDelays(), [1000], 'restart scheduled after the non-200 answer');
    assert.equal((informer.lastError as Error).message, 'Internal Server Error');
    clock.advance(1000);
    await watch.calls.waitFor(4);
    assert.equal(lister.calls.items.length, 2, 'relisted on restart');
    await informer.stop();
  });

  it('a rejected watch() call (e.g. credentials unavailable) is treated as a failure, not lost', async () => {
    const { clock, watch, lister, informer } = setup();
    watch.failNext('reject', new Error('exec plugin failed'));
    const started = informer.start();
    await started; // the list succeeded; the watch did not
    await clock.waitForTimers(1);
    assert.equal((informer.lastError as Error).message, 'exec plugin failed');
    clock.advance(1000);
    await watch.calls.waitFor(1);
    assert.equal(lister.calls.items.length, 2);
    await informer.stop();
  });

  it('410 on the watch relists at once and emits deletes for vanished objects', async () => {
    const { clock, watch, lister, informer, events } = setup();
    lister.items = [obj('a', '1'), obj('b', '1')];
    await informer.start();
    lister.items = [obj('a', '1')];
    lister.resourceVersion = '20';
    (await watch.calls.waitFor(1)).end(Object.assign(new Error('Gone'), { statusCode: 410 }));
    const second = await watch.calls.waitFor(2);
    assert.equal(lister.calls.items.length, 2);
    assert.equal(second.query.resourceVersion, '20');
    assert.deepEqual(events, ['add a@1', 'add b@1', 'delete b']);
    assert.equal(informer.lastError, undefined, '410 is not an error');

    // An ERROR event with code 410, then a clean close, relists as well.
    lister.items = [];
    second.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    second.end(null);
    await lister.calls.waitFor(3);
    await clock.waitForTimers(1); // ListWatch's own reconnect delay
    clock.advance(1000);
    await watch.calls.waitFor(3);
    assert.deepEqual(events.slice(3), ['delete a']);
    await informer.stop();
  });

  it('.stop() - closes the watch, ignores the resulting AbortError and never restarts', async () => {
    const innerErrors: unknown[] = [];
    const { clock, watch, lister, informer, events } = setup({
      listWatchFactory: (args) => {
        const inner = createListWatch(args);
        inner.on('error', (err: unknown) => innerErrors.push(err));
        return inner;
      },
    });
    lister.items = [obj('a', '1')];
    await informer.start();
    const call = await watch.calls.waitFor(1);
    await informer.stop();
    assert.equal(call.aborted, true);
    assert.equal((innerErrors[0] as Error | undefined)?.name, 'AbortError', 'precondition: ListWatch reports its stop as an error');
    assert.equal(clock.pending, 0, 'the AbortError did not schedule a restart');
    assert.equal(informer.lastError, undefined);
    call.emit('ADDED', obj('late', '2'));
    assert.deepEqual(events, ['add a@1'], 'nothing is emitted after stop');
    clock.advance(60_000);
    assert.equal(lister.calls.items.length, 1);
    assert.equal(watch.calls.items.length, 1);
  });

  it('.stop() - cancels a pending restart', async () => {
    const { clock, watch, lister, informer } = setup();
    await informer.start();
    (await watch.calls.waitFor(1)).end(serverError());
    assert.equal(clock.pending, 1);
    await informer.stop();
    assert.equal(clock.pending, 0);
    clock.advance(60_000);
    assert.equal(lister.calls.items.length, 1);
  });

  it('.stop() - before sync rejects start(), and a list finishing later opens no watch', async () => {
    const innerRuns: Promise<void>[] = [];
    const { watch, lister, informer, events } = setup({
      listWatchFactory: (args) => {
        const inner = createListWatch(args);
        const start = inner.start.bind(inner);
        inner.start = () => {
          const run = start();
          innerRuns.push(run);
          return run;
        };
        return inner;
      },
    });
    lister.items = [obj('a', '1')];
    const release = Promise.withResolvers<undefined>();
    lister.holdNext(release.promise);
    const started = informer.start();
    await lister.calls.waitFor(1);
    await informer.stop();
    await assert.rejects(started, InformerStoppedError);
    release.resolve(undefined);
    // ListWatch's start() settles after it applied the list and tried to open the watch.
    await innerRuns[0];
    assert.equal(innerRuns.length, 1);
    assert.equal(informer.list().length, 1, 'precondition: the held list was applied');
    assert.deepEqual(events, []);
    assert.equal(watch.calls.items.length, 0);
    await assert.rejects(informer.start(), InformerStoppedError);
  });

  it('resyncMs - re-emits update for every cached object, only after sync', async () => {
    const { clock, lister, informer, events } = setup({ resyncMs: 60_000 });
    lister.items = [obj('a', '1'), obj('b', '1')];
    lister.failNext(refused());
    void informer.start();
    await clock.waitForTimers(2); // resync + restart
    // The restart fires at 1 s, but its list settles only after this synchronous advance,
    // so the resync tick at 60 s finds the informer unsynced and emits nothing.
    clock.advance(60_000);
    await informer.start();
    assert.deepEqual(events, ['add a@1', 'add b@1']);
    clock.advance(60_000);
    assert.deepEqual(events.slice(2).sort(), ['update a@1', 'update b@1']);
    await informer.stop();
    assert.equal(clock.pending, 0);
  });

  it('a throwing handler is logged and does not keep other handlers from running', async () => {
    const { lister, informer, logger, events } = setup();
    informer.on('add', () => {
      throw new Error('handler bug');
    });
    const late: string[] = [];
    informer.on('add', (o) => late.push(o.metadata.name));
    lister.items = [obj('a', '1')];
    await informer.start();
    assert.deepEqual(events, ['add a@1']);
    assert.deepEqual(late, ['a']);
    const warn = logger.lines.find((l) => l.message === 'informer handler failed');
    assert.equal(warn?.meta.error, 'handler bug');
    await informer.stop();
  });

  it('rejects a non-positive resyncMs', () => {
    assert.throws(() => setup({ resyncMs: 0 }), /resyncMs/);
  });
});
