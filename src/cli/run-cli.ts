import { VeridexError } from '../errors/index.js';
import { APPROVALS_USAGE, approvalsCommand } from './approvals-command.js';
import { DEMO_USAGE, demoCommand } from './demo-command.js';
import { type CliIo, EXIT, processIo, UsageError } from './io.js';
import { KEYS_USAGE, keysCommand } from './keys-command.js';
import { VERIFY_USAGE, verifyCommand } from './verify-command.js';

type Command = (argv: string[], io: CliIo) => number | Promise<number>;

const COMMANDS: Record<string, { run: Command; usage: string }> = {
  demo: { run: demoCommand, usage: DEMO_USAGE },
  approvals: { run: approvalsCommand, usage: APPROVALS_USAGE },
  verify: { run: verifyCommand, usage: VERIFY_USAGE },
  keys: { run: keysCommand, usage: KEYS_USAGE },
};

const HELP = `veridex — governance for LangGraph.js

Commands:
  demo                     run the treasury scenario end to end on embedded PGlite
  approvals list|approve|reject   list and decide pending approval requests
  verify <bundle.json>     verify a signed evidence bundle offline
  keys generate            create an Ed25519 evidence-signing key pair

Run \`veridex <command> --help\` for details.`;

/**
 * Runs the `veridex` command line and returns its exit code (0 ok, 1 failed/invalid, 2 usage).
 * Errors become one readable line; stack traces are never printed.
 */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(HELP);
    return name ? EXIT.ok : EXIT.usage;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`Unknown command "${name}".\n\n${HELP}`);
    return EXIT.usage;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(command.usage);
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      io.err(`veridex ${name}: ${(error as Error).message}\n\n${command.usage}`);
      return EXIT.usage;
    }
    if (VeridexError.is(error)) {
      io.err(`veridex ${name} failed [${error.code}]: ${error.message}`);
      return EXIT.failed;
    }
    io.err(`veridex ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.failed;
  }
}
