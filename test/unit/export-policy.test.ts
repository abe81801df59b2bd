import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exportAllowed, type ExportPolicy } from '../../src/exporter/export-policy.js';

const open: ExportPolicy = { enabled: true, allowedNamespaces: [], deniedNamespaces: [], agentNamespace: 'clusterset-agent' };

describe('exportAllowed', () => {
  it('allows every ordinary namespace by default', () => {
    assert.equal(exportAllowed('default', open), undefined);
    assert.equal(exportAllowed('shop', open), undefined);
  });

  it('denies the system namespaces and the agent\'s own', () => {
    for (const ns of ['kube-system', 'kube-public', 'kube-node-lease', 'clusterset-agent']) {
      assert.deepEqual(exportAllowed(ns, open), { reason: 'NamespaceDenied', message: `namespace "${ns}" is a system or agent namespace, never exported` });
    }
  });

  it('denies them even when allow-listed (config validation refuses that anyway)', () => {
    assert.equal(exportAllowed('kube-system', { ...open, allowedNamespaces: ['kube-system'] })?.reason, 'NamespaceDenied');
  });

  it('applies the deny-list, which wins over the allow-list', () => {
    const policy = { ...open, allowedNamespaces: ['shop'], deniedNamespaces: ['shop', 'legacy'] };
    assert.deepEqual(exportAllowed('shop', policy), { reason: 'NamespaceDenied', message: 'namespace "shop" is in exports.deniedNamespaces' });
    assert.equal(exportAllowed('legacy', { ...open, deniedNamespaces: ['legacy'] })?.reason, 'NamespaceDenied');
  });

  it('allows only the allow-list when it is set', () => {
    const policy = { ...open, allowedNamespaces: ['shop', 'payments'] };
    assert.equal(exportAllowed('payments', policy), undefined);
    assert.deepEqual(exportAllowed('default', policy), { reason: 'NamespaceNotAllowed', message: 'namespace "default" is not in exports.allowedNamespaces' });
  });

  it('refuses everything when exports are disabled', () => {
    assert.deepEqual(exportAllowed('default', { ...open, enabled: false }), { reason: 'ExportsDisabled', message: 'exports are disabled (exports.enabled is false)' });
  });
});
