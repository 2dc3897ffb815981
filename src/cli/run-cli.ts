import { readFileSync } from 'node:fs';
import { VeridexError } from '../errors/index.js';
import { type CliIo, EXIT, processIo, UsageError } from './io.js';

type Command = (argv: string[], io: CliIo) => number | Promise<number>;

/** A command's code and usage text, loaded when the command is run. */
interface LoadedCommand {
  run: Command;
  usage: string;
}

// Each command is imported only when it runs: the whole library takes ~1 s to load, a command
// like `approvals list` needs a fifth of it, and `--help` none of it.
const COMMANDS: Record<string, () => Promise<LoadedCommand>> = {
  demo: () =>
    import('./demo-command.js').then((m) => ({ run: m.demoCommand, usage: m.DEMO_USAGE })),
  approvals: () =>
    import('./approvals-command.js').then((m) => ({
      run: m.approvalsCommand,
      usage: m.APPROVALS_USAGE,
    })),
  approvers: () =>
    import('./approvers-command.js').then((m) => ({
      run: m.approversCommand,
      usage: m.APPROVERS_USAGE,
    })),
  verify: () =>
    import('./verify-command.js').then((m) => ({ run: m.verifyCommand, usage: m.VERIFY_USAGE })),
  audit: () =>
    import('./audit-command.js').then((m) => ({ run: m.auditCommand, usage: m.AUDIT_USAGE })),
  keys: () =>
    import('./keys-command.js').then((m) => ({ run: m.keysCommand, usage: m.KEYS_USAGE })),
  runs: () =>
    import('./runs-command.js').then((m) => ({ run: m.runsCommand, usage: m.RUNS_USAGE })),
  serve: () =>
    import('./serve-command.js').then((m) => ({
      run: (argv, io) => m.serveCommand(argv, io),
      usage: m.SERVE_USAGE,
    })),
};

const HELP = `veridex — governance for LangGraph.js

Commands:
  demo                     run the treasury scenario end to end on embedded PGlite
  approvals list|approve|reject   list and decide (sign) pending approval requests
  approvers keygen|add|list|revoke|export   the approver directory and approver keys
  verify <bundle.json>     verify a signed evidence bundle offline (--since older.json: and that it extends it)
  audit verify|publish     check the database's audit log against published tree heads; sign and publish heads
  keys generate            create an Ed25519 evidence-signing key pair
  runs export|import       move a thread in or out as a portable veridex.run/v1 file
  serve                    the approvals inbox: web page, REST API, live events, passkeys

Options:
  --version, -v            print the version
  --help, -h               print this help

The database is --database-url, else $DATABASE_URL, else PGlite in ./.veridex/db (through its
holder's socket when another process has it open with expose).

Run \`veridex <command> --help\` for details.`;

/** The package's version, read from its package.json (two levels up from src/cli or dist/cli). */
export function cliVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

/**
 * Runs the `veridex` command line and returns its exit code (0 ok, 1 failed/invalid, 2 usage).
 * Errors become one readable line; stack traces are never printed.
 */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    io.out(cliVersion());
    return EXIT.ok;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(HELP);
    return name ? EXIT.ok : EXIT.usage;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    io.err(`Unknown command "${name}".\n\n${HELP}`);
    return EXIT.usage;
  }
  const command = await load();
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
