// The agent as a process (src/common/process.ts) inside the test process: replicas with their own
// logs, an HTTP probe helper, a Prometheus text parser and an apiserver audit-log reader.
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../src/common/config/config.js';
import type { RunningProcess } from '../../src/common/process.js';
import { runAgentProcess } from '../../src/agent.js';
import { AGENT_NS, capturedLogger } from './clusterset.js';
import type { ControlPlane } from './control-plane.js';
import { parseConfigFlags } from '../../src/cli/config-flags.js';

export interface Replica {
  readonly name: string;
  readonly process: RunningProcess;
  readonly log: ReturnType<typeof capturedLogger>;
  /** Set once `process.done` resolves: the process asked to exit (e.g. it lost leadership). */
  exitCode(): number | undefined;
  get(path: string, port?: number): Promise<HttpAnswer>;
  metrics(): Promise<MetricSample[]>;
}

export interface ReplicaOptions {
  readonly argv?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

/** `runAgentProcess` against `member`'s admin kubeconfig, health and metrics on ephemeral loopback ports. */
export async function startReplica(member: ControlPlane, name: string, options: ReplicaOptions = {}): Promise<Replica> {
  const config = loadConfig({
    flags: parseConfigFlags(['--kubeconfig', member.kubeconfigPath, '--namespace', AGENT_NS,
      '--health-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0', ...(options.argv ?? [])]),
    env: { ...(options.env ?? {}) },
  });
  const log = capturedLogger();
  const process = await runAgentProcess(config, log.logger.child({ replica: name }));
  let exitCode: number | undefined;
  void process.done.then((code) => { exitCode = code; });
  const metricsPort = process.metricsPort;
  return {
    name,
    process,
    log,
    exitCode: () => exitCode,
    get: (path, port = process.healthPort) => httpGet(port, path),
    async metrics() {
      if (metricsPort === undefined) throw new Error(`replica ${name} serves no metrics`);
      const answer = await httpGet(metricsPort, '/metrics');
      if (answer.status !== 200) throw new Error(`GET /metrics on ${name}: ${String(answer.status)} ${answer.body}`);
      return parseMetrics(answer.body);
    },
  };
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

export async function httpGet(port: number, path: string): Promise<HttpAnswer> {
  const res = await fetch(`http://127.0.0.1:${String(port)}${path}`, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.text() };
}

export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parses Prometheus text exposition (sample lines only; label values unescaped). */
export function parseMetrics(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
    if (match === null) throw new Error(`unparseable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] ?? ''] = (pair[2] ?? '').replace(/\\n/g, '\n').replace(/\\(.)/g, '$1');
    }
    const raw = match[3] ?? '';
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    samples.push({ name: match[1] ?? '', labels, value });
  }
  return samples;
}

/** The samples of `name` whose labels include every label in `labels`. */
export function findSamples(samples: readonly MetricSample[], name: string, labels: Readonly<Record<string, string>> = {}): MetricSample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The value of the one sample of `name` matching `labels`; undefined when there is none; throws when ambiguous. */
export function sampleValue(samples: readonly MetricSample[], name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  const found = findSamples(samples, name, labels);
  if (found.length > 1) throw new Error(`${String(found.length)} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

export interface AuditEvent {
  readonly stage: string;
  readonly verb: string;
  readonly requestURI?: string;
  readonly userAgent?: string;
  readonly user: { readonly username: string };
  readonly objectRef?: { readonly resource?: string; readonly name?: string; readonly namespace?: string };
  readonly requestReceivedTimestamp: string;
  readonly stageTimestamp?: string;
  readonly responseStatus?: { readonly code?: number };
}

/** Completed requests from a kube-apiserver JSON audit log, optionally filtered. */
export function readAuditEvents(auditLogPath: string | undefined, filter: (e: AuditEvent) => boolean = () => true): AuditEvent[] {
  if (auditLogPath === undefined) throw new Error('the control plane was started without an audit log');
  return readFileSync(auditLogPath, 'utf8').split('\n').filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((e) => e.stage === 'ResponseComplete' && filter(e));
}

/**
 * Groups requests by the heartbeat tick they fall in (the schedule is aligned to the wall
 * clock), as `verb:code` lists in time order, ticks ascending.
 */
export function requestsByTick(events: readonly AuditEvent[], intervalSeconds: number): [tick: number, requests: string[]][] {
  const byTick = new Map<number, string[]>();
  const sorted = [...events].sort((a, b) => Date.parse(a.requestReceivedTimestamp) - Date.parse(b.requestReceivedTimestamp));
  for (const e of sorted) {
    const tick = Math.floor(Date.parse(e.requestReceivedTimestamp) / (intervalSeconds * 1000));
    byTick.set(tick, [...(byTick.get(tick) ?? []), `${e.verb}:${String(e.responseStatus?.code)}`]);
  }
  return [...byTick.entries()].sort(([a], [b]) => a - b);
}
