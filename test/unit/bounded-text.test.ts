import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundList, boundText, utf8Bytes } from '../../src/common/text/bounded.js';

describe('boundText', () => {
  it('leaves text that fits alone', () => {
    assert.equal(boundText('short', 1024), 'short');
    assert.equal(boundText('é'.repeat(512), 1024), 'é'.repeat(512));
  });

  it('cuts at a code point, never inside a UTF-8 sequence, and says how many characters were left out', () => {
    for (const unit of ['a', 'é', '€', '😀']) {
      const text = unit.repeat(5000);
      const out = boundText(text, 1024);
      assert.ok(utf8Bytes(out) <= 1024, `${unit}: ${String(utf8Bytes(out))} bytes`);
      assert.ok(!out.includes('\uFFFD'), unit);
      const m = /^((?:.)*?)… and (\d+) more characters$/u.exec(out);
      assert.ok(m !== null, out.slice(-60));
      const kept = Array.from(m[1] ?? '');
      assert.ok(kept.every((c) => c === unit), unit);
      assert.equal(kept.length + Number(m[2]), 5000, unit);
      assert.ok(kept.length > 0);
    }
  });

  it('stays within a limit smaller than its own suffix', () => {
    const out = boundText('x'.repeat(100), 10);
    assert.ok(utf8Bytes(out) <= 10, out);
  });
});

describe('boundList', () => {
  it('names the first items and how many more', () => {
    assert.equal(boundList(['a', 'b'], 3, 'ports'), 'a, b');
    assert.equal(boundList(['a', 'b', 'c', 'd'], 2, 'ports'), 'a, b, … and 2 more ports');
    assert.equal(boundList(['a', 'b', 'c'], 1, 'clusters', '; '), 'a; … and 2 more clusters');
  });
});
