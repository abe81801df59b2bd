import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { credentialsFromSecret, validateServerURL } from '../../src/commonarea/credentials.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'csa-cred-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', path.join(dir, 'k'),
  '-out', path.join(dir, 'c'), '-subj', '/CN=t', '-days', '1'], { stdio: 'ignore' });
const CA = readFileSync(path.join(dir, 'c'), 'utf8');
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const ref = { namespace: 'agents', name: 'leader-token' };
const SERVER = 'https://10.1.2.3:6443';

describe('credentialsFromSecret()', () => {
  it('decodes ca.crt and token and fingerprints them', () => {
    const r = credentialsFromSecret(SERVER, ref, { data: { 'ca.crt': b64(CA), token: b64(`${TOKEN}\n`) } });
    assert.ok(r.ok);
    assert.equal(r.credentials.token, TOKEN);
    assert.equal(r.credentials.caPem, CA);
    const rotated = credentialsFromSecret(SERVER, ref, { data: { 'ca.crt': b64(CA), token: b64('other') } });
    assert.ok(rotated.ok);
    assert.notEqual(rotated.credentials.fingerprint, r.credentials.fingerprint);
  });

  it('SecretNotFound names the Secret and the keys it needs', () => {
    const r = credentialsFromSecret(SERVER, ref, undefined);
    assert.ok(!r.ok);
    assert.equal(r.failure.reason, 'SecretNotFound');
    assert.match(r.failure.message, /agents\/leader-token.*ca\.crt.*token/);
    assert.equal(r.failure.permanent, true);
  });

  it('SecretInvalid says which key is missing', () => {
    const r = credentialsFromSecret(SERVER, ref, { data: { 'ca.crt': b64(CA) } });
    assert.ok(!r.ok);
    assert.equal(r.failure.reason, 'SecretInvalid');
    assert.match(r.failure.message, /no "token" key/);
    const both = credentialsFromSecret(SERVER, ref, { data: {} });
    assert.ok(!both.ok);
    assert.match(both.failure.message, /"ca\.crt" or "token"/);
  });

  it('rejects a ca.crt that is not a certificate, without echoing secret data', () => {
    const r = credentialsFromSecret(SERVER, ref, { data: { 'ca.crt': b64('not a cert'), token: b64(TOKEN) } });
    assert.ok(!r.ok);
    assert.equal(r.failure.reason, 'SecretInvalid');
    assert.doesNotMatch(r.failure.message, /not a cert|eyJ/);
    const broken = credentialsFromSecret(SERVER, ref, { data: { 'ca.crt': b64('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), token: b64(TOKEN) } });
    assert.ok(!broken.ok);
    assert.match(broken.failure.message, /X\.509/);
  });

  it('checks the server URL before the Secret', () => {
    const r = credentialsFromSecret('http://10.1.2.3:6443', ref, undefined);
    assert.ok(!r.ok);
    assert.equal(r.failure.reason, 'InvalidServerURL');
  });
});

describe('validateServerURL()', () => {
  for (const bad of ['not a url', 'http://x:6443', 'https://', 'https://u:p@x', 'https://x/?q=1', 'ftp://x']) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      assert.equal(validateServerURL(bad)?.reason, 'InvalidServerURL');
    });
  }
  for (const good of ['https://10.0.0.1:6443', 'https://leader.example.com', 'https://[::1]:6443/prefix']) {
    it(`accepts ${good}`, () => {
      assert.equal(validateServerURL(good), undefined);
    });
  }
});
