// The published CLI runs on the Node LTS lines its dependencies allow, and refuses an older Node
// in one line with exit 2 instead of dying in the minified bundle (issue 33, item 2).
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { MINIMUM_NODE, nodeVersionProblem as problem } from '../../bin/node-version.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'bin', 'clusterset-agent.js');

async function exitOf(child: Promise<{ stderr: string }>): Promise<{ code: number; stderr: string }> {
  try {
    return { code: 0, stderr: (await child).stderr };
  } catch (err) {
    const { code, stderr } = err as { code: number; stderr: string };
    return { code, stderr };
  }
}

function compare(a: string, b: string): number {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if ((x?.[i] ?? 0) !== (y?.[i] ?? 0)) return (x?.[i] ?? 0) - (y?.[i] ?? 0);
  return 0;
}

void describe('the CLI and the Node.js that runs it', () => {
  void it('accepts the LTS lines from the dependencies\' floor on, refuses what is older, in one line', () => {
    for (const ok of ['22.19.0', '22.23.3', '24.0.0', '24.21.0', '26.1.0', 'v24.21.0']) assert.equal(problem(ok), undefined, ok);
    for (const old of ['22.18.9', '22.12.0', '20.20.2', '18.20.8', '0.0.1', 'garbage', '']) {
      const text = problem(old);
      assert.ok(text !== undefined, `${old} should be refused`);
      assert.ok(!text.includes('\n'), 'one line');
      assert.match(text, new RegExp(`needs Node\\.js ${MINIMUM_NODE.replaceAll('.', '\\.')} or newer`));
    }
  });

  void it('keeps package.json engines equal to the floor the bin enforces', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
    assert.equal(pkg.engines.node, `>=${MINIMUM_NODE}`);
  });

  void it('takes the floor from the dependencies that set one (undici, commander)', () => {
    const floors = ['undici', 'commander'].map((dep) => {
      const engines = (JSON.parse(readFileSync(path.join(root, 'node_modules', dep, 'package.json'), 'utf8')) as { engines?: { node?: string } }).engines?.node ?? '';
      return /(\d+\.\d+\.\d+)/.exec(engines)?.[1] ?? '0.0.0';
    });
    const newest = floors.reduce((a, b) => (compare(a, b) >= 0 ? a : b));
    assert.equal(newest, MINIMUM_NODE, `the floor is the newest of the dependencies' (${floors.join(', ')})`);
  });

  void it('the bin refuses an old Node with exit 2 and one line, before loading the bundle', async () => {
    // The running Node made to report 20.20.2: the bin's own check, whatever Node this machine has.
    const fake = 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"20.20.2"})';
    const res = await exitOf(run(process.execPath, ['--import', fake, bin, '--version']));
    assert.equal(res.code, 2);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.match(res.stderr, /needs Node\.js 22\.19\.0 or newer .*this is Node\.js 20\.20\.2/);
  });

  void it('a real older Node on this machine (the one outside node_modules, if older) gets the same line', async () => {
    // This kind of machine ships Node 20 as its own `node`; npm scripts run the pinned Node 24.
    const others = execFileSync('bash', ['-c', 'which -a node || true'], { encoding: 'utf8' }).split('\n').filter((p) => p !== '' && !p.includes('node_modules'));
    const versions = others.map((p) => ({ p, v: execFileSync(p, ['--version'], { encoding: 'utf8' }).trim() }));
    const old = versions.find(({ v }) => problem(v) !== undefined);
    assert.ok(old !== undefined || versions.every(({ v }) => problem(v) === undefined), 'either an older Node exists, or every Node here is supported');
    if (old === undefined) return; // every Node on the PATH is supported: the fake-version test above stands for it
    const res = await exitOf(run(old.p, [bin, '--version']));
    assert.equal(res.code, 2, `${old.p} (${old.v})`);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
  });
});
