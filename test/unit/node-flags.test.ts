// The agents run without V8's TurboFan (bin/node-flags.js: ~5.5 MiB less RSS for the member
// after 2,000 imports, 3-7 MiB for the leader at 50 members); the launcher re-executes Node with
// the option for `run` and `leader run` only, once.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { AGENT_V8_OPTIONS, agentExecArgv } from '../../bin/node-flags.js';
import { IMAGE_NODE_ARGS } from '../../bench/common.js';

const run = promisify(execFile);
const bin = path.resolve(import.meta.dirname, '../../bin/clusterset-agent.js');

describe('the agents\' V8 options', () => {
  it('are added for `run` and `leader run`, after the options Node was started with', () => {
    assert.deepEqual(AGENT_V8_OPTIONS, ['--max-opt=2']);
    assert.deepEqual(agentExecArgv(['run', '--config', 'c.yaml'], ['--optimize-for-size']), ['--optimize-for-size', '--max-opt=2']);
    assert.deepEqual(agentExecArgv(['leader', 'run', '--kubeconfig', 'k'], ['--optimize-for-size']), ['--optimize-for-size', '--max-opt=2']);
  });

  it('are not added twice (the re-executed Node has them), nor over a tier its starter chose', () => {
    assert.equal(agentExecArgv(['run'], ['--optimize-for-size', '--max-opt=2']), undefined);
    assert.equal(agentExecArgv(['run'], ['--max-opt=3']), undefined);
    assert.equal(agentExecArgv(['run'], ['--jitless']), undefined);
    assert.equal(agentExecArgv(['run'], ['--no-turbofan']), undefined);
  });

  it('are not for the short commands', () => {
    for (const args of [['leader'], ['leader', 'create-member-token'], ['status'], ['join'], ['version'], [], ['--help']]) assert.equal(agentExecArgv(args, []), undefined, args.join(' '));
    assert.equal(agentExecArgv(['leader', 'run'], ['--max-opt=2']), undefined);
  });

  it('reach the agent process itself: the launcher re-executes Node with them, keeping the arguments', async () => {
    // The re-executed process reports its own options and arguments through NODE_OPTIONS'
    // --require of a one-line probe, which runs before the launcher. What follows (the bundle,
    // `run --help`) needs a build that a unit test does not make: its exit status is not judged.
    const probe = path.join(mkdtempSync(path.join(tmpdir(), 'node-flags-')), 'print-exec-argv.cjs');
    writeFileSync(probe, 'process.stdout.write(`execArgv ${JSON.stringify([process.execArgv, process.argv.slice(2)])}\\n`);\n');
    for (const args of [['run', '--help'], ['leader', 'run', '--help']]) {
      const stdout = await run(process.execPath, ['--optimize-for-size', bin, ...args], { env: { ...process.env, NODE_OPTIONS: `--require ${probe}` } })
        .then((r) => r.stdout, (err: unknown) => (err as { stdout?: string }).stdout ?? '');
      const seen = stdout.split('\n').filter((l) => l.startsWith('execArgv ')).map((l) => JSON.parse(l.slice('execArgv '.length)) as [string[], string[]]);
      assert.deepEqual(seen, [[['--optimize-for-size'], args], [['--optimize-for-size', '--max-opt=2'], args]],
        `${args.join(' ')}: started once as is, then once with the agents' options, the arguments kept`);
    }
  });

  it("are in the image's ENTRYPOINT already, so an agent in the image starts Node once (the benchmarks start it the same way)", () => {
    const dockerfile = readFileSync(path.resolve(import.meta.dirname, '../../Dockerfile'), 'utf8');
    const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
    assert.ok(entrypoint !== undefined, 'the Dockerfile has an ENTRYPOINT in exec form');
    const [node, ...rest] = JSON.parse(entrypoint) as string[];
    const nodeArgs = rest.slice(0, rest.indexOf('bin/clusterset-agent.js'));
    assert.equal(node, 'node');
    for (const option of AGENT_V8_OPTIONS) assert.ok(nodeArgs.includes(option), `${option} in ${entrypoint}`);
    assert.equal(agentExecArgv(['run'], nodeArgs), undefined);
    assert.equal(agentExecArgv(['leader', 'run'], nodeArgs), undefined);
    assert.deepEqual(IMAGE_NODE_ARGS, nodeArgs);
  });
});
