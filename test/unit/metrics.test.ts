import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentMetrics } from '../../src/common/metrics/metrics.js';

/** The sample lines of `name` (no HELP/TYPE), e.g. `name{a="b"} 1`. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('AgentMetrics', () => {
  it('exposes every agent metric with HELP and TYPE, plus the default process metrics', async () => {
    const m = new AgentMetrics();
    const text = await m.metrics();
    for (const [name, type] of [
      ['clusterset_agent_heartbeat_duration_seconds', 'histogram'],
      ['clusterset_agent_heartbeat_failures_total', 'counter'],
      ['clusterset_agent_leader_connected', 'gauge'],
      ['clusterset_agent_seconds_since_last_heartbeat', 'gauge'],
      ['clusterset_agent_imports_total', 'counter'],
      ['clusterset_agent_import_rejections_total', 'counter'],
      ['clusterset_agent_is_leader', 'gauge'],
    ] as const) {
      assert.match(text, new RegExp(`^# HELP ${name} \\S`, 'm'));
      assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'));
    }
    assert.match(text, /^process_cpu_user_seconds_total /m);
    assert.match(text, /^nodejs_heap_size_total_bytes /m);
    assert.equal(value(text, 'clusterset_agent_is_leader'), 0);
    assert.match(m.contentType, /^text\/plain; version=0\.0\.4/);
  });

  it('two instances do not share series', async () => {
    const a = new AgentMetrics({ defaultMetrics: false });
    const b = new AgentMetrics({ defaultMetrics: false });
    a.recordImport('cs', 'ServiceImport', 'created');
    assert.equal(value(await a.metrics(), 'clusterset_agent_imports_total{clusterset="cs",kind="ServiceImport",outcome="created"}'), 1);
    assert.deepEqual(samples(await b.metrics(), 'clusterset_agent_imports_total'), []);
  });

  it('.observeBeat() - times every beat and counts failures by reason', async () => {
    const m = new AgentMetrics({ defaultMetrics: false });
    m.observeBeat('cs', 'leader-a', 0.02, true);
    m.observeBeat('cs', 'leader-a', 3, false, 'Unauthorized');
    m.observeBeat('cs', 'leader-a', 0.5, false, 'Unauthorized');
    m.observeBeat('cs', 'leader-a', 10, false);
    const text = await m.metrics();
    const labels = 'clusterset="cs",leader="leader-a"';
    assert.equal(value(text, `clusterset_agent_heartbeat_duration_seconds_count{${labels}}`), 4);
    assert.equal(value(text, `clusterset_agent_heartbeat_duration_seconds_sum{${labels}}`), 13.52);
    assert.equal(value(text, `clusterset_agent_heartbeat_duration_seconds_bucket{le="0.025",${labels}}`), 1);
    assert.equal(value(text, `clusterset_agent_heartbeat_duration_seconds_bucket{le="10",${labels}}`), 4);
    assert.equal(value(text, `clusterset_agent_heartbeat_failures_total{${labels},reason="Unauthorized"}`), 2);
    assert.equal(value(text, `clusterset_agent_heartbeat_failures_total{${labels},reason="Unknown"}`), 1);
  });

  it('seconds_since_last_heartbeat is computed at scrape time from the last successful beat', async () => {
    let now = 1_000_000;
    const m = new AgentMetrics({ defaultMetrics: false, now: () => now });
    const series = 'clusterset_agent_seconds_since_last_heartbeat{clusterset="cs",leader="l"}';
    assert.equal(value(await m.metrics(), series), undefined, 'no series before the first successful beat');
    m.observeBeat('cs', 'l', 0.01, false, 'Timeout');
    assert.equal(value(await m.metrics(), series), undefined, 'a failed beat does not start the clock');
    m.observeBeat('cs', 'l', 0.01, true);
    now += 2_500;
    assert.equal(value(await m.metrics(), series), 2.5);
    now += 10_000;
    m.observeBeat('cs', 'l', 0.01, false, 'Timeout');
    assert.equal(value(await m.metrics(), series), 12.5, 'failures keep it growing');
    m.observeBeat('cs', 'l', 0.01, true);
    now += 100;
    assert.equal(value(await m.metrics(), series), 0.1);
  });

  it('.setConnected(), .recordImport(), .recordRejection(), .setElected()', async () => {
    const m = new AgentMetrics({ defaultMetrics: false });
    m.setConnected('cs', 'l', true);
    m.recordImport('cs', 'Endpoints', 'updated');
    m.recordImport('cs', 'Endpoints', 'updated');
    m.recordImport('cs', 'ServiceImport', 'rejected');
    m.recordRejection('cs', 'deniedNamespace');
    m.setElected(true);
    let text = await m.metrics();
    assert.equal(value(text, 'clusterset_agent_leader_connected{clusterset="cs",leader="l"}'), 1);
    assert.equal(value(text, 'clusterset_agent_imports_total{clusterset="cs",kind="Endpoints",outcome="updated"}'), 2);
    assert.equal(value(text, 'clusterset_agent_imports_total{clusterset="cs",kind="ServiceImport",outcome="rejected"}'), 1);
    assert.equal(value(text, 'clusterset_agent_import_rejections_total{clusterset="cs",rule="deniedNamespace"}'), 1);
    assert.equal(value(text, 'clusterset_agent_is_leader'), 1);
    m.setConnected('cs', 'l', false);
    m.setElected(false);
    text = await m.metrics();
    assert.equal(value(text, 'clusterset_agent_leader_connected{clusterset="cs",leader="l"}'), 0);
    assert.equal(value(text, 'clusterset_agent_is_leader'), 0);
  });

  it('.forget() - drops every series of one ClusterSet and keeps the others', async () => {
    const m = new AgentMetrics({ defaultMetrics: false });
    for (const cs of ['gone', 'kept']) {
      m.observeBeat(cs, 'l', 0.1, true);
      m.observeBeat(cs, 'l', 0.1, false, 'Timeout');
      m.setConnected(cs, 'l', true);
      m.recordImport(cs, 'Endpoints', 'created');
      m.recordRejection(cs, 'maxObjectBytes');
    }
    m.setElected(true);
    m.forget('gone');
    m.forget('never-seen');
    const text = await m.metrics();
    const agentLines = text.split('\n').filter((l) => l.startsWith('clusterset_agent_'));
    assert.deepEqual(agentLines.filter((l) => l.includes('"gone"')), []);
    for (const name of ['heartbeat_duration_seconds_count', 'heartbeat_failures_total', 'leader_connected', 'seconds_since_last_heartbeat',
      'imports_total', 'import_rejections_total']) {
      assert.ok(agentLines.some((l) => l.startsWith(`clusterset_agent_${name}{`) && l.includes('clusterset="kept"')), name);
    }
    assert.equal(value(text, 'clusterset_agent_is_leader'), 1);
    // A forgotten ClusterSet that comes back starts from zero.
    m.recordImport('gone', 'Endpoints', 'created');
    assert.equal(value(await m.metrics(), 'clusterset_agent_imports_total{clusterset="gone",kind="Endpoints",outcome="created"}'), 1);
  });

  it('escapes label values', async () => {
    const m = new AgentMetrics({ defaultMetrics: false });
    m.recordRejection('cs', 'a "quoted"\nrule');
    assert.match(await m.metrics(), /rule="a \\"quoted\\"\\nrule"\} 1/);
  });
});
