// Every name README.md and docs/*.md give the reader must exist, so a renamed flag, chart
// value, metric, alert, reason or exit code fails the suite instead of the reader (issue 33).
// What counts as naming something (the convention the docs keep):
//   * a CLI flag: each `--flag` of a `clusterset-agent <command> ...` command line, in a code
//     block or in backticks, must be a flag of that command; a lone backticked `--flag` must be a
//     flag of some command (or one of OTHER_TOOLS_FLAGS, another tool's, listed below);
//   * a setting: a backticked dotted path (`a.b`, optionally `=value`) whose first segment is a
//     top-level key of the chart's values.schema.json or of the config schema must be a chart
//     value path (values.schema.json; `config.<setting>` included, any path below a free-form
//     object such as `resources`) or a config setting path. Not settings: file names
//     (`status.ts`) and `status.<field>`, which in these docs is always an object's status;
//   * a metric: a `clusterset_agent_*` name (labels in braces ignored) must be registered;
//   * an alert: a backticked `ClusterSet<Word>` must be an alert of the chart's PrometheusRules,
//     a condition reason, or one of the API words in NOT_ALERTS;
//   * a condition reason: the first cell of each row of troubleshooting.md's table;
//   * an exit code: "exit N" / "exits N" / "exit code N" must be one the commands use.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { CONFIG_SETTINGS } from '../../src/common/config/config.js';
import { AgentMetrics } from '../../src/common/metrics/metrics.js';
import { FailureReason } from '../../src/conditions/reasons.js';
import { joinCommand, leaveCommand, EXIT_LEFT_INCOMPLETE, EXIT_REFUSED } from '../../src/cli/join-command.js';
import { leaderCommand } from '../../src/cli/leader-command.js';
import { statusCommand } from '../../src/cli/status-command.js';
import { addConfigOptions } from '../../src/cli/config-flags.js';
import { EXIT_USAGE } from '../../src/cli/command.js';
import { EXIT_NEEDS_ATTENTION } from '../../src/cli/report/model.js';
import { REASON_CONVERGE_FAILURE, REASON_IMPORT_NAME_CONFLICT } from '../../src/leader/decisions/aggregate.js';
import { REASON_CIDR_CONFLICT, REASON_INVALID_CLUSTER_INFO } from '../../src/leader/decisions/clusterinfo-check.js';
import { REASON_TOO_MANY_EXPORTS } from '../../src/leader/decisions/export-cap.js';
import { REASON_IMPORT_TOO_LARGE } from '../../src/leader/decisions/import-budget.js';
import { REASON_DUPLICATE_CLUSTER_ID, REASON_MEMBER_CLOCK_AHEAD, REASON_MEMBER_FLAPPING, REASON_TIMEOUT_TOO_SHORT } from '../../src/leader/status.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CHART = path.join(ROOT, 'charts', 'clusterset-agent');

/** Flags of other tools the docs name in backticks (helm, node, the build and bench scripts). */
const OTHER_TOOLS_FLAGS = new Set(['--set', '--optimize-for-size', '--max-opt', '--enable-source-maps', '--cap-drop', '--ginkgo.label-filter', '--json', '--rebuild-base',
  '--rounds', '--repeat', '--n', '--mode', '--once', '--containers-conf', '--changes', '--v8-pool-size', '--single-threaded-gc', '--audit-log-maxsize', '--bytecode-old-age', '--max-lazy', '--max-semi-space-size', '--heap-growing-percent']);
/** Words of the wire format and MCS API that look like alert names. */
const NOT_ALERTS = new Set(['ClusterSetIP', 'ClusterSetID', 'ClusterSetIPs']);
/** Exit codes: 0 done, 1 failed, EXIT_USAGE, EXIT_NEEDS_ATTENTION, EXIT_REFUSED, EXIT_LEFT_INCOMPLETE. */
const EXIT_CODES = new Set([0, 1, EXIT_USAGE, EXIT_NEEDS_ATTENTION, EXIT_REFUSED, EXIT_LEFT_INCOMPLETE]);
/** The reasons `leader run` writes on exports' Failure conditions and its Events, which troubleshooting.md lists too. */
const LEADER_REASONS = [REASON_CONVERGE_FAILURE, REASON_IMPORT_NAME_CONFLICT, REASON_CIDR_CONFLICT, REASON_INVALID_CLUSTER_INFO, REASON_TOO_MANY_EXPORTS,
  REASON_IMPORT_TOO_LARGE, REASON_DUPLICATE_CLUSTER_ID, REASON_MEMBER_CLOCK_AHEAD, REASON_MEMBER_FLAPPING, REASON_TIMEOUT_TOO_SHORT];

export interface DocFile { readonly file: string; readonly text: string }

export function docFiles(): DocFile[] {
  return ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]
    .map((file) => ({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }));
}

/** Each command's flags, by its path after `clusterset-agent` ("join", "leader create-member-token"). */
function cliFlags(): Map<string, Set<string>> {
  const io = { stdout: { write: () => true }, stderr: { write: () => true } };
  const status = { code: 0 };
  const run = new Command('run');
  addConfigOptions(run);
  const leaderRun = new Command('run');
  addConfigOptions(leaderRun);
  const flags = new Map<string, Set<string>>();
  const add = (name: string, command: Command) => flags.set(name, new Set(['--help', '-h', ...command.options.flatMap((o) => [o.long, o.short].filter((f): f is string => f !== undefined))]));
  add('run', run);
  add('leader run', leaderRun);
  add('join', joinCommand(io, status));
  add('leave', leaveCommand(io, status));
  add('status', statusCommand(io, status));
  for (const sub of leaderCommand(io, status).commands) add(`leader ${sub.name()}`, sub);
  add('version', new Command('version'));
  return flags;
}

/** Every value path of the schema; a free-form object (no `properties`: resources, affinity) admits any path below it, as `<path>.*`. */
function schemaPaths(schema: unknown, prefix: string, into: Set<string>): Set<string> {
  const node = schema as { type?: unknown; properties?: Record<string, unknown> } | undefined;
  if (prefix !== '' && node?.type === 'object' && node.properties === undefined) into.add(`${prefix}.*`);
  for (const [key, child] of Object.entries(node?.properties ?? {})) {
    const p = prefix === '' ? key : `${prefix}.${key}`;
    into.add(p);
    schemaPaths(child, p, into);
  }
  return into;
}

/** A chart path, or one below a free-form object of the chart. */
function isChartPath(paths: ReadonlySet<string>, p: string): boolean {
  if (paths.has(p)) return true;
  const parts = p.split('.');
  return parts.some((_, i) => i > 0 && paths.has(`${parts.slice(0, i).join('.')}.*`));
}

export interface Names {
  readonly flags: Map<string, Set<string>>;
  readonly chartPaths: Set<string>;
  readonly configPaths: Set<string>;
  readonly metrics: Set<string>;
  readonly alerts: Set<string>;
  readonly reasons: Set<string>;
}

async function knownNames(): Promise<Names> {
  const chartPaths = schemaPaths(JSON.parse(readFileSync(path.join(CHART, 'values.schema.json'), 'utf8')), '', new Set());
  const configPaths = new Set(CONFIG_SETTINGS.map((s) => s.path).filter((p): p is string => p !== undefined));
  const text = await new AgentMetrics({ defaultMetrics: false }).metrics();
  const metrics = new Set([...text.matchAll(/^# HELP (\S+)/gm)].map((m) => m[1] ?? ''));
  const alerts = new Set(readdirSync(path.join(CHART, 'templates')).flatMap((f) =>
    [...readFileSync(path.join(CHART, 'templates', f), 'utf8').matchAll(/^\s*- alert: (\S+)/gm)].map((m) => m[1] ?? '')));
  return { flags: cliFlags(), chartPaths, configPaths, metrics, alerts, reasons: new Set<string>([...Object.values(FailureReason), ...LEADER_REASONS]) };
}

/** `clusterset-agent <command> ...` command lines: in code blocks (with `\` continuations) and in backticks. */
function commandLines(text: string): string[] {
  const lines: string[] = [];
  for (const block of text.matchAll(/^```[^\n]*\n([\s\S]*?)^```$/gm)) {
    const joined = (block[1] ?? '').replace(/\s*\\\n\s*/g, ' ');
    for (const line of joined.split('\n')) lines.push(...[...line.matchAll(/(?:^|[\s;|&(])clusterset-agent ((?:[^\s#|;&)]+ ?)+)/g)].map((m) => m[1] ?? ''));
  }
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
  for (const m of prose.matchAll(/`clusterset-agent ([^`]+)`/g)) lines.push(m[1] ?? '');
  return lines;
}

/** Every problem with the names in one file: what is named, where, and why it does not exist. */
export function problemsOf(doc: DocFile, names: Names): string[] {
  const problems: string[] = [];
  const known = (command: string) => names.flags.get(command);
  for (const line of commandLines(doc.text)) {
    const words = line.trim().split(/\s+/);
    const command = known(`${words[0] ?? ''} ${words[1] ?? ''}`) !== undefined ? `${words[0] ?? ''} ${words[1] ?? ''}` : words[0] ?? '';
    const flags = known(command);
    if (flags === undefined) continue; // `clusterset-agent` as a word, or an unknown command (help, --version)
    for (const word of words) {
      const flag = /^(--?[a-zA-Z][\w-]*)/.exec(word)?.[1];
      if (flag !== undefined && !flags.has(flag)) problems.push(`${doc.file}: clusterset-agent ${command} has no flag ${flag} (in "${line.trim()}")`);
    }
  }
  const allFlags = new Set(['--version', '-V', ...[...names.flags.values()].flatMap((s) => [...s])]);
  const prose = doc.text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
  for (const m of prose.matchAll(/`([^`\n]+)`/g)) {
    const code = m[1] ?? '';
    const flag = /^(--[a-z][\w.-]*)(?:[ =]|$)/.exec(code)?.[1];
    if (flag !== undefined && !allFlags.has(flag) && !OTHER_TOOLS_FLAGS.has(flag)) problems.push(`${doc.file}: \`${code}\` names no flag of any command`);
    const setting = /^([a-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*|\.\*)+)(?:=\S*)?$/.exec(code)?.[1];
    // Not settings: file names (`status.ts`), and an object's `status.*` fields (`status.imports`).
    if (setting !== undefined && !/\.(ts|js|mjs|json|ya?ml|md|sh)$/.test(setting) && !setting.startsWith('status.')) {
      const first = setting.split('.')[0] ?? '';
      const topLevel = names.chartPaths.has(first) || [...names.configPaths].some((p) => p.startsWith(`${first}.`));
      const stem = setting.replace(/\.\*$/, '');
      if (topLevel && !isChartPath(names.chartPaths, stem) && !names.configPaths.has(stem)) {
        problems.push(`${doc.file}: \`${code}\` is neither a chart value (values.schema.json) nor a config setting`);
      }
    }
    const alert = /^ClusterSet[A-Z]\w+$/.exec(code)?.[0];
    if (alert !== undefined && !names.alerts.has(alert) && !names.reasons.has(alert) && !NOT_ALERTS.has(alert)) {
      problems.push(`${doc.file}: \`${alert}\` is no alert of the chart's PrometheusRules`);
    }
  }
  for (const m of doc.text.matchAll(/\bclusterset_agent_[a-z_]+/g)) {
    const metric = m[0];
    // A family named by its prefix (`clusterset_agent_apiserver_throttled_*`) must have a member.
    const family = doc.text.slice((m.index ?? 0) + metric.length).startsWith('*');
    const exists = family ? [...names.metrics].some((n) => n.startsWith(metric)) : names.metrics.has(metric) || names.metrics.has(metric.replace(/_(bucket|sum|count)$/, ''));
    if (!exists) problems.push(`${doc.file}: metric ${metric}${family ? '*' : ''} is not registered`);
  }
  if (doc.file === 'docs/troubleshooting.md') {
    for (const m of doc.text.matchAll(/^\| `(\w+)` \|/gm)) {
      if (!names.reasons.has(m[1] ?? '')) problems.push(`${doc.file}: condition reason ${m[1] ?? ''} is not one the agent sets`);
    }
  }
  for (const m of doc.text.matchAll(/\bexit(?:s| code| status)?,? (\d+)\b/gi)) {
    const code = Number(m[1]);
    if (!EXIT_CODES.has(code)) problems.push(`${doc.file}: exit code ${String(code)} is not one the commands use`);
  }
  return problems;
}

describe('the names the docs give exist (issue 33)', () => {
  it('every flag, chart value, config setting, metric, alert, condition reason and exit code in README.md and docs/*.md', async () => {
    const names = await knownNames();
    assert.ok(names.metrics.size > 10 && names.alerts.size >= 10 && names.chartPaths.has('image.repository'), 'the sources of truth were read');
    const problems = docFiles().flatMap((doc) => problemsOf(doc, names));
    assert.deepEqual(problems, []);
  });

  it('catches a planted wrong name of each kind', async () => {
    const names = await knownNames();
    const planted: [string, RegExp][] = [
      ['Run `clusterset-agent join --leader-contxt east`.', /clusterset-agent join has no flag --leader-contxt/],
      ['```sh\nclusterset-agent leader create-member-token --member-id east \\\n  --namespaces x\n```', /clusterset-agent leader create-member-token has no flag --namespaces/],
      ['Set `--leader-servr`.', /`--leader-servr` names no flag/],
      ['The chart value `leader.controller.memberTimeoutSecs` sets it.', /`leader\.controller\.memberTimeoutSecs` is neither a chart value/],
      ['Use `image.repo=x`.', /`image\.repo=x` is neither/],
      ['Watch `clusterset_agent_heartbeat_failure_total`.', /metric clusterset_agent_heartbeat_failure_total is not registered/],
      ['Alert `ClusterSetLeaderGone` fires.', /`ClusterSetLeaderGone` is no alert/],
      ['It exits 7.', /exit code 7 is not one the commands use/],
    ];
    for (const [text, problem] of planted) {
      const found = problemsOf({ file: 'planted.md', text }, names);
      assert.equal(found.length, 1, `${text}: ${JSON.stringify(found)}`);
      assert.match(found[0] ?? '', problem);
    }
    const reason = problemsOf({ file: 'docs/troubleshooting.md', text: '| `LeaderUnreachable` | x | y |\n' }, names);
    assert.deepEqual(reason, ['docs/troubleshooting.md: condition reason LeaderUnreachable is not one the agent sets']);
    // And the right names pass.
    assert.deepEqual(problemsOf({ file: 'ok.md', text: 'Run `clusterset-agent join --leader-context east`, set `leader.controller.memberTimeoutSeconds` or `config.exports.endpointIPType=PodIP`, watch `clusterset_agent_leader_connected{clusterset}`, alert `ClusterSetHeartbeatStale`; exit 4.' }, names), []);
  });
});
