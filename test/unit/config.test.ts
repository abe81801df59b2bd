import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  type AgentConfig,
  CONFIG_ENV_VARS,
  CONFIG_FLAGS,
  CONFIG_SETTINGS,
  cidrProblem,
  ConfigError,
  DEFAULT_CONFIG,
  describeConfig,
  loadConfig,
  parseBindAddress,
} from '../../src/common/config/config.js';
import { isDnsLabel, isDnsSubdomain } from '../../src/common/api/names.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

const CONFIG_PATH = '/etc/clusterset-agent/config.yaml';

interface Inputs {
  readonly argv?: readonly string[];
  readonly env?: Record<string, string>;
  readonly file?: string;
  readonly flags?: Readonly<Record<string, string | boolean>>;
}

// Loads with an in-memory config file; the file is only offered when a test provides one.
function load(inputs: Inputs = {}): AgentConfig {
  const { file } = inputs;
  const env = { ...(file === undefined ? {} : { CSA_CONFIG: CONFIG_PATH }), ...inputs.env };
  return loadConfig({
    // The command line's own parser splits argv (src/cli/config-flags.ts); `flags` come after it.
    flags: { ...parseConfigFlags(inputs.argv ?? []), ...inputs.flags },
    env,
    readFile: (path) => {
      if (path === CONFIG_PATH && file !== undefined) return file;
      throw new Error(`ENOENT: no such file or directory, open '${path}'`);
    },
  });
}

function problemsOf(inputs: Inputs): readonly string[] {
  try {
    load(inputs);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.equal(err.name, 'ConfigError');
    for (const problem of err.problems) assert.ok(err.message.includes(problem), 'every problem must be in the message');
    return err.problems;
  }
  assert.fail('expected loadConfig to throw ConfigError');
}

function problemsOrNone(inputs: Inputs): readonly string[] {
  try {
    load(inputs);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

function assertOneProblem(inputs: Inputs, pattern: RegExp): void {
  const problems = problemsOf(inputs);
  assert.equal(problems.length, 1, `expected exactly one problem, got:\n${problems.join('\n')}`);
  assert.match(problems[0] ?? '', pattern);
}

describe('loadConfig() defaults', () => {
  it('returns DEFAULT_CONFIG when nothing is set', () => {
    const cfg = load();
    assert.deepEqual(cfg, DEFAULT_CONFIG);
    assert.equal(cfg.namespace, 'clusterset-agent');
    assert.equal(cfg.kubeconfig, undefined);
    assert.ok(!('kubeconfig' in cfg), 'absent kubeconfig must be absent, not undefined');
    assert.deepEqual(cfg.heartbeat, { intervalSeconds: 10, failureThreshold: 3, requestTimeoutSeconds: 5 });
    assert.equal(cfg.status.minWriteIntervalMs, 500);
    assert.equal(cfg.logLevel, 'info');
    assert.equal(cfg.health.bindAddress, ':8080');
    assert.equal(cfg.metrics.bindAddress, ':9090');
    assert.deepEqual(cfg.leaderElection, {
      enabled: false,
      leaseName: 'clusterset-agent',
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 10,
      retryPeriodSeconds: 2,
    });
    assert.deepEqual(cfg.imports, {
      allowedNamespaces: [],
      deniedNamespaces: [],
      alwaysDeniedNamespaces: ['kube-system', 'kube-public', 'kube-node-lease', 'clusterset-agent'],
      allowedKinds: ['ServiceImport', 'Endpoints', 'ClusterInfo'],
      maxObjectsPerLeader: 5000,
      maxObjectBytes: 262144,
      lostLeaderRetentionSeconds: 600,
      resyncSeconds: 600,
      enableLabelIdentity: false,
    });
    assert.deepEqual(cfg.exports, {
      enabled: true,
      allowedNamespaces: [],
      deniedNamespaces: [],
      alwaysDeniedNamespaces: ['kube-system', 'kube-public', 'kube-node-lease', 'clusterset-agent'],
      endpointIPType: 'ClusterIP',
      podCIDRs: [],
      resyncSeconds: 600,
    });
    assert.ok(!('serviceCIDR' in cfg.exports), 'absent serviceCIDR must be absent, not undefined');
    // One default leader namespace everywhere: join's, leave's and create-member-token's (issue 33, item 6).
    assert.deepEqual(cfg.leader, { namespace: 'antrea-multicluster', memberTimeoutSeconds: 30, staleMemberSeconds: 86400, sweepIntervalSeconds: 300, maxExportsPerMember: 10_000, maxImportBytes: 1_048_576, maxDuplicateEvents: 1000 });
    assert.equal(load({ env: { CSA_NAMESPACE: 'elsewhere' } }).leader.namespace, 'antrea-multicluster');
  });

  it('reads the leader section and rejects a stale period shorter than the member timeout', () => {
    const cfg = load({ file: 'leader:\n  namespace: antrea-multicluster\n  memberTimeoutSeconds: 20\n', env: { CSA_LEADER_STALE_MEMBER_SECONDS: '60' } });
    assert.deepEqual(cfg.leader, { namespace: 'antrea-multicluster', memberTimeoutSeconds: 20, staleMemberSeconds: 60, sweepIntervalSeconds: 300, maxExportsPerMember: 10_000, maxImportBytes: 1_048_576, maxDuplicateEvents: 1000 });
    assertOneProblem({ env: { CSA_LEADER_MEMBER_TIMEOUT: '120', CSA_LEADER_STALE_MEMBER_SECONDS: '60' } }, /^leader\.staleMemberSeconds=60 \(from env CSA_LEADER_STALE_MEMBER_SECONDS\): must be at least leader\.memberTimeoutSeconds/);
    assertOneProblem({ file: 'leader:\n  namespace: Not_A_Label\n' }, /^leader\.namespace="Not_A_Label" .*DNS-1123 label/);
  });

  it('returns a deeply frozen object', () => {
    const cfg = load();
    assert.ok(Object.isFrozen(cfg));
    assert.ok(Object.isFrozen(cfg.heartbeat));
    assert.ok(Object.isFrozen(cfg.imports.allowedKinds));
    assert.throws(() => {
      (cfg.imports.alwaysDeniedNamespaces as string[]).pop();
    }, TypeError);
  });
});

describe('loadConfig() precedence', () => {
  const file = 'heartbeat:\n  intervalSeconds: 5\nlogLevel: warn\n';

  it('file overrides defaults', () => {
    const cfg = load({ file });
    assert.equal(cfg.heartbeat.intervalSeconds, 5);
    assert.equal(cfg.logLevel, 'warn');
  });

  it('environment overrides the file', () => {
    const cfg = load({ file, env: { CSA_HEARTBEAT_INTERVAL: '15' } });
    assert.equal(cfg.heartbeat.intervalSeconds, 15);
    assert.equal(cfg.logLevel, 'warn', 'fields the environment does not set keep the file value');
  });

  it('flags override the environment', () => {
    const cfg = load({ file, env: { CSA_HEARTBEAT_INTERVAL: '15', CSA_LOG_LEVEL: 'error' }, argv: ['--heartbeat-interval', '30'] });
    assert.equal(cfg.heartbeat.intervalSeconds, 30);
    assert.equal(cfg.logLevel, 'error');
  });

  it('--config wins over CSA_CONFIG', () => {
    const read: string[] = [];
    const cfg = loadConfig({
      flags: parseConfigFlags(['--config=/from/flag.yaml']),
      env: { CSA_CONFIG: '/from/env.yaml' },
      readFile: (path) => {
        read.push(path);
        return 'logLevel: debug\n';
      },
    });
    assert.deepEqual(read, ['/from/flag.yaml']);
    assert.equal(cfg.logLevel, 'debug');
  });

  it('reads the file from disk when no reader is given', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csa-config-'));
    try {
      const path = join(dir, 'config.yaml');
      writeFileSync(path, 'namespace: from-disk\n');
      assert.equal(loadConfig({ flags: parseConfigFlags(['--config', path]), env: {} }).namespace, 'from-disk');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('treats an empty environment variable as unset', () => {
    const cfg = load({ file, env: { CSA_LOG_LEVEL: '', KUBECONFIG: '', CSA_HEARTBEAT_INTERVAL: '' } });
    assert.equal(cfg.logLevel, 'warn');
    assert.equal(cfg.heartbeat.intervalSeconds, 5);
    assert.equal(cfg.kubeconfig, undefined);
  });

  it('treats a null value in the file as unset', () => {
    const cfg = load({ file: 'kubeconfig:\nheartbeat:\nlogLevel: null\n', env: { KUBECONFIG: '/kube/config' } });
    assert.equal(cfg.kubeconfig, '/kube/config');
    assert.equal(cfg.logLevel, 'info');
  });
});

describe('loadConfig() namespace', () => {
  it('uses POD_NAMESPACE when nothing else names one, and denies imports into it', () => {
    const cfg = load({ env: { POD_NAMESPACE: 'mc-system' } });
    assert.equal(cfg.namespace, 'mc-system');
    assert.deepEqual(cfg.imports.alwaysDeniedNamespaces, ['kube-system', 'kube-public', 'kube-node-lease', 'mc-system']);
    assert.deepEqual(cfg.exports.alwaysDeniedNamespaces, ['kube-system', 'kube-public', 'kube-node-lease', 'mc-system']);
  });

  it('ranks POD_NAMESPACE below the file, the file below CSA_NAMESPACE, CSA_NAMESPACE below --namespace', () => {
    const file = 'namespace: from-file\n';
    assert.equal(load({ file, env: { POD_NAMESPACE: 'from-pod' } }).namespace, 'from-file');
    assert.equal(load({ file, env: { POD_NAMESPACE: 'from-pod', CSA_NAMESPACE: 'from-env' } }).namespace, 'from-env');
    assert.equal(load({ file, env: { CSA_NAMESPACE: 'from-env' }, argv: ['--namespace=from-flag'] }).namespace, 'from-flag');
  });

  it('rejects a name that is not a DNS-1123 label', () => {
    assertOneProblem({ argv: ['--namespace', 'Bad_NS'] }, /^namespace="Bad_NS" \(from flag --namespace\): must be a DNS-1123 label/);
  });
});

describe('loadConfig() kubeconfig', () => {
  it('takes KUBECONFIG, overridden by --kubeconfig', () => {
    assert.equal(load({ env: { KUBECONFIG: '/home/a/.kube/config' } }).kubeconfig, '/home/a/.kube/config');
    assert.equal(load({ env: { KUBECONFIG: '/a' }, argv: ['--kubeconfig', '/b'] }).kubeconfig, '/b');
  });

  it('rejects an explicitly empty path instead of silently using in-cluster config', () => {
    assertOneProblem({ argv: ['--kubeconfig='] }, /^kubeconfig="" \(from flag --kubeconfig\): must not be empty/);
  });
});

describe('heartbeat', () => {
  it('rejects an interval node-cron cannot repeat evenly, listing the allowed values and the source', () => {
    assertOneProblem(
      { argv: ['--heartbeat-interval', '7'] },
      /^heartbeat\.intervalSeconds=7 \(from flag --heartbeat-interval\): must be one of 1,2,3,4,5,6,10,12,15,20,30,60,120,180,240,300,360,600,720,900,1200,1800,3600\b/,
    );
    assertOneProblem({ file: 'heartbeat:\n  intervalSeconds: 90\n' }, /^heartbeat\.intervalSeconds=90 \(from file \/etc\/clusterset-agent\/config\.yaml line 2\): must be one of/);
  });

  it('accepts every allowed interval, including whole minutes', () => {
    for (const interval of [1, 30, 60, 120, 3600]) {
      assert.equal(load({ env: { CSA_HEARTBEAT_INTERVAL: String(interval) } }).heartbeat.intervalSeconds, interval);
    }
  });

  it('rejects a failure threshold below 1 and a non-integer threshold', () => {
    assertOneProblem({ argv: ['--failure-threshold=0'] }, /^heartbeat\.failureThreshold=0 \(from flag --failure-threshold\): must be at least 1$/);
    assertOneProblem({ env: { CSA_FAILURE_THRESHOLD: '2.5' } }, /^heartbeat\.failureThreshold="2\.5" \(from env CSA_FAILURE_THRESHOLD\): must be an integer$/);
  });

  it('derives the request timeout from the chosen interval: half of it, at most 10 s', () => {
    assert.equal(load({ argv: ['--heartbeat-interval=2'] }).heartbeat.requestTimeoutSeconds, 1);
    assert.equal(load({ argv: ['--heartbeat-interval=1', '--failure-threshold=1'] }).heartbeat.requestTimeoutSeconds, 0.5);
    assert.equal(load({ argv: ['--heartbeat-interval=60'] }).heartbeat.requestTimeoutSeconds, 10);
  });

  it('accepts an explicit fractional request timeout', () => {
    assert.equal(load({ env: { CSA_HEARTBEAT_TIMEOUT: '2.5' } }).heartbeat.requestTimeoutSeconds, 2.5);
  });

  it('rejects a request timeout that is not below interval × failureThreshold, naming all three sources', () => {
    const problems = problemsOf({ file: 'heartbeat:\n  requestTimeoutSeconds: 20\n', argv: ['--heartbeat-interval=5'], env: { CSA_FAILURE_THRESHOLD: '4' } });
    assert.equal(problems.length, 1);
    const [problem] = problems;
    assert.match(problem ?? '', /^heartbeat\.requestTimeoutSeconds=20 \(from file \S+ line 2\): must be less than .* = 20\b/);
    assert.match(problem ?? '', /heartbeat\.intervalSeconds=5 \(from flag --heartbeat-interval\)/);
    assert.match(problem ?? '', /heartbeat\.failureThreshold=4 \(from env CSA_FAILURE_THRESHOLD\)/);
    assert.equal(load({ file: 'heartbeat:\n  requestTimeoutSeconds: 19.5\n', argv: ['--heartbeat-interval=5'], env: { CSA_FAILURE_THRESHOLD: '4' } }).heartbeat.requestTimeoutSeconds, 19.5);
  });

  it('rejects a request timeout of zero', () => {
    assertOneProblem({ env: { CSA_HEARTBEAT_TIMEOUT: '0' } }, /requestTimeoutSeconds=0 \(from env CSA_HEARTBEAT_TIMEOUT\): must be greater than 0/);
  });
});

describe('loadConfig() problem reporting', () => {
  it('reports every problem from every source in one ConfigError', () => {
    const problems = problemsOf({
      argv: ['--heartbeat-interval', '7', '--log-level', 'loud'],
      env: { CSA_FAILURE_THRESHOLD: 'three' },
      file: 'status:\n  minWriteIntervalMs: -1\n',
    });
    assert.equal(problems.length, 4, problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('heartbeat.intervalSeconds=7 (from flag --heartbeat-interval)')));
    assert.ok(problems.some((p) => p.startsWith('logLevel="loud" (from flag --log-level): must be one of error, warn, info, debug')));
    assert.ok(problems.some((p) => p.startsWith('heartbeat.failureThreshold="three" (from env CSA_FAILURE_THRESHOLD): must be an integer')));
    assert.ok(problems.some((p) => p.startsWith(`status.minWriteIntervalMs=-1 (from file ${CONFIG_PATH} line 2): must be at least 0`)));
  });

  it('reports an unreadable config file with where its path came from', () => {
    assertOneProblem({ argv: ['--config', '/missing.yaml'] }, /^config file \/missing\.yaml \(from flag --config\): cannot be read: ENOENT/);
  });
});

describe('loadConfig() YAML file checks', () => {
  it('rejects an unknown key, naming its path and line and suggesting the intended key', () => {
    assertOneProblem(
      { file: 'namespace: ok\nheartbeat:\n  intervalSecond: 5\n' },
      /^heartbeat\.intervalSecond \(from file \S+ line 3\): unknown key under heartbeat; did you mean intervalSeconds\?/,
    );
    assertOneProblem({ file: 'imports:\n  allowed_kinds: [ServiceImport]\n' }, /^imports\.allowed_kinds .* did you mean allowedKinds\?/);
    assertOneProblem({ file: 'leaderElect: true\n' }, /^leaderElect \(from file \S+ line 1\): unknown key under the top level/);
  });

  it('rejects the computed alwaysDeniedNamespaces with a pointer to deniedNamespaces', () => {
    assertOneProblem({ file: 'imports:\n  alwaysDeniedNamespaces: []\n' }, /^imports\.alwaysDeniedNamespaces \(from file \S+ line 2\): computed .*use imports\.deniedNamespaces/);
  });

  it('rejects wrong types instead of coercing them', () => {
    assertOneProblem({ file: 'heartbeat:\n  failureThreshold: "3"\n' }, /^heartbeat\.failureThreshold="3" \(from file \S+ line 2\): must be an integer, got string "3"$/);
    assertOneProblem({ file: 'leaderElection:\n  enabled: yes\n' }, /^leaderElection\.enabled="yes" .*must be a boolean/);
    assertOneProblem({ file: 'namespace: 42\n' }, /^namespace=42 .*must be a string, got integer 42$/);
    assertOneProblem({ file: 'heartbeat: 10\n' }, /^heartbeat \(from file \S+ line 1\): must be a mapping, got integer 10$/);
    assertOneProblem({ file: 'imports:\n  deniedNamespaces: [a, 1]\n' }, /^imports\.deniedNamespaces=\["a",1\] .*item 1 is integer 1$/);
    assertOneProblem({ file: 'imports:\n  maxObjectBytes: 1.5\n' }, /^imports\.maxObjectBytes=1\.5 .*must be an integer, got number 1\.5$/);
    assertOneProblem({ file: '- namespace: a\n' }, /^the top level \(from file \S+ line 1\): must be a mapping, got a list$/);
  });

  it('reports YAML syntax errors with their line and ignores the broken file', () => {
    const problems = problemsOf({ file: 'namespace: from-file\nheartbeat:\n  intervalSeconds: [5\n' });
    assert.ok(problems.length >= 1);
    assert.ok(problems.every((p) => p.startsWith(`config file ${CONFIG_PATH} (from env CSA_CONFIG): YAML `)), problems.join('\n'));
    assert.ok(problems.some((p) => /at line \d+, column \d+$/.test(p)), problems.join('\n'));
  });

  it('rejects duplicate keys, which YAML would otherwise resolve silently', () => {
    assertOneProblem({ file: 'logLevel: info\nlogLevel: debug\n' }, /YAML DUPLICATE_KEY: .* at line 2, column 1$/);
  });

  it('rejects a file holding several documents', () => {
    assertOneProblem({ file: 'logLevel: info\n---\nlogLevel: debug\n' }, /YAML MULTIPLE_DOCS: the file must hold a single YAML document \(found a second one at line 2, column 1\)$/);
  });

  it('accepts an empty file and resolves aliases', () => {
    assert.deepEqual(load({ file: '' }), DEFAULT_CONFIG);
    const cfg = load({ file: 'leaderElection:\n  renewDeadlineSeconds: &ten 10\nheartbeat:\n  intervalSeconds: *ten\n' });
    assert.equal(cfg.heartbeat.intervalSeconds, 10);
    const list = load({ file: 'imports:\n  allowedNamespaces: &teams [team-a, team-b]\n' });
    assert.deepEqual(list.imports.allowedNamespaces, ['team-a', 'team-b']);
  });
});

// Through the command line's own parser (src/cli/config-flags.ts, commander): its refusals are
// what `clusterset-agent run` prints (test/integration/cli.test.ts runs the binary).
describe('loadConfig() flags', () => {
  it('rejects unknown flags and suggests the intended one', () => {
    assertOneProblem({ argv: ['--heartbeat-intervl=5'] }, /^unknown option '--heartbeat-intervl=5'\n\(Did you mean --heartbeat-interval\?\)$/);
    assertOneProblem({ argv: ['-n'] }, /^unknown option '-n'/);
  });

  it('rejects a string flag without a value and does not swallow the next flag', () => {
    assertOneProblem({ argv: ['--namespace', '--kubeconfig', '/k'] }, /argument '--kubeconfig' is invalid\. that is the flag --kubeconfig: --namespace needs a value before it$/);
    assertOneProblem({ argv: ['--log-level'] }, /^option '--log-level <level>' argument missing$/);
    assertOneProblem({ argv: ['/k'] }, /^too many arguments/);
  });

  it('accepts a value starting with - when written inline', () => {
    assert.equal(load({ argv: ['--kubeconfig=-odd-path'] }).kubeconfig, '-odd-path');
  });

  it('accepts every spelling of --leader-elect and CSA_LEADER_ELECT', () => {
    assert.equal(load({ argv: ['--leader-elect'] }).leaderElection.enabled, true);
    assert.equal(load({ argv: ['--leader-elect=true'] }).leaderElection.enabled, true);
    assert.equal(load({ argv: ['--leader-elect=false'], env: { CSA_LEADER_ELECT: 'true' } }).leaderElection.enabled, false);
    assert.equal(load({ argv: ['--no-leader-elect'], env: { CSA_LEADER_ELECT: 'TRUE' } }).leaderElection.enabled, false);
    assert.equal(load({ env: { CSA_LEADER_ELECT: 'True' } }).leaderElection.enabled, true);
    assertOneProblem({ env: { CSA_LEADER_ELECT: 'yes' } }, /^leaderElection\.enabled="yes" \(from env CSA_LEADER_ELECT\): must be true or false$/);
    assertOneProblem({ argv: ['--leader-elect=1'] }, /^leaderElection\.enabled="1" \(from flag --leader-elect\): must be true or false$/);
  });

  it('rejects negating a flag that takes a value', () => {
    assertOneProblem({ argv: ['--no-namespace'] }, /^unknown option '--no-namespace'/);
  });

  it('lets a later occurrence of a flag win', () => {
    assert.equal(load({ argv: ['--log-level=debug', '--log-level=error'] }).logLevel, 'error');
  });
});

describe('loadConfig() flags from a command-line parser', () => {
  it('takes already-split flags above the environment, naming each flag as the source', () => {
    const cfg = load({ env: { CSA_HEARTBEAT_INTERVAL: '15', CSA_LEADER_ELECT: 'true' }, flags: { 'heartbeat-interval': '30', 'leader-elect': false, namespace: 'ns-a' } });
    assert.equal(cfg.heartbeat.intervalSeconds, 30);
    assert.equal(cfg.leaderElection.enabled, false);
    assert.equal(cfg.namespace, 'ns-a');
    assert.equal(load({ flags: { 'leader-elect': true } }).leaderElection.enabled, true);
    assert.equal(load({ flags: { 'leader-elect': 'TRUE' } }).leaderElection.enabled, true);
    assertOneProblem({ flags: { 'failure-threshold': '0' } }, /^heartbeat\.failureThreshold=0 \(from flag --failure-threshold\): must be at least 1$/);
  });

  it('applies them after argv, and reads --config from them', () => {
    assert.equal(load({ argv: ['--log-level=debug'], flags: { 'log-level': 'warn' } }).logLevel, 'warn');
    const read: string[] = [];
    const cfg = loadConfig({ flags: { config: '/from/parser.yaml' }, env: {}, readFile: (path) => { read.push(path); return 'logLevel: error\n'; } });
    assert.deepEqual(read, ['/from/parser.yaml']);
    assert.equal(cfg.logLevel, 'error');
  });

  it('reports a flag it does not know, a value flag without a value and a negated value flag', () => {
    const problems = problemsOf({ flags: { 'heartbeat-intervl': '5', namespace: true, kubeconfig: false } });
    assert.deepEqual(problems, [
      'flag --heartbeat-intervl: unknown flag; did you mean --heartbeat-interval? (known: --config, --namespace, --kubeconfig, --heartbeat-interval, --failure-threshold, --log-level, --health-bind-address, --metrics-bind-address, --leader-elect)',
      'flag --namespace: requires a value',
      'flag --no-kubeconfig: --kubeconfig takes a value and cannot be negated',
    ]);
  });
});

describe('CONFIG_SETTINGS', () => {
  it('describes every flag with its environment variable and default, for --help', () => {
    const withFlags = CONFIG_SETTINGS.filter((s) => s.flag !== undefined);
    assert.deepEqual(withFlags.map((s) => s.flag), [...CONFIG_FLAGS]);
    const interval = CONFIG_SETTINGS.find((s) => s.flag === 'heartbeat-interval');
    assert.deepEqual([interval?.path, interval?.env, interval?.defaultText, interval?.flagValue], ['heartbeat.intervalSeconds', 'CSA_HEARTBEAT_INTERVAL', '10', 'seconds']);
    const namespace = CONFIG_SETTINGS.find((s) => s.flag === 'namespace');
    assert.deepEqual([namespace?.env, namespace?.fallbackEnv, namespace?.defaultText], ['CSA_NAMESPACE', 'POD_NAMESPACE', 'clusterset-agent']);
    assert.equal(CONFIG_SETTINGS.find((s) => s.flag === 'leader-elect')?.boolean, true);
    assert.equal(CONFIG_SETTINGS.find((s) => s.flag === 'config')?.env, 'CSA_CONFIG');
    for (const setting of CONFIG_SETTINGS) {
      assert.ok(setting.description.length > 0, setting.env);
      if (setting.path !== undefined) assert.ok(setting.defaultText !== undefined && setting.defaultText !== '', setting.path);
    }
  });
});

describe('loadConfig() names and lists', () => {
  const samples = ['a', 'team-a', 'a1', '1a', '-a', 'a-', 'A', 'a_b', 'a.b', 'a..b', '.a', 'a.b-c.d', 'x'.repeat(63), 'x'.repeat(64), `${'x'.repeat(63)}.${'y'.repeat(63)}`, 'x'.repeat(254), ''];

  it('accepts exactly the names src/common/api/names.ts accepts (the chart schema uses the same patterns)', () => {
    for (const name of samples) {
      const asNamespace = problemsOrNone({ env: { CSA_EXPORT_DENIED_NAMESPACES: name === '' ? ',' : name } });
      if (name !== '') assert.equal(asNamespace.length === 0, isDnsLabel(name), `namespace ${JSON.stringify(name)}: ${asNamespace.join('; ')}`);
      const asLease = problemsOrNone({ file: `leaderElection:\n  leaseName: ${JSON.stringify(name)}\n` });
      assert.equal(asLease.length === 0, isDnsSubdomain(name), `lease ${JSON.stringify(name)}: ${asLease.join('; ')}`);
    }
  });

  it('rejects a list naming the same item twice', () => {
    assertOneProblem({ env: { CSA_IMPORT_DENIED_NAMESPACES: 'a,b,a' } }, /^imports\.deniedNamespaces=\["a","b","a"\] \(from env CSA_IMPORT_DENIED_NAMESPACES\): lists "a" more than once$/);
    assertOneProblem({ file: 'imports:\n  allowedKinds: [Endpoints, Endpoints]\n' }, /^imports\.allowedKinds=.*: lists "Endpoints" more than once$/);
  });
});

describe('loadConfig() bind addresses', () => {
  it('accepts host:port forms and 0 to disable metrics, also as a bare YAML number', () => {
    const cfg = load({ argv: ['--health-bind-address=127.0.0.1:8081', '--metrics-bind-address=0'] });
    assert.equal(cfg.health.bindAddress, '127.0.0.1:8081');
    assert.equal(cfg.metrics.bindAddress, '0');
    assert.equal(load({ file: 'metrics:\n  bindAddress: 0\n' }).metrics.bindAddress, '0');
    assert.equal(load({ env: { CSA_HEALTH_BIND_ADDRESS: '[::1]:8080' } }).health.bindAddress, '[::1]:8080');
  });

  it('rejects malformed addresses, and 0 for health', () => {
    assertOneProblem({ argv: ['--health-bind-address=0'] }, /^health\.bindAddress="0" \(from flag --health-bind-address\): must be \[host\]:port/);
    assertOneProblem({ env: { CSA_METRICS_BIND_ADDRESS: ':99999' } }, /^metrics\.bindAddress=":99999" \(from env CSA_METRICS_BIND_ADDRESS\)/);
    assertOneProblem({ file: 'health:\n  bindAddress: "8080"\n' }, /^health\.bindAddress="8080" /);
  });

  it('parseBindAddress() splits host and port', () => {
    assert.deepEqual(parseBindAddress(':8080'), { port: 8080 });
    assert.deepEqual(parseBindAddress('0.0.0.0:9090'), { host: '0.0.0.0', port: 9090 });
    assert.deepEqual(parseBindAddress('[::1]:0'), { host: '::1', port: 0 });
    assert.deepEqual(parseBindAddress('localhost:65535'), { host: 'localhost', port: 65535 });
    for (const bad of ['8080', ':65536', '::1:8080', 'host:', 'host:port', ' :8080']) assert.equal(parseBindAddress(bad), undefined, bad);
  });
});

describe('loadConfig() leader election', () => {
  it('requires renewDeadline < leaseDuration and retryPeriod < renewDeadline', () => {
    assertOneProblem(
      { env: { CSA_LEADER_ELECT_RENEW_DEADLINE: '15' } },
      /^leaderElection\.renewDeadlineSeconds=15 \(from env CSA_LEADER_ELECT_RENEW_DEADLINE\): must be less than leaderElection\.leaseDurationSeconds.*leaseDurationSeconds=15 \(from default\)/,
    );
    assertOneProblem({ file: 'leaderElection:\n  retryPeriodSeconds: 10\n' }, /^leaderElection\.retryPeriodSeconds=10 \(from file \S+ line 2\): must be less than leaderElection\.renewDeadlineSeconds/);
    const cfg = load({ file: 'leaderElection:\n  leaseDurationSeconds: 60\n  renewDeadlineSeconds: 40\n  retryPeriodSeconds: 5\n' });
    assert.deepEqual([cfg.leaderElection.leaseDurationSeconds, cfg.leaderElection.renewDeadlineSeconds, cfg.leaderElection.retryPeriodSeconds], [60, 40, 5]);
  });

  it('requires a valid Lease name', () => {
    assertOneProblem({ env: { CSA_LEADER_ELECT_LEASE_NAME: 'Not_A_Name' } }, /^leaderElection\.leaseName="Not_A_Name" .*DNS-1123 subdomain/);
    assert.equal(load({ env: { CSA_LEADER_ELECT_LEASE_NAME: 'agent.lock' } }).leaderElection.leaseName, 'agent.lock');
  });
});

describe('loadConfig() import policy', () => {
  it('parses comma-separated namespace lists from the environment', () => {
    const cfg = load({ env: { CSA_IMPORT_ALLOWED_NAMESPACES: ' team-a, team-b ,,', CSA_IMPORT_DENIED_NAMESPACES: 'legacy' } });
    assert.deepEqual(cfg.imports.allowedNamespaces, ['team-a', 'team-b']);
    assert.deepEqual(cfg.imports.deniedNamespaces, ['legacy']);
  });

  it('rejects allowing a namespace that is always denied, including the agent’s own', () => {
    assertOneProblem({ env: { CSA_NAMESPACE: 'mc', CSA_IMPORT_ALLOWED_NAMESPACES: 'team-a,mc' } }, /^imports\.allowedNamespaces=\["team-a","mc"\] \(from env CSA_IMPORT_ALLOWED_NAMESPACES\): mc can never receive imports/);
    assertOneProblem({ file: 'imports:\n  allowedNamespaces: [kube-system]\n' }, /kube-system can never receive imports/);
  });

  it('rejects a namespace both allowed and denied, and invalid names', () => {
    assertOneProblem({ file: 'imports:\n  allowedNamespaces: [a, b]\n  deniedNamespaces: [b]\n' }, /^imports\.allowedNamespaces=.*: b also listed in imports\.deniedNamespaces \(imports\.deniedNamespaces=\["b"\] \(from file \S+ line 3\)\)$/);
    assertOneProblem({ env: { CSA_IMPORT_DENIED_NAMESPACES: 'ok,Not_OK' } }, /^imports\.deniedNamespaces=.*"Not_OK" is not a valid namespace name$/);
  });

  it('restricts allowedKinds to the importable kinds and rejects an empty list', () => {
    assertOneProblem({ env: { CSA_IMPORT_ALLOWED_KINDS: 'ServiceImport,ServiceExport' } }, /^imports\.allowedKinds=.*unknown kind ServiceExport; allowed: ServiceImport, Endpoints, ClusterInfo, AntreaClusterNetworkPolicy, LabelIdentity$/);
    assertOneProblem({ file: 'imports:\n  allowedKinds: []\n' }, /^imports\.allowedKinds=\[\] .*must list at least one/);
    assert.deepEqual(load({ env: { CSA_IMPORT_ALLOWED_KINDS: 'ServiceImport,AntreaClusterNetworkPolicy' } }).imports.allowedKinds, ['ServiceImport', 'AntreaClusterNetworkPolicy']);
  });

  it('adds LabelIdentity to the default kinds when enableLabelIdentity is on', () => {
    const cfg = load({ env: { CSA_IMPORT_ENABLE_LABEL_IDENTITY: 'true' } });
    assert.equal(cfg.imports.enableLabelIdentity, true);
    assert.deepEqual(cfg.imports.allowedKinds, ['ServiceImport', 'Endpoints', 'ClusterInfo', 'LabelIdentity']);
  });

  it('rejects contradictions between allowedKinds and enableLabelIdentity', () => {
    assertOneProblem({ file: 'imports:\n  allowedKinds: [LabelIdentity]\n' }, /^imports\.allowedKinds=\["LabelIdentity"\] .*imports\.enableLabelIdentity is false/);
    assertOneProblem({ file: 'imports:\n  allowedKinds: [ServiceImport]\n  enableLabelIdentity: true\n' }, /^imports\.enableLabelIdentity=true .*does not list LabelIdentity/);
  });

  it('validates the numeric limits', () => {
    const problems = problemsOf({ file: 'imports:\n  maxObjectsPerLeader: 0\n  maxObjectBytes: 0\n  lostLeaderRetentionSeconds: -5\n' });
    assert.deepEqual(
      problems.map((p) => p.split(' ')[0]),
      ['imports.maxObjectsPerLeader=0', 'imports.maxObjectBytes=0', 'imports.lostLeaderRetentionSeconds=-5'],
    );
    assert.equal(load({ env: { CSA_IMPORT_LOST_LEADER_RETENTION_SECONDS: '0' } }).imports.lostLeaderRetentionSeconds, 0);
    assert.deepEqual(problemsOf({ env: { CSA_IMPORT_RESYNC_SECONDS: '1' } }).map((p) => p.split(' ')[0]), ['imports.resyncSeconds=1']);
  });
});

describe('loadConfig() export policy', () => {
  it('reads every export field from the file', () => {
    const cfg = load({
      file: [
        'exports:',
        '  enabled: false',
        '  allowedNamespaces: [team-a, team-b]',
        '  deniedNamespaces: [legacy]',
        '  endpointIPType: PodIP',
        '  serviceCIDR: 10.96.0.0/12',
        '  podCIDRs: [10.244.0.0/16, "fd00:10:244::/56"]',
        '  resyncSeconds: 120',
        '',
      ].join('\n'),
    });
    assert.deepEqual(cfg.exports, {
      enabled: false,
      allowedNamespaces: ['team-a', 'team-b'],
      deniedNamespaces: ['legacy'],
      alwaysDeniedNamespaces: ['kube-system', 'kube-public', 'kube-node-lease', 'clusterset-agent'],
      endpointIPType: 'PodIP',
      serviceCIDR: '10.96.0.0/12',
      podCIDRs: ['10.244.0.0/16', 'fd00:10:244::/56'],
      resyncSeconds: 120,
    });
  });

  it('parses comma-separated lists from the environment, which overrides the file', () => {
    const cfg = load({
      file: 'exports:\n  podCIDRs: [10.1.0.0/16]\n  endpointIPType: PodIP\n',
      env: {
        CSA_EXPORT_ALLOWED_NAMESPACES: ' team-a, team-b ,,', CSA_EXPORT_DENIED_NAMESPACES: 'legacy',
        CSA_EXPORT_POD_CIDRS: '10.244.0.0/16, 10.245.0.0/16', CSA_EXPORT_ENDPOINT_IP_TYPE: 'ClusterIP',
      },
    });
    assert.deepEqual(cfg.exports.allowedNamespaces, ['team-a', 'team-b']);
    assert.deepEqual(cfg.exports.deniedNamespaces, ['legacy']);
    assert.deepEqual(cfg.exports.podCIDRs, ['10.244.0.0/16', '10.245.0.0/16']);
    assert.equal(cfg.exports.endpointIPType, 'ClusterIP');
  });

  it('is independent of the import policy', () => {
    const cfg = load({ env: { CSA_IMPORT_DENIED_NAMESPACES: 'team-a', CSA_EXPORT_ALLOWED_NAMESPACES: 'team-a' } });
    assert.deepEqual(cfg.imports.deniedNamespaces, ['team-a']);
    assert.deepEqual(cfg.imports.allowedNamespaces, []);
    assert.deepEqual(cfg.exports.allowedNamespaces, ['team-a']);
    assert.deepEqual(cfg.exports.deniedNamespaces, []);
  });

  it('rejects allowing a namespace that is always denied, including the agent’s own', () => {
    assertOneProblem({ env: { CSA_NAMESPACE: 'mc', CSA_EXPORT_ALLOWED_NAMESPACES: 'team-a,mc' } }, /^exports\.allowedNamespaces=\["team-a","mc"\] \(from env CSA_EXPORT_ALLOWED_NAMESPACES\): mc can never be exported from \(always denied: kube-system, kube-public, kube-node-lease, mc\)$/);
    assertOneProblem({ file: 'exports:\n  allowedNamespaces: [kube-system]\n' }, /^exports\.allowedNamespaces=\["kube-system"\] \(from file \S+ line 2\): kube-system can never be exported from/);
  });

  it('rejects a namespace both allowed and denied, and invalid names', () => {
    assertOneProblem({ file: 'exports:\n  allowedNamespaces: [a, b]\n  deniedNamespaces: [b]\n' }, /^exports\.allowedNamespaces=.*: b also listed in exports\.deniedNamespaces \(exports\.deniedNamespaces=\["b"\] \(from file \S+ line 3\)\)$/);
    assertOneProblem({ env: { CSA_EXPORT_DENIED_NAMESPACES: 'ok,Not_OK' } }, /^exports\.deniedNamespaces=.*\(from env CSA_EXPORT_DENIED_NAMESPACES\): "Not_OK" is not a valid namespace name$/);
    assertOneProblem({ env: { CSA_EXPORT_ALLOWED_NAMESPACES: 'a.b,-x' } }, /^exports\.allowedNamespaces=.*: "a\.b", "-x" are not valid namespace names$/);
  });

  it('rejects the computed alwaysDeniedNamespaces with a pointer to deniedNamespaces', () => {
    assertOneProblem({ file: 'exports:\n  alwaysDeniedNamespaces: []\n' }, /^exports\.alwaysDeniedNamespaces \(from file \S+ line 2\): computed .*use exports\.deniedNamespaces/);
  });

  it('restricts endpointIPType to ClusterIP and PodIP, case-sensitively', () => {
    assert.equal(load({ env: { CSA_EXPORT_ENDPOINT_IP_TYPE: 'PodIP' } }).exports.endpointIPType, 'PodIP');
    assertOneProblem({ env: { CSA_EXPORT_ENDPOINT_IP_TYPE: 'podip' } }, /^exports\.endpointIPType="podip" \(from env CSA_EXPORT_ENDPOINT_IP_TYPE\): must be one of ClusterIP, PodIP$/);
    assertOneProblem({ file: 'exports:\n  endpointIPType: NodeIP\n' }, /^exports\.endpointIPType="NodeIP" \(from file \S+ line 2\): must be one of ClusterIP, PodIP$/);
  });

  it('validates serviceCIDR, naming the network meant when host bits are set', () => {
    assert.equal(load({ env: { CSA_EXPORT_SERVICE_CIDR: 'fd00:10:96::/108' } }).exports.serviceCIDR, 'fd00:10:96::/108');
    assertOneProblem({ env: { CSA_EXPORT_SERVICE_CIDR: '10.96.0.1/12' } }, /^exports\.serviceCIDR="10\.96\.0\.1\/12" \(from env CSA_EXPORT_SERVICE_CIDR\): has bits set after the \/12 prefix; did you mean 10\.96\.0\.0\/12\?$/);
    assertOneProblem({ file: 'exports:\n  serviceCIDR: 10.96.0.0\n' }, /^exports\.serviceCIDR="10\.96\.0\.0" \(from file \S+ line 2\): must be a CIDR such as/);
    assertOneProblem({ file: 'exports:\n  serviceCIDR: ""\n' }, /^exports\.serviceCIDR="" .*must not be empty; leave it unset/);
    assertOneProblem({ file: 'exports:\n  serviceCIDR: [10.96.0.0/12]\n' }, /^exports\.serviceCIDR=\["10\.96\.0\.0\/12"\] .*must be a string, got a list$/);
    // An empty environment variable is unset, as everywhere else.
    assert.ok(!('serviceCIDR' in load({ env: { CSA_EXPORT_SERVICE_CIDR: '' } }).exports));
  });

  it('validates every podCIDR and reports all bad ones in one problem', () => {
    assertOneProblem(
      { env: { CSA_EXPORT_POD_CIDRS: '10.244.0.0/16,10.245.1.0/16,pods,10.0.0.0/33' } },
      /^exports\.podCIDRs=.*\(from env CSA_EXPORT_POD_CIDRS\): "10\.245\.1\.0\/16" has bits set after the \/16 prefix; did you mean 10\.245\.0\.0\/16\?; "pods" must be a CIDR such as .*; "10\.0\.0\.0\/33" must have a prefix length of at most 32 for an IPv4 address$/,
    );
    assertOneProblem({ file: 'exports:\n  podCIDRs: 10.244.0.0/16\n' }, /^exports\.podCIDRs="10\.244\.0\.0\/16" .*must be a list of strings/);
  });

  it('rejects a non-boolean enabled', () => {
    assertOneProblem({ env: { CSA_EXPORT_ENABLED: 'no' } }, /^exports\.enabled="no" \(from env CSA_EXPORT_ENABLED\): must be true or false$/);
    assertOneProblem({ file: 'exports:\n  enabled: "false"\n' }, /^exports\.enabled="false" .*must be a boolean, got string "false"$/);
  });

  it('reports an unknown export key with a suggestion', () => {
    assertOneProblem({ file: 'exports:\n  podCIDR: [10.0.0.0/8]\n' }, /^exports\.podCIDR \(from file \S+ line 2\): unknown key under exports; did you mean podCIDRs\?/);
  });
});

describe('cidrProblem()', () => {
  it('accepts IPv4 and IPv6 networks without host bits', () => {
    for (const good of ['10.96.0.0/12', '0.0.0.0/0', '192.168.1.7/32', 'fd00:10:96::/108', '::/0', '2001:db8::1/128', '::ffff:10.0.0.0/104']) {
      assert.equal(cidrProblem(good), undefined, good);
    }
  });

  it('rejects malformed CIDRs, out-of-range prefixes and host bits', () => {
    for (const bad of ['10.96.0.0', '10.96.0.0/', '/12', '10.96.0.0/012', '10.96.0.0/+12', '010.96.0.0/12', '10.96.0/12', 'fe80::%eth0/64', 'fe80::/64/1', ' 10.0.0.0/8']) {
      assert.match(cidrProblem(bad) ?? '', /^must be a CIDR such as/, bad);
    }
    assert.equal(cidrProblem('::/129'), 'must have a prefix length of at most 128 for an IPv6 address');
    assert.equal(cidrProblem('2001:db8:0:0:1::1/64'), 'has bits set after the /64 prefix; did you mean 2001:db8::/64?');
    assert.equal(cidrProblem('::ffff:10.1.2.3/104'), 'has bits set after the /104 prefix; did you mean ::ffff:a00:0/104?');
  });
});

describe('documented environment variables and flags', () => {
  // Each documented variable with a value different from the default and where it must land.
  const ENV_CASES: readonly (readonly [string, string, (cfg: AgentConfig) => unknown, unknown])[] = [
    ['CSA_NAMESPACE', 'mc-a', (c) => c.namespace, 'mc-a'],
    ['POD_NAMESPACE', 'mc-b', (c) => c.namespace, 'mc-b'],
    ['KUBECONFIG', '/k', (c) => c.kubeconfig, '/k'],
    ['CSA_HEARTBEAT_INTERVAL', '20', (c) => c.heartbeat.intervalSeconds, 20],
    ['CSA_FAILURE_THRESHOLD', '5', (c) => c.heartbeat.failureThreshold, 5],
    ['CSA_HEARTBEAT_TIMEOUT', '3', (c) => c.heartbeat.requestTimeoutSeconds, 3],
    ['CSA_STATUS_MIN_WRITE_INTERVAL_MS', '0', (c) => c.status.minWriteIntervalMs, 0],
    ['CSA_LOG_LEVEL', 'debug', (c) => c.logLevel, 'debug'],
    ['CSA_HEALTH_BIND_ADDRESS', ':18080', (c) => c.health.bindAddress, ':18080'],
    ['CSA_METRICS_BIND_ADDRESS', '0', (c) => c.metrics.bindAddress, '0'],
    ['CSA_LEADER_ELECT', 'true', (c) => c.leaderElection.enabled, true],
    ['CSA_LEADER_ELECT_LEASE_NAME', 'other', (c) => c.leaderElection.leaseName, 'other'],
    ['CSA_LEADER_ELECT_LEASE_DURATION', '30', (c) => c.leaderElection.leaseDurationSeconds, 30],
    ['CSA_LEADER_ELECT_RENEW_DEADLINE', '12', (c) => c.leaderElection.renewDeadlineSeconds, 12],
    ['CSA_LEADER_ELECT_RETRY_PERIOD', '3', (c) => c.leaderElection.retryPeriodSeconds, 3],
    ['CSA_LEADER_MAX_EXPORTS_PER_MEMBER', '50', (c) => c.leader.maxExportsPerMember, 50],
    ['CSA_LEADER_MAX_IMPORT_BYTES', '65536', (c) => c.leader.maxImportBytes, 65_536],
    ['CSA_LEADER_MAX_DUPLICATE_EVENTS', '10', (c) => c.leader.maxDuplicateEvents, 10],
    ['CSA_IMPORT_ALLOWED_NAMESPACES', 'team-a', (c) => c.imports.allowedNamespaces, ['team-a']],
    ['CSA_IMPORT_DENIED_NAMESPACES', 'team-b', (c) => c.imports.deniedNamespaces, ['team-b']],
    ['CSA_IMPORT_ALLOWED_KINDS', 'Endpoints', (c) => c.imports.allowedKinds, ['Endpoints']],
    ['CSA_IMPORT_MAX_OBJECTS_PER_LEADER', '10', (c) => c.imports.maxObjectsPerLeader, 10],
    ['CSA_IMPORT_MAX_OBJECT_BYTES', '1024', (c) => c.imports.maxObjectBytes, 1024],
    ['CSA_IMPORT_LOST_LEADER_RETENTION_SECONDS', '60', (c) => c.imports.lostLeaderRetentionSeconds, 60],
    ['CSA_IMPORT_RESYNC_SECONDS', '30', (c) => c.imports.resyncSeconds, 30],
    ['CSA_EXPORT_ENABLED', 'false', (c) => c.exports.enabled, false],
    ['CSA_EXPORT_ALLOWED_NAMESPACES', 'team-a', (c) => c.exports.allowedNamespaces, ['team-a']],
    ['CSA_EXPORT_DENIED_NAMESPACES', 'team-b', (c) => c.exports.deniedNamespaces, ['team-b']],
    ['CSA_EXPORT_ENDPOINT_IP_TYPE', 'PodIP', (c) => c.exports.endpointIPType, 'PodIP'],
    ['CSA_EXPORT_SERVICE_CIDR', '10.96.0.0/12', (c) => c.exports.serviceCIDR, '10.96.0.0/12'],
    ['CSA_EXPORT_POD_CIDRS', '10.244.0.0/16', (c) => c.exports.podCIDRs, ['10.244.0.0/16']],
    ['CSA_EXPORT_RESYNC_SECONDS', '30', (c) => c.exports.resyncSeconds, 30],
    ['CSA_LEADER_NAMESPACE', 'antrea-multicluster', (c) => c.leader.namespace, 'antrea-multicluster'],
    ['CSA_LEADER_MEMBER_TIMEOUT', '20', (c) => c.leader.memberTimeoutSeconds, 20],
    ['CSA_LEADER_STALE_MEMBER_SECONDS', '3600', (c) => c.leader.staleMemberSeconds, 3600],
    ['CSA_LEADER_SWEEP_INTERVAL_SECONDS', '60', (c) => c.leader.sweepIntervalSeconds, 60],
    ['CSA_KUBE_API_QPS', '0', (c) => c.apiClient.qps, 0],
    ['CSA_KUBE_API_BURST', '10', (c) => c.apiClient.burst, 10],
    ['CSA_LEADER_API_QPS', '2.5', (c) => c.apiClient.leaderQPS, 2.5],
    ['CSA_LEADER_API_BURST', '5', (c) => c.apiClient.leaderBurst, 5],
    ['CSA_WATCH_TIMEOUT_SECONDS', '3', (c) => c.apiClient.watchTimeoutSeconds, 3],
  ];

  it('honours each documented environment variable', () => {
    for (const [name, value, get, expected] of ENV_CASES) {
      assert.deepEqual(get(load({ env: { [name]: value } })), expected, name);
    }
    // The last documented variable needs a companion setting to be valid on its own.
    assert.equal(load({ env: { CSA_IMPORT_ENABLE_LABEL_IDENTITY: 'true' } }).imports.enableLabelIdentity, true);
  });

  it('exports exactly the documented names', () => {
    assert.deepEqual(
      [...CONFIG_ENV_VARS].sort(),
      ['CSA_CONFIG', 'CSA_IMPORT_ENABLE_LABEL_IDENTITY', ...ENV_CASES.map(([name]) => name)].sort(),
    );
    assert.deepEqual(
      [...CONFIG_FLAGS].sort(),
      ['config', 'namespace', 'kubeconfig', 'heartbeat-interval', 'failure-threshold', 'log-level', 'health-bind-address', 'metrics-bind-address', 'leader-elect'].sort(),
    );
  });

  it('does not reject unknown CSA_* variables, which Kubernetes injects for a Service named csa', () => {
    assert.deepEqual(load({ env: { CSA_SERVICE_HOST: '10.0.0.1', CSA_PORT: 'tcp://10.0.0.1:80' } }), DEFAULT_CONFIG);
  });
});

describe('describeConfig()', () => {
  it('summarises the effective configuration in flat, loggable fields', () => {
    const summary = describeConfig(load({ argv: ['--heartbeat-interval=120', '--metrics-bind-address=0'] }));
    assert.equal(summary['heartbeat.intervalSeconds'], 120);
    assert.equal(summary['heartbeat.cron'], '0 */2 * * * *');
    assert.equal(summary['kubeconfig'], '(in-cluster)');
    assert.equal(summary['metrics.bindAddress'], '0 (disabled)');
    assert.deepEqual(summary['imports.allowedNamespaces'], ['(all)']);
    assert.equal(summary['exports.enabled'], true);
    assert.deepEqual(summary['exports.allowedNamespaces'], ['(all)']);
    assert.equal(summary['exports.endpointIPType'], 'ClusterIP');
    assert.equal(summary['exports.serviceCIDR'], '(discovered)');
    assert.deepEqual(summary['exports.podCIDRs'], []);
    const explicit = describeConfig(load({ env: { CSA_EXPORT_SERVICE_CIDR: '10.96.0.0/12', CSA_EXPORT_ALLOWED_NAMESPACES: 'team-a' } }));
    assert.equal(explicit['exports.serviceCIDR'], '10.96.0.0/12');
    assert.deepEqual(explicit['exports.allowedNamespaces'], ['team-a']);
    for (const value of Object.values(summary)) {
      assert.ok(['string', 'number', 'boolean'].includes(typeof value) || Array.isArray(value), 'values must be flat');
    }
  });

  it('only lists fields it names explicitly, so a field added to the config is not logged by accident', () => {
    const withExtra = { ...load(), bearerToken: 'should-not-appear' } as AgentConfig;
    assert.ok(!JSON.stringify(describeConfig(withExtra)).includes('should-not-appear'));
  });
});
