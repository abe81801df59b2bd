// What a RemoteCommonArea tells the rest of the agent, as one typed stream per area.
//
// Before this, the controller, the area and the importer were wired with callbacks that
// handed the leader client around; the importer kept its own copy after the area had
// dropped its own, and went on importing from a leader the area no longer trusted. Now the
// area drives its importer and exporter itself (see LeaderLink) and everyone else only observes.

import type { LeaderStatus } from './remote-common-area.js';

/** Why the area stopped trusting what the leader sends. */
export interface TrustLost {
  readonly reason: string;
  readonly message: string;
}

export type AreaEvent =
  /** A heartbeat ended: accepted, or failed after its retries. For metrics. */
  | { readonly type: 'beat'; readonly ok: boolean; readonly seconds: number; readonly attempts: number; readonly reason?: string }
  /** The conditions changed (not emitted for a beat that changed nothing). */
  | { readonly type: 'conditions'; readonly status: LeaderStatus; readonly previousReady: LeaderStatus['ready']['status'] }
  /** Imports were paused (trust or connection lost) or resumed (a trusted beat was accepted). */
  | { readonly type: 'imports'; readonly state: 'paused'; readonly why: TrustLost }
  | { readonly type: 'imports'; readonly state: 'resumed' };

export type AreaListener = (event: AreaEvent) => void;

/** A minimal synchronous emitter: listeners run in order; one that throws does not stop the others. */
export class AreaEvents {
  private readonly listeners = new Set<AreaListener>();

  constructor(private readonly onListenerError: (error: unknown) => void) {}

  subscribe(listener: AreaListener): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  emit(event: AreaEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
