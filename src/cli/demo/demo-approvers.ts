import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Ed25519Signer, readPrivateKey, writeKeyPair } from '../../audit/index.js';
import type { ApproverDirectory } from '../../identity/index.js';

/** Where the demo keeps its approvers' key files. */
export const DEMO_APPROVER_KEY_DIR = './.veridex/keys/approvers';

/** One demo approver: their id in the directory and the key they sign with. */
export interface DemoApprover {
  id: string;
  name: string;
  signer: Ed25519Signer;
}

/**
 * The demo's approver: a key pair in `./.veridex/keys/approvers/<file>.key` (generated on the
 * first run, private key mode 0600) registered in the database's approver directory — the
 * same two steps as `veridex approvers keygen` and `veridex approvers add`.
 */
export async function demoApprover(
  directory: ApproverDirectory,
  file: string,
  id: string,
  name: string,
): Promise<DemoApprover> {
  const privateKeyPath = join(DEMO_APPROVER_KEY_DIR, `${file}.key`);
  if (!existsSync(privateKeyPath)) writeKeyPair(DEMO_APPROVER_KEY_DIR, undefined, file);
  const signer = new Ed25519Signer(readPrivateKey(privateKeyPath));
  const registered = await directory.get(id);
  if (!registered) {
    await directory.add({ id, displayName: name, publicKeys: [signer.publicKey] });
  } else if (!registered.keys.some((key) => key.keyId === signer.keyId)) {
    await directory.addKey(id, signer.publicKey);
  }
  return { id, name, signer };
}
