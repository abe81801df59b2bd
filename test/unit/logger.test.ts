import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { childLogger, createLogger, errorFields, isSensitiveKey, maskSecrets, REDACTED, redactValue } from '../../src/common/log/logger.js';

// A syntactically real JWT (header {"alg":"RS256","kid":"x"}, payload with a service-account subject).
const JWT =
  'eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6a3ViZS1zeXN0ZW06ZGVmYXVsdCJ9.c2lnbmF0dXJlLWJ5dGVz';
const OPAQUE = 'opaque-credential-7f3a9c';

interface Capture {
  readonly stream: Writable;
  readonly raw: () => string;
  readonly records: () => Record<string, unknown>[];
}

function capture(): Capture {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const raw = (): string => chunks.join('');
  return {
    stream,
    raw,
    records: () =>
      raw()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

// winston delivers through piped streams; one turn of the event loop lets every write land.
async function settle(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
}

describe('createLogger()', () => {
  it('writes one JSON object per line with timestamp, level, message and fields', async () => {
    const out = capture();
    const log = createLogger({ level: 'info', stream: out.stream });
    log.info('joined leader', { attempt: 2 });
    log.warn('heartbeat slow');
    await settle();
    const lines = out.raw().split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 2);
    const [first, second] = out.records();
    assert.equal(first?.['message'], 'joined leader');
    assert.equal(first['level'], 'info');
    assert.equal(first['attempt'], 2);
    assert.ok(!Number.isNaN(Date.parse(String(first['timestamp']))), 'timestamp must be a parseable date');
    assert.equal(second?.['level'], 'warn');
  });

  it('drops lines below the configured level', async () => {
    const out = capture();
    const log = createLogger({ level: 'warn', stream: out.stream });
    log.info('not shown');
    log.debug('not shown either');
    log.error('shown');
    await settle();
    assert.deepEqual(
      out.records().map((r) => r['message']),
      ['shown'],
    );
  });

  it('keeps the stack of an Error passed as the message or as the second argument', async () => {
    const out = capture();
    const log = createLogger({ level: 'info', stream: out.stream });
    log.error(new Error('watch closed'));
    log.error('reconcile failed', new Error('kaboom'));
    await settle();
    const [alone, withMessage] = out.records();
    assert.equal(alone?.['message'], 'watch closed');
    assert.match(String(alone['stack']), /^Error: watch closed\n\s+at /);
    assert.equal(withMessage?.['message'], 'reconcile failed kaboom');
    assert.match(String(withMessage['stack']), /^Error: kaboom\n/);
  });
});

describe('redaction in the logger', () => {
  it('never writes a credential passed under a sensitive metadata key, at any depth', async () => {
    const out = capture();
    const log = createLogger({ level: 'debug', stream: out.stream });
    log.info('connecting', {
      token: OPAQUE,
      Authorization: `Bearer ${OPAQUE}`,
      bearerToken: OPAQUE,
      password: OPAQUE,
      clientSecret: OPAQUE,
      'ca.crt': OPAQUE,
      caData: OPAQUE,
      certData: OPAQUE,
      KEYDATA: OPAQUE,
      cluster: { server: 'https://leader:6443', user: { token: OPAQUE }, extra: [{ password: OPAQUE }] },
    });
    await settle();
    assert.ok(!out.raw().includes(OPAQUE), `credential leaked: ${out.raw()}`);
    const [record] = out.records();
    assert.equal(record?.['token'], REDACTED);
    assert.equal(record['ca.crt'], REDACTED);
    assert.deepEqual(record['cluster'], { server: 'https://leader:6443', user: { token: REDACTED }, extra: [{ password: REDACTED }] });
  });

  it('masks Bearer values and JWTs inside the message, the stack and other strings', async () => {
    const out = capture();
    const log = createLogger({ level: 'debug', stream: out.stream });
    log.info(`request with Authorization: Bearer ${OPAQUE} failed`);
    log.info(`loaded token ${JWT} from secret`);
    log.error('leader rejected us', new Error(`401 for ${JWT}`));
    log.info('response', { detail: `header was bearer ${OPAQUE}` });
    await settle();
    const text = out.raw();
    assert.ok(!text.includes(OPAQUE), `Bearer value leaked: ${text}`);
    assert.ok(!text.includes(JWT.split('.')[1] ?? JWT), `JWT leaked: ${text}`);
    const messages = out.records().map((r) => r['message']);
    assert.equal(messages[0], `request with Authorization: Bearer ${REDACTED} failed`);
    assert.equal(messages[1], `loaded token ${REDACTED} from secret`);
  });

  it('does not mutate the caller’s metadata objects', async () => {
    const out = capture();
    const log = createLogger({ level: 'info', stream: out.stream });
    const user = { name: 'remote', token: OPAQUE };
    const meta = { user, note: `Bearer ${OPAQUE}` };
    log.info('building client', meta);
    await settle();
    assert.equal(user.token, OPAQUE);
    assert.equal(meta.note, `Bearer ${OPAQUE}`);
  });

  it('keeps the identity of a Secret (name, namespace, ref) but drops the data of a logged Secret object', async () => {
    const out = capture();
    const log = createLogger({ level: 'info', stream: out.stream });
    log.info('read secret', {
      secretName: 'leader-token',
      secretNamespace: 'clusterset-agent',
      object: { kind: 'Secret', metadata: { name: 'leader-token' }, data: { 'server-key': OPAQUE } },
    });
    await settle();
    const [record] = out.records();
    assert.equal(record?.['secretName'], 'leader-token');
    assert.equal(record['secretNamespace'], 'clusterset-agent');
    assert.deepEqual(record['object'], { kind: 'Secret', metadata: { name: 'leader-token' }, data: REDACTED });
    assert.ok(!out.raw().includes(OPAQUE));
  });

  it('logs an Error nested in metadata as name and message instead of {}', async () => {
    const out = capture();
    const log = createLogger({ level: 'info', stream: out.stream });
    log.warn('retrying', { err: new Error(`dial failed with ${JWT}`) });
    await settle();
    assert.deepEqual(out.records()[0]?.['err'], { name: 'Error', message: `dial failed with ${REDACTED}` });
  });

  it('survives circular metadata and does not dump Buffers', async () => {
    const out = capture();
    const log = createLogger({ level: 'info', stream: out.stream });
    const loop: Record<string, unknown> = { name: 'a' };
    loop['self'] = loop;
    log.info('odd metadata', { loop, body: Buffer.from(OPAQUE) });
    await settle();
    const [record] = out.records();
    assert.deepEqual(record?.['loop'], { name: 'a', self: '[Circular]' });
    assert.equal(record['body'], `[Buffer ${OPAQUE.length} bytes]`);
  });
});

describe('childLogger()', () => {
  it('adds clusterSet, leader and component to every line and leaves absent fields out', async () => {
    const out = capture();
    const child = childLogger(createLogger({ level: 'info', stream: out.stream }), { clusterSet: 'cs-a', leader: 'leader-1', component: 'heartbeat' });
    const partial = childLogger(createLogger({ level: 'info', stream: out.stream }), { component: 'import' });
    child.info('beat ok');
    partial.info('synced');
    await settle();
    const [full, some] = out.records();
    assert.equal(full?.['clusterSet'], 'cs-a');
    assert.equal(full['leader'], 'leader-1');
    assert.equal(full['component'], 'heartbeat');
    assert.equal(some?.['component'], 'import');
    assert.ok(!('clusterSet' in some) && !('leader' in some));
  });

  it('is redacted like its parent', async () => {
    const out = capture();
    const child = childLogger(createLogger({ level: 'info', stream: out.stream }), { clusterSet: 'cs-a' });
    child.info(`got Bearer ${OPAQUE}`, { token: OPAQUE });
    await settle();
    assert.ok(!out.raw().includes(OPAQUE));
  });
});

describe('errorFields()', () => {
  it('turns an Error into { error: message }, following causes', () => {
    const err = new Error('heartbeat failed', { cause: new Error('connect ECONNREFUSED 10.0.0.1:6443') });
    assert.deepEqual(errorFields(err), { error: 'heartbeat failed: caused by: connect ECONNREFUSED 10.0.0.1:6443' });
  });

  it('masks credentials in the message', () => {
    assert.deepEqual(errorFields(new Error(`Unauthorized: Bearer ${OPAQUE}`)), { error: `Unauthorized: Bearer ${REDACTED}` });
    assert.ok(!errorFields(new Error(JWT)).error.includes('eyJ'));
  });

  it('describes non-Error throwables without throwing', () => {
    assert.deepEqual(errorFields('plain string'), { error: 'plain string' });
    assert.deepEqual(errorFields(42), { error: '42' });
    assert.deepEqual(errorFields(undefined), { error: 'undefined' });
    assert.deepEqual(errorFields({ message: 'object with message' }), { error: 'object with message' });
    assert.deepEqual(errorFields({ code: 7, token: OPAQUE }), { error: `{"code":7,"token":"${REDACTED}"}` });
    const hostile = new Error('x');
    Object.defineProperty(hostile, 'message', {
      get() {
        throw new Error('getter exploded');
      },
    });
    assert.deepEqual(errorFields(hostile), { error: 'unprintable error' });
  });

  it('stops following a cyclic cause chain', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.defineProperty(a, 'cause', { value: b });
    assert.equal(errorFields(a).error, 'a: caused by: b: caused by: a: caused by: b');
  });

  it('uses the name of an Error with an empty message', () => {
    assert.deepEqual(errorFields(new TypeError('')), { error: 'TypeError' });
  });
});

describe('redaction helpers', () => {
  it('isSensitiveKey() matches credential names in any case or separator style but not Secret identities', () => {
    for (const key of ['token', 'Token', 'bearer_token', 'PASSWORD', 'client-secret', 'ca.crt', 'caData', 'certData', 'keyData', 'authorization']) {
      assert.equal(isSensitiveKey(key), true, key);
    }
    for (const key of ['secretName', 'secretNamespace', 'tokenSecretRef', 'server', 'clusterSet', 'message']) {
      assert.equal(isSensitiveKey(key), false, key);
    }
  });

  it('maskSecrets() leaves ordinary text alone', () => {
    const text = 'ClusterSet cs-a joined leader leader-1 at https://10.0.0.1:6443 (eyJ is just a prefix)';
    assert.equal(maskSecrets(text), text);
  });

  it('redactValue() converts objects with toJSON before redacting them', () => {
    const withToJson = { toJSON: () => ({ password: OPAQUE, ok: 1 }) };
    assert.deepEqual(redactValue({ inner: withToJson }), { inner: { password: REDACTED, ok: 1 } });
    const throwing = {
      toJSON: () => {
        throw new Error('no');
      },
    };
    assert.deepEqual(redactValue({ inner: throwing }), { inner: '[Unserialisable]' });
  });
});
