// bench:antrea's like-for-like restart figure for Antrea's leader: when controller-runtime's
// last controller started its workers (bench/fleet-leaders.ts), read from klog's output.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { klogWorkersStarted } from '../../bench/fleet-leaders.js';

const line = (time: string, what: string, controller: string) => `I1205 ${time}   14677 controller.go:305] "${what}" controller="${controller}" controllerGroup="multicluster.crd.antrea.io"`;

describe('klogWorkersStarted', () => {
  it('is the time of the last controller\'s "Starting workers", once every controller with an EventSource logged it', () => {
    const sources = [line('04:34:58.761371', 'Starting EventSource', 'resourceexport'), line('04:34:58.762418', 'Starting EventSource', 'clusterset')];
    const first = line('04:34:58.862780', 'Starting workers', 'resourceexport');
    assert.equal(klogWorkersStarted([...sources, first].join('\n'), 2026), undefined, 'clusterset has not started its workers');
    const log = [...sources, first, line('04:34:59.864642', 'Starting workers', 'clusterset'), 'I1205 04:35:00.000000 1 other.go:1] "later"'].join('\n');
    assert.equal(klogWorkersStarted(log, 2026), new Date(2026, 11, 5, 4, 34, 59, 864).getTime());
  });

  it('is undefined before any controller logged', () => {
    assert.equal(klogWorkersStarted('I1205 04:34:57.559862   14677 options.go:72] "Loading config"'), undefined);
  });
});
