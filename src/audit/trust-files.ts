import { existsSync, lstatSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { VeridexError } from '../errors/index.js';

/**
 * Refuses a trust file (a verifier's public key, the approvers you trust) that another local
 * user could have rewritten (README, *Security*: "another local user"): it must be a regular
 * file owned by you or root, writable by no one else, in a directory no one else can replace
 * it in (not group- or world-writable, unless sticky like /tmp). Like ssh's checks of
 * `authorized_keys`: a verification against a key someone else can swap proves nothing.
 *
 * @throws VeridexError `trust_file_insecure` naming the file and the `chmod` that fixes it.
 */
export function assertTrustedFile(path: string): void {
  if (process.platform === 'win32') return;
  const uid = process.getuid?.();
  const owners = new Set([0, ...(uid === undefined ? [] : [uid])]);
  const file = lstatSync(path);
  if (file.isSymbolicLink() || !file.isFile()) {
    throw insecure(path, `${path} is not a regular file (a link can be pointed elsewhere)`);
  }
  if (!owners.has(file.uid)) {
    throw insecure(path, `${path} is owned by uid ${file.uid}, not by you or root`);
  }
  if ((file.mode & 0o022) !== 0) {
    throw insecure(path, `${path} is writable by others (chmod go-w ${path})`);
  }
  const directory = statSync(dirname(resolve(path)));
  const sticky = (directory.mode & 0o1000) !== 0;
  if ((directory.mode & 0o022) !== 0 && !sticky) {
    throw insecure(
      path,
      `${dirname(resolve(path))} is writable by others, who could replace ${path} (chmod go-w on the directory)`,
    );
  }
}

/** {@link assertTrustedFile} for a command-line value that may be a key's text or a file. */
export function assertTrustedIfFile(value: string): void {
  if (value.includes('-----BEGIN') || !existsSync(value)) return;
  assertTrustedFile(value);
}

function insecure(path: string, why: string): VeridexError {
  return new VeridexError(
    'trust_file_insecure',
    `Refusing to trust ${path}: ${why}. Another local user could have rewritten it.`,
    { details: { path } },
  );
}
