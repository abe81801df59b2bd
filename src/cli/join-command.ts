// `clusterset-agent join` and `leave`: a member in or out of a ClusterSet in one command, over
// the leader's and the member's kubeconfigs. Progress goes to stderr, the result to stdout.
// Exit codes: 0 done (joined and Ready, or left), 1 failed after the checks (an API error, or
// not Ready in time: what was written stays, and a rerun continues), 2 a bad command line,
// 4 refused: a contradiction found before anything was written, each one named; for leave, 5
// left, but something stays (not made by join, or replaced meanwhile), each one named.
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { KubeConfig } from '@kubernetes/client-node';
import { apisOf } from '../common/kube/typed-api.js';
import { CLUSTERSET } from '../common/api/antrea.js';
import { DEFAULT_LEADER_NAMESPACE } from '../common/api/names.js';
import { describeError } from '../common/kube/errors.js';
import { join, JoinFailed, JoinRefused } from './join/join.js';
import { describeStep, leave, LeaveUsageError } from './join/leave.js';
import { configureMemberDNS, dnsRefusal, readMemberDNS, unconfigureMemberDNS } from './dns/configure.js';
import { DEFAULT_MEMBER_NAMESPACE, DEFAULT_SECRET_NAME, leaderCaPem, MemberTokenError, parseDuration } from '../leader/member-token.js';
import { describeOption, EXIT_USAGE, valueNotAFlag, type CommandIO, type ExitStatus } from './command.js';

export const EXIT_REFUSED = 4;
/** leave: done, but something it could not (or would not) remove stays; each is named on stderr. */
export const EXIT_LEFT_INCOMPLETE = 5;
const DEFAULT_WAIT_SECONDS = 120;

interface SideFlags {
  readonly leaderKubeconfig?: string;
  readonly leaderContext?: string;
  readonly memberKubeconfig?: string;
  readonly memberContext?: string;
  readonly memberNamespace?: string;
  readonly serviceAccount?: string;
  readonly wait?: string;
}

interface JoinFlags extends SideFlags {
  readonly clusterId?: string;
  readonly clusterset?: string;
  readonly leaderServer?: string;
  readonly leaderCaFile?: string;
  readonly leaderNamespace?: string;
  readonly leaderClusterId?: string;
  readonly secretName?: string;
  readonly duration?: string;
  readonly dryRun?: boolean;
  readonly configureDns?: boolean;
}

class UsageError extends Error {}

function loadKubeConfig(file: string | undefined, context: string | undefined, side: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (file !== undefined) kc.loadFromFile(file);
    else kc.loadFromDefault();
  } catch (err) {
    throw new UsageError(`cannot load the ${side} kubeconfig ${file ?? '(default: $KUBECONFIG or ~/.kube/config)'}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (context !== undefined) {
    if (kc.getContextObject(context) === null) throw new UsageError(`the ${side} kubeconfig has no context ${context} (contexts: ${kc.getContexts().map((c) => c.name).join(', ')})`);
    kc.setCurrentContext(context);
  }
  if (kc.getCurrentCluster() === null) throw new UsageError(`the ${side} kubeconfig has no current cluster: pass --${side}-kubeconfig or --${side}-context`);
  return kc;
}

function waitSeconds(text: string | undefined): number {
  if (text === undefined) return DEFAULT_WAIT_SECONDS;
  try {
    return parseDuration(text);
  } catch {
    throw new UsageError(`--wait must be seconds or a duration like 2m (0: do not wait), not ${JSON.stringify(text)}`);
  }
}

function sideOptions(command: Command): (flags: string, text: string, extras?: { env?: string; default?: string }) => void {
  const option = (flags: string, text: string, extras: { env?: string; default?: string } = {}): void => {
    const added = new Option(flags, describeOption(text, extras));
    command.addOption(added.argParser(valueNotAFlag(command, added)));
  };
  option('--leader-kubeconfig <file>', 'Kubeconfig of the leader cluster.', { env: 'KUBECONFIG', default: '~/.kube/config' });
  option('--leader-context <name>', 'Context of the leader kubeconfig.', { default: 'its current context' });
  option('--member-kubeconfig <file>', 'Kubeconfig of the member cluster.', { env: 'KUBECONFIG', default: '~/.kube/config' });
  option('--member-context <name>', 'Context of the member kubeconfig.', { default: 'its current context' });
  option('--member-namespace <ns>', "The agent's namespace in the member (where the chart runs it).", { default: DEFAULT_MEMBER_NAMESPACE });
  option('--service-account <name>', "The member's ServiceAccount on the leader (leave reads the one join recorded; this only for a membership with no record).", { default: 'member-<cluster ID>' });
  return option;
}

async function report(io: CommandIO, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof UsageError || err instanceof LeaveUsageError) {
      io.stderr.write(`error: ${err.message}\n`);
      return EXIT_USAGE;
    }
    if (err instanceof JoinRefused) {
      io.stderr.write(`refused, nothing written:\n${err.reasons.map((r) => `  - ${r}`).join('\n')}\n`);
      return EXIT_REFUSED;
    }
    io.stderr.write(`error: ${err instanceof JoinFailed || err instanceof MemberTokenError ? err.message : describeError(err)}\n`);
    return 1;
  }
}

export function joinCommand(io: CommandIO, status: ExitStatus): Command {
  const command = new Command('join')
    .summary('join a member cluster to a ClusterSet: access on the leader, Secret and ClusterSet in the member, wait for Ready')
    .description(
      'Joins one member cluster to a ClusterSet, given kubeconfigs of the leader and the member (both with admin ' +
        'rights; the charts installed on both). Checks everything first (CRDs, namespaces, the ClusterSet on both sides, the ' +
        "member's ServiceAccount, an existing Secret, and the leader CA against --leader-server) and writes nothing when " +
        "something contradicts; then creates only what is missing: the member's ServiceAccount, Role binding and token on " +
        'the leader, the Secret and the ClusterSet in the member, and waits for Ready. Running it again changes nothing. ' +
        'Exit codes: 0 joined, 1 failed (a rerun continues), 2 bad command line, 4 refused (nothing written).',
    )
    .usage('--cluster-id ID --clusterset NAME [options]')
    .addHelpText('after', '\nExample:\n  clusterset-agent join --leader-context leader --member-context east --cluster-id east --clusterset prod\n');
  const option = sideOptions(command);
  option('--cluster-id <id>', "The member's cluster ID; required.");
  option('--clusterset <name>', 'The ClusterSet ID (its name on the leader and in the member); required.');
  option('--leader-server <url>', 'The leader API server URL as the member reaches it (a loopback one taken from the kubeconfig is refused).', { default: "the leader kubeconfig's server" });
  option('--leader-ca-file <file>', "PEM CA the member trusts the leader with.", { default: "the leader kubeconfig's CA" });
  option('--leader-namespace <ns>', 'The leader namespace (common area).', { default: DEFAULT_LEADER_NAMESPACE });
  option('--leader-cluster-id <id>', "The leader's cluster ID: creates the leader's ClusterSet when it is missing.", { default: "read from the leader's ClusterSet" });
  option('--secret-name <name>', 'The Secret in the member holding the leader CA and token.', { default: DEFAULT_SECRET_NAME });
  option('--duration <8760h|seconds>', 'Lifetime of a new token.', { default: '8760h' });
  option('--wait <seconds|2m>', 'How long to wait for Ready; 0 does not wait.', { default: `${String(DEFAULT_WAIT_SECONDS)}s` });
  command.addOption(new Option('--dry-run', 'Check everything and print what would be written (YAML), write nothing.'));
  command.addOption(new Option('--configure-dns', "Also make the member's CoreDNS (kube-system/coredns, 1.12.2 or newer) serve clusterset.local: " +
    'its Corefile and list/watch on ServiceImports; refused, with what to add by hand, when the Corefile is not a shape it knows. leave undoes it.'));
  return command.action(async (values: JoinFlags) => {
    status.code = await report(io, async () => {
      if (values.clusterId === undefined || values.clusterset === undefined) throw new UsageError("--cluster-id and --clusterset are required (see 'clusterset-agent join --help')");
      const leaderKc = loadKubeConfig(values.leaderKubeconfig, values.leaderContext, 'leader');
      const memberKc = loadKubeConfig(values.memberKubeconfig, values.memberContext, 'member');
      let caPem: string;
      if (values.leaderCaFile !== undefined) {
        try {
          caPem = readFileSync(values.leaderCaFile, 'utf8');
        } catch (err) {
          throw new UsageError(`cannot read --leader-ca-file ${values.leaderCaFile}: ${describeError(err)}`);
        }
        if (!caPem.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`--leader-ca-file ${values.leaderCaFile} is not a PEM certificate`);
      } else {
        caPem = leaderCaPem(leaderKc);
      }
      const durationSeconds = values.duration === undefined ? undefined : parseDuration(values.duration);
      if (values.configureDns === true) {
        const refusal = dnsRefusal(await readMemberDNS(memberKc));
        if (refusal !== undefined) throw new JoinRefused([refusal]);
      }
      const result = await join({
        leader: leaderKc, member: memberKc, leaderCaPem: caPem,
        clusterSet: values.clusterset, clusterID: values.clusterId,
        leaderServer: values.leaderServer ?? leaderKc.getCurrentCluster()?.server ?? '',
        ...(values.leaderServer === undefined && { leaderServerFromKubeconfig: leaderKc.getCurrentContext() }),
        leaderNamespace: values.leaderNamespace ?? DEFAULT_LEADER_NAMESPACE,
        memberNamespace: values.memberNamespace ?? DEFAULT_MEMBER_NAMESPACE,
        secretName: values.secretName ?? DEFAULT_SECRET_NAME,
        serviceAccount: values.serviceAccount ?? `member-${values.clusterId}`,
        ...(values.leaderClusterId !== undefined && { leaderClusterID: values.leaderClusterId }),
        durationSeconds, dryRun: values.dryRun === true, waitSeconds: waitSeconds(values.wait),
        progress: (line) => { io.stderr.write(`${line}\n`); },
      });
      if (result.manifests !== undefined) {
        io.stdout.write(result.manifests);
        return 0;
      }
      const state = result.ready === undefined ? 'not waited for Ready' : `Ready (${result.ready.reason})`;
      const dns = values.configureDns === true ? await configureMemberDNS(memberKc, (line) => { io.stderr.write(`${line}\n`); }) : [];
      const wrote = result.wrote.length + dns.length;
      io.stdout.write(`member ${values.clusterId} joined ClusterSet ${values.clusterset} (leader ${result.plan.leaderClusterID}): ${state}; ${wrote === 0 ? 'nothing written, all in place' : `${String(wrote)} object(s) written`}\n`);
      return 0;
    });
  });
}

async function undoMemberDNSWhenUnused(member: KubeConfig, io: CommandIO): Promise<number> {
  const progress = (line: string) => { io.stderr.write(`${line}\n`); };
  try {
    const left = (await apisOf(member, 'leave (member)').custom.listClusterCustomObject({ group: CLUSTERSET.group, version: CLUSTERSET.version, plural: CLUSTERSET.plural })) as { items?: unknown[] };
    if ((left.items ?? []).length > 0) return 0;
    return (await unconfigureMemberDNS(member, progress)).length;
  } catch (err) {
    // leave's own work is done; a member kubeconfig without access to kube-system only skips this step.
    progress(`warning: could not check the member's CoreDNS for clusterset.local configured by join --configure-dns: ${describeError(err)}`);
    return 0;
  }
}

export function leaveCommand(io: CommandIO, status: ExitStatus): Command {
  const command = new Command('leave')
    .summary("take a member out of a ClusterSet (or out of one of its leaders): its ClusterSet and Secret, and its access on the leader")
    .description(
      "Undoes join. First proves the leader context is the leader the member ClusterSet names (the leader ClusterSet " +
        "join recorded, or the same server and CA; the same leader ID) and finds the member's ServiceAccount join " +
        'recorded; any doubt stops it before the first delete. Then deletes the member\'s ClusterSet (the agent withdraws ' +
        'its announce and exports, then lets it go) and waits for it to go, deletes its Secret unless another ClusterSet ' +
        "uses it, then the member's RoleBinding and ServiceAccount on the leader, which voids every token issued for it. It " +
        'deletes only what join created (labelled at create), under a uid precondition; from a RoleBinding join did not ' +
        "create it removes only the member's subject. The leader's ClusterSet and the shared member Role stay. " +
        'With several leaders, --leader names the one to leave (the one --leader-context reaches): only its entry goes from ' +
        "spec.leaders (the agent leaves that leader, and leave waits for its status entry to go), then its Secret and the member's " +
        'access on that leader; the other leaders stay untouched. The last leader\'s leave is the whole leave. ' +
        'Exit codes: 0 left, 1 failed, 2 bad command line, 4 refused (nothing deleted), 5 left but something stays (each named).',
    )
    .usage('--clusterset NAME [--leader ID] [options]')
    .addHelpText('after', '\nExample (a ClusterSet with two leaders, leaving leader-a):\n  clusterset-agent leave --leader-context leader-a --member-context east --clusterset prod --leader leader-a\n');
  const option = sideOptions(command);
  option('--clusterset <name>', 'The ClusterSet to leave; required.');
  option('--leader <id>', "The leader cluster ID to leave, when the ClusterSet lists several (required then); the others stay.", { default: 'the only leader' });
  option('--wait <seconds|2m>', 'How long to wait for the member ClusterSet to go.', { default: `${String(DEFAULT_WAIT_SECONDS)}s` });
  command.addOption(new Option('--dry-run', 'Check everything and print what would be deleted and changed, write nothing.'));
  return command.action(async (values: SideFlags & { clusterset?: string; leader?: string; dryRun?: boolean }) => {
    status.code = await report(io, async () => {
      if (values.clusterset === undefined) throw new UsageError("--clusterset is required (see 'clusterset-agent leave --help')");
      const result = await leave({
        leader: loadKubeConfig(values.leaderKubeconfig, values.leaderContext, 'leader'),
        member: loadKubeConfig(values.memberKubeconfig, values.memberContext, 'member'),
        clusterSet: values.clusterset,
        leaderClusterID: values.leader,
        memberNamespace: values.memberNamespace ?? DEFAULT_MEMBER_NAMESPACE,
        serviceAccount: values.serviceAccount,
        dryRun: values.dryRun === true,
        waitSeconds: waitSeconds(values.wait),
        progress: (line) => { io.stderr.write(`${line}\n`); },
      });
      const stays = result.kept.map((k) => `  - ${k}\n`).join('');
      if (values.dryRun === true) {
        io.stdout.write(`leave would, in order:\n${result.plan.steps.map((s) => `  ${describeStep(s)}\n`).join('')}${stays === '' ? '' : `and would leave in place:\n${stays}`}`);
        return 0;
      }
      // What join --configure-dns added, once no ClusterSet is left in the member to import for.
      const dns = await undoMemberDNSWhenUnused(loadKubeConfig(values.memberKubeconfig, values.memberContext, 'member'), io);
      const what = result.leadersLeft.length === 0 ? `ClusterSet ${values.clusterset}` : `leader ${result.target.leaderClusterID} of ClusterSet ${values.clusterset} (its leaders now: ${result.leadersLeft.join(', ')})`;
      io.stdout.write(`left ${what}: ${String(result.removed.length + dns)} object(s) removed or changed\n`);
      if (result.kept.length === 0) return 0;
      io.stderr.write(`not removed, still in place:\n${stays}`);
      return EXIT_LEFT_INCOMPLETE;
    });
  });
}
