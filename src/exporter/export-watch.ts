// The watch of this member's ResourceExports on the leader (those labelled with our
// sourceClusterID): how the exporter learns at once that one was deleted or edited there, and
// the leader's verdicts on what it wrote. One informer per client, replaced when the client
// changes (rotated credentials), stopped while paused. It only reports what it sees; what an
// event changes is KnownExports.observe's decision.
import type { ResourceExport } from '../common/api/antrea.js';
import type { LeaderApi } from '../commonarea/leader-api.js';
import { describeError } from '../common/kube/errors.js';
import { InformerStoppedError, ResilientInformer, type InformerLogger } from '../common/kube/informer.js';

export interface ExportWatchOptions {
  readonly leaderNamespace: string;
  /** Our REs: `sourceClusterID=<localID>`. */
  readonly labelSelector: string;
  readonly logger: InformerLogger;
  /** An RE was added or changed (`deleted` false), or deleted. */
  readonly changed: (re: ResourceExport, deleted: boolean) => void;
}

export class ExportWatch {
  #informer: ResilientInformer<ResourceExport> | undefined;
  #api: LeaderApi | undefined;

  constructor(private readonly options: ExportWatchOptions) {}

  /** Watches our REs through `api` (a no-op when already watching through it). */
  start(api: LeaderApi): void {
    const source = api.exportsWatch;
    if (this.#api === api) return;
    this.stop();
    const { labelSelector, changed } = this.options;
    const informer = new ResilientInformer<ResourceExport>({
      name: `resourceexports@${this.options.leaderNamespace}`,
      path: source.path,
      labelSelector,
      list: () => api.listResourceExports(labelSelector),
      watch: source.watch,
      logger: this.options.logger,
    });
    informer.on('add', (re) => { changed(re, false); });
    informer.on('update', (re) => { changed(re, false); });
    informer.on('delete', (re) => { changed(re, true); });
    informer.start().catch((err: unknown) => {
      if (!(err instanceof InformerStoppedError)) this.options.logger.warn('resource export watcher did not start', { error: describeError(err) });
    });
    this.#informer = informer;
    this.#api = api;
  }

  stop(): void {
    const informer = this.#informer;
    this.#informer = undefined;
    this.#api = undefined;
    informer?.stop().catch(() => undefined);
  }
}
