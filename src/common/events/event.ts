// What an Event is about and who records it: the vocabulary the recorder's parts share, kept
// apart so that the correlator, the spam filter and the sender need not import the façade.

export interface EventTarget {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid?: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  record(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export interface EventLogger {
  warn(message: string, meta?: Record<string, unknown>): void;
}

/** How log lines name the object, e.g. "ClusterSet kube-system/cs". */
export function describeTarget(target: EventTarget): string {
  return `${target.kind} ${target.namespace}/${target.name}`;
}
