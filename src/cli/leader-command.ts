// `clusterset-agent leader ...`: the leader command group and its `create-member-token`, which
// prints the member-side Secret on stdout (progress on stderr). `leader run` joins the group from
// main.ts. What the token needs on the leader is the library's (src/leader/member-token.ts);
// this file is flags, usage text, printing and exit codes: 0 done, 1 failed or refused, 2 a bad
// command line.
import { Command, Option } from 'commander';
import { KubeConfig } from '@kubernetes/client-node';
import { CLUSTER_ID_ANNOTATION, DEFAULT_LEADER_NAMESPACE } from '../common/api/names.js';
import { describeError } from '../common/kube/errors.js';
import { MEMBER_ROLE_NAME } from '../leader/decisions/member-role.js';
import {
  createMemberToken, DEFAULT_MEMBER_NAMESPACE, DEFAULT_SECRET_NAME, DEFAULT_TOKEN_DURATION_SECONDS, MemberTokenError, parseDuration,
} from '../leader/member-token.js';
import { describeOption, EXIT_USAGE, runCommand, valueNotAFlag, type CommandIO, type ExitStatus } from './command.js';

/** `leader create-member-token` as a command; its action leaves 0, or 1 (failed or refused), in `status`. */
export function createMemberTokenCommand(io: CommandIO, status: ExitStatus): Command {
  const command = new Command('create-member-token')
    .summary("let a member in: its ServiceAccount, Role, RoleBinding and token Secret")
    .description(
      'Lets one member in. Run against the LEADER cluster with admin rights: creates (idempotently) the ' +
        `member's ServiceAccount (annotated ${CLUSTER_ID_ANNOTATION}=ID), the Role ${MEMBER_ROLE_NAME} and a RoleBinding ` +
        'in the leader namespace, issues a token and prints the member-side Secret as YAML on stdout (progress on stderr).',
    )
    .usage('--member-id ID [options]')
    .addHelpText('after', '\nExample:\n  clusterset-agent leader create-member-token --member-id east | kubectl --context member apply -f -\n');
  const option = (flags: string, text: string, extras: { env?: string; default?: string }): void => {
    const added = new Option(flags, describeOption(text, extras));
    command.addOption(added.argParser(valueNotAFlag(command, added)));
  };
  option('--member-id <id>', "The member's cluster ID (its ClusterSet spec.clusterID); required.", {});
  option('--namespace <ns>', 'The leader namespace.', { default: DEFAULT_LEADER_NAMESPACE });
  option('--kubeconfig <file>', 'Kubeconfig of the leader cluster.', { env: 'KUBECONFIG', default: '~/.kube/config' });
  option('--context <name>', 'Context of that kubeconfig (as for status; join and leave call it --leader-context).', { default: 'its current context' });
  option('--service-account <name>', "The member's ServiceAccount in the leader namespace.", { default: 'member-ID' });
  option('--duration <8760h|seconds>', 'Requested token lifetime; the API server may shorten it.', { default: `${DEFAULT_TOKEN_DURATION_SECONDS / 3600}h` });
  option('--secret-name <name>', 'Name of the Secret to create in the member cluster.', { default: DEFAULT_SECRET_NAME });
  option('--member-namespace <ns>', "Namespace of that Secret: the agent's namespace.", { default: DEFAULT_MEMBER_NAMESPACE });
  return command.action(async (values: MemberTokenFlags) => {
    status.code = await createFromFlags(values, io);
  });
}

interface MemberTokenFlags {
  readonly memberId?: string;
  readonly namespace?: string;
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly serviceAccount?: string;
  readonly duration?: string;
  readonly secretName?: string;
  readonly memberNamespace?: string;
}

async function createFromFlags(values: MemberTokenFlags, io: CommandIO): Promise<number> {
  const { memberId } = values;
  if (memberId === undefined || memberId === '') {
    io.stderr.write(`error: --member-id is required (see 'clusterset-agent leader create-member-token --help')\n`);
    return EXIT_USAGE;
  }
  try {
    const durationSeconds = values.duration === undefined ? undefined : parseDuration(values.duration);
    const kc = new KubeConfig();
    const source = values.kubeconfig ?? '(default: $KUBECONFIG or ~/.kube/config)';
    try {
      if (values.kubeconfig !== undefined) kc.loadFromFile(values.kubeconfig);
      else kc.loadFromDefault();
    } catch (err) {
      throw new MemberTokenError(`cannot load kubeconfig ${source}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (values.context !== undefined) {
      if (kc.getContextObject(values.context) === null) {
        throw new MemberTokenError(`kubeconfig ${source} has no context ${values.context} (contexts: ${kc.getContexts().map((c) => c.name).join(', ')})`);
      }
      kc.setCurrentContext(values.context);
    }
    const result = await createMemberToken(kc, {
      memberId,
      ...(values.namespace !== undefined && { namespace: values.namespace }),
      ...(values.serviceAccount !== undefined && { serviceAccount: values.serviceAccount }),
      ...(durationSeconds !== undefined && { durationSeconds }),
      ...(values.secretName !== undefined && { secretName: values.secretName }),
      ...(values.memberNamespace !== undefined && { memberNamespace: values.memberNamespace }),
      log: (message) => { io.stderr.write(`${message}\n`); },
    });
    io.stdout.write(result.secretYaml);
    return 0;
  } catch (err) {
    io.stderr.write(`error: ${err instanceof MemberTokenError ? err.message : describeError(err)}\n`);
    return 1;
  }
}

/** The `leader` command group: create-member-token, plus any further subcommands (`leader run` comes from the CLI). */
export function leaderCommand(io: CommandIO, status: ExitStatus, ...more: readonly Command[]): Command {
  const leader = new Command('leader').summary('commands for a leader cluster').description('Commands for a leader cluster.');
  for (const command of [...more, createMemberTokenCommand(io, status)]) leader.addCommand(command);
  return leader;
}

/** Runs `leader <subcommand> ...`; returns the exit code (0 ok, 1 failed or refused, 2 bad command line). */
export async function runLeaderCommand(argv: readonly string[], io: CommandIO = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const status: ExitStatus = { code: 0 };
  const program = new Command('clusterset-agent').addCommand(leaderCommand(io, status));
  return runCommand(program, ['leader', ...argv], io, status);
}
