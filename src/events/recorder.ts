// Kubernetes Events on a ClusterSet: what `kubectl describe clusterset` shows. A repeat of
// the same event within the window only bumps its count, so a leader that keeps sending
// the same bad import cannot flood the member's API server.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { describeError } from '../kube/errors.js';

export interface EventTarget {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid?: string;
}

export interface EventRecorder {
  record(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export interface EventLogger {
  warn(message: string, meta?: Record<string, unknown>): void;
}

const REPEAT_WINDOW_MS = 10 * 60_000;
const MAX_MESSAGE = 1024;

export function createEventRecorder(kc: KubeConfig, logger: EventLogger, component = 'clusterset-agent'): EventRecorder {
  const core = kc.makeApiClient(CoreV1Api);
  const recent = new Map<string, { name: string; count: number; at: number }>();
  let serial = 0;

  const send = async (target: EventTarget, type: string, reason: string, message: string) => {
    const key = `${target.namespace}/${target.name}/${type}/${reason}/${message}`;
    const now = Date.now();
    const seen = recent.get(key);
    const timestamp = new Date(now);
    if (seen && now - seen.at < REPEAT_WINDOW_MS) {
      seen.count += 1;
      seen.at = now;
      await core.patchNamespacedEvent({
        namespace: target.namespace, name: seen.name,
        body: [{ op: 'replace', path: '/count', value: seen.count }, { op: 'replace', path: '/lastTimestamp', value: timestamp.toISOString() }],
      });
      return;
    }
    serial += 1;
    const name = `${target.name}.${now.toString(16)}${serial.toString(16)}`;
    await core.createNamespacedEvent({
      namespace: target.namespace,
      body: {
        metadata: { name, namespace: target.namespace },
        involvedObject: { apiVersion: target.apiVersion, kind: target.kind, name: target.name, namespace: target.namespace, ...(target.uid ? { uid: target.uid } : {}) },
        type, reason, message: message.slice(0, MAX_MESSAGE), count: 1,
        firstTimestamp: timestamp, lastTimestamp: timestamp,
        source: { component },
        reportingComponent: component, reportingInstance: component,
      },
    });
    recent.set(key, { name, count: 1, at: now });
    if (recent.size > 1000) {
      for (const [k, v] of recent) if (now - v.at >= REPEAT_WINDOW_MS) recent.delete(k);
    }
  };

  return {
    record(target, type, reason, message) {
      // Events are best effort: a failure to record one must never fail the work it describes.
      send(target, type, reason, message).catch((err: unknown) => {
        logger.warn('could not record event', { reason, error: describeError(err) });
      });
    },
  };
}
