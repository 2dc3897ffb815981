import { parseArgs } from 'node:util';
import { DEFAULT_KEY_DIR, writeKeyPair } from '../audit/index.js';
import { type CliIo, EXIT, UsageError } from './io.js';

export const KEYS_USAGE = `Usage: veridex keys generate [--out DIR]

Writes a new Ed25519 evidence-signing key pair as PEM files into DIR (default ${DEFAULT_KEY_DIR}).
The private key file gets mode 0600; share the .pub file with auditors.`;

/** `veridex keys generate`. */
export function keysCommand(argv: string[], io: CliIo): number {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { out: { type: 'string' } },
  });
  if (positionals[0] !== 'generate' || positionals.length > 1)
    throw new UsageError('expected `keys generate`');
  const files = writeKeyPair(values.out ?? DEFAULT_KEY_DIR);
  io.out(`key id       ${files.keyId}`);
  io.out(`private key  ${files.privateKeyPath} (mode 0600, keep it secret)`);
  io.out(`public key   ${files.publicKeyPath}`);
  return EXIT.ok;
}
