import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { AuditLog, PostgresAuditStore, writeKeyPair } from '../audit/index.js';
import {
  type Approver,
  canonicalIdentity,
  DIRECTORY_AUDIT_THREAD,
  type DirectoryAuthority,
  PostgresApproverDirectory,
  recordDirectoryChange,
  serializeApprovers,
  sponsoredKeys,
} from '../identity/index.js';
import { InvitationStore, invitationLink } from '../server/invitations.js';
import { DATABASE_OPTION_HELP, openCommandDatabase } from './database-option.js';
import { type CliIo, EXIT, UsageError } from './io.js';

/** Where `veridex approvers keygen` writes key pairs by default. */
export const DEFAULT_APPROVER_KEY_DIR = './.veridex/keys/approvers';

export const APPROVERS_USAGE = `Usage:
  veridex approvers keygen <name> [--out DIR]
  veridex approvers add <id> --key PUBLIC_KEY [--key ...] [--name "Display Name"] [--role ROLE ...]
  veridex approvers add-key <id> --key PUBLIC_KEY
  veridex approvers list [--json]
  veridex approvers revoke <id> [--key KEY_ID]
  veridex approvers seal <id> [--key KEY_ID]
  veridex approvers export [--out approvers.json]
  veridex approvers invite <id> [--name "Display Name"] [--role ROLE ...] [--origin URL] [--ttl-hours 24]
  (add, add-key, revoke, seal and invite take --operator NAME: who you are, recorded with the
   change; default: your login name. Every action takes --directory-key FILE: the directory
   key, default $VERIDEX_DIRECTORY_KEY, else ./.veridex/keys/directory-ed25519.key)

Manages the approver directory in the configured database: who may decide approvals, and
the Ed25519 public keys their decisions must be signed with. keygen writes DIR/<name>.key
(mode 0600; give it to the approver only) and DIR/<name>.pub (default DIR ${DEFAULT_APPROVER_KEY_DIR}).
export writes the public directory an auditor passes to \`veridex verify --approvers\`, with
the audited history of directory changes (who added or revoked which key, and how they proved it).
invite adds the approver if needed and prints a one-time link to the inbox (veridex serve;
--origin is its URL, default http://localhost:8787) where they register a passkey.
Every approver and key is sealed with the directory key; rows written any other way (SQL)
are ignored by every process and listed by \`list\` as unsealed. seal vouches for an
approver's rows as they stand (rows from before directory seals): check them first.
Ids are compared in canonical form: a second approver whose id looks like an existing one
(case, spaces, invisible characters, look-alike letters) is refused.
${DATABASE_OPTION_HELP}`;

/** `veridex approvers keygen|add|add-key|list|revoke|export`. */
export async function approversCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      key: { type: 'string', multiple: true },
      name: { type: 'string' },
      role: { type: 'string', multiple: true },
      out: { type: 'string' },
      json: { type: 'boolean' },
      origin: { type: 'string' },
      'ttl-hours': { type: 'string' },
      operator: { type: 'string' },
      'directory-key': { type: 'string' },
      'database-url': { type: 'string' },
    },
  });
  const [action, subject, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);

  if (action === 'keygen') {
    if (!subject) throw new UsageError('keygen needs a name for the key files');
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(subject) || subject.startsWith('.')) {
      throw new UsageError('the key name may use letters, digits, ".", "_" and "-" only');
    }
    const files = writeKeyPair(values.out ?? DEFAULT_APPROVER_KEY_DIR, undefined, subject);
    io.out(`key id       ${files.keyId}`);
    io.out(`private key  ${files.privateKeyPath} (mode 0600, for the approver only)`);
    io.out(`public key   ${files.publicKeyPath}`);
    io.out(`Register it: veridex approvers add <id> --key ${files.publicKeyPath}`);
    return EXIT.ok;
  }
  const needsId = ['add', 'add-key', 'revoke', 'seal', 'invite'];
  if (needsId.includes(action ?? '') && !subject) throw new UsageError(`${action} needs an id`);
  if ((action === 'add' || action === 'add-key') && !values.key?.length) {
    throw new UsageError(`${action} needs --key <public key file>`);
  }
  if (!['add', 'add-key', 'list', 'revoke', 'seal', 'export', 'invite'].includes(action ?? '')) {
    throw new UsageError('expected keygen, add, add-key, list, revoke, seal, export or invite');
  }
  const ttlHours = values['ttl-hours'] === undefined ? 24 : Number(values['ttl-hours']);
  if (!(ttlHours > 0 && ttlHours <= 24 * 30)) throw new UsageError('--ttl-hours must be 1..720');

  const operator = (values.operator ?? userInfo().username).trim();
  if (operator === '' || operator.length > 200) throw new UsageError('--operator needs a name');
  const authority: DirectoryAuthority = { via: 'operator', operator };

  const db = await openCommandDatabase(values['database-url']);
  try {
    const directory = new PostgresApproverDirectory(
      db,
      values['directory-key'] ? { sealKey: values['directory-key'] } : {},
    );
    const audit = new AuditLog({ store: new PostgresAuditStore(db), secretFingerprints: false });
    // Every change this command makes is an audited directory change, with the operator's name.
    const recordAdded = async (approver: Approver, keys = approver.keys) => {
      for (const key of keys) {
        await recordDirectoryChange(audit, {
          change: 'key_added',
          approver: approver.id,
          keyId: key.keyId,
          publicKey: key.publicKey,
          at: key.addedAt,
          authorisedBy: authority,
        });
      }
    };
    const recordApprover = (approver: Approver) =>
      recordDirectoryChange(audit, {
        change: 'approver_added',
        approver: approver.id,
        at: approver.addedAt,
        authorisedBy: authority,
      });
    switch (action) {
      case 'add': {
        const approver = await directory.add({
          id: subject!,
          ...(values.name ? { displayName: values.name } : {}),
          roles: values.role ?? [],
          publicKeys: values.key ?? [],
        });
        await recordApprover(approver);
        await recordAdded(approver);
        io.out(`added ${describe(approver)}`);
        return EXIT.ok;
      }
      case 'add-key': {
        let approver: Approver | undefined;
        for (const key of values.key ?? []) {
          approver = await directory.addKey(subject!, key);
          await recordAdded(approver, approver.keys.slice(-1));
        }
        io.out(`updated ${describe(approver!)}`);
        return EXIT.ok;
      }
      case 'revoke': {
        // Revoking an approver also revokes the keys it sponsors: record each of those too.
        const sponsored = values.key?.[0]
          ? []
          : sponsoredKeys(await directory.list(), canonicalIdentity(subject));
        const approver = await directory.revoke(
          canonicalIdentity(subject),
          values.key?.[0] ? { keyId: values.key[0] } : {},
        );
        const keyId = values.key?.[0];
        const at = keyId
          ? approver.keys.find((key) => key.keyId === keyId)?.revokedAt
          : approver.revokedAt;
        await recordDirectoryChange(audit, {
          change: keyId ? 'key_revoked' : 'approver_revoked',
          approver: approver.id,
          ...(keyId ? { keyId } : {}),
          at: at ?? new Date().toISOString(),
          authorisedBy: authority,
        });
        for (const { approver: holder, key } of sponsored) {
          await recordDirectoryChange(audit, {
            change: 'key_revoked',
            approver: holder.id,
            keyId: key.keyId,
            at: at ?? new Date().toISOString(),
            authorisedBy: authority,
          });
          io.out(`revoked key ${key.keyId} of ${holder.id} (sponsored by ${approver.id})`);
        }
        io.out(`revoked ${values.key?.[0] ? `key ${values.key[0]} of ` : ''}${describe(approver)}`);
        return EXIT.ok;
      }
      case 'invite': {
        let approver = await directory.get(subject!);
        if (!approver) {
          approver = await directory.add({
            id: subject!,
            ...(values.name ? { displayName: values.name } : {}),
            roles: values.role ?? [],
          });
          await recordApprover(approver);
        }
        const origin = new URL(values.origin ?? 'http://localhost:8787').origin;
        const invitation = await new InvitationStore(db, { seal: directory.seal }).create({
          approverId: approver.id,
          createdBy: authority,
          ttlMs: ttlHours * 60 * 60 * 1000,
        });
        io.out(`invitation for ${describe(approver)}`);
        io.out(
          `link (one use, expires ${invitation.expiresAt}; send it over a channel you trust):`,
        );
        io.out(invitationLink(origin, invitation.token));
        return EXIT.ok;
      }
      case 'seal': {
        const keyId = values.key?.[0];
        const approver = await directory.vouch(subject!, keyId ? { keyId } : {});
        await recordDirectoryChange(audit, {
          change: 'entry_sealed',
          approver: approver.id,
          ...(keyId ? { keyId } : {}),
          at: new Date().toISOString(),
          authorisedBy: authority,
        });
        io.out(`sealed ${describe(approver)}`);
        return EXIT.ok;
      }
      case 'list': {
        const approvers = await directory.list();
        if (values.json) io.out(serializeApprovers(approvers));
        else if (approvers.length === 0) io.out('No approvers. Add one: veridex approvers add');
        else for (const approver of approvers) io.out(describe(approver));
        // Rows nobody sealed count for nothing; say so, loudly, on stderr.
        for (const entry of await directory.unsealed()) {
          io.err(
            entry.reason === 'predates_approver'
              ? `CARRIED (ignored): key ${entry.keyId} of ${entry.approver} — sealed for an earlier approver of that id (added before this entry); remove the row`
              : `UNSEALED (ignored): ${entry.keyId ? `key ${entry.keyId} of ` : 'approver '}${entry.approver} — not sealed by directory key ${directory.seal.keyId}; written outside veridex, or before seals (veridex approvers seal)`,
          );
        }
        return EXIT.ok;
      }
      default: {
        const text = serializeApprovers(
          await directory.list(),
          await audit.events(DIRECTORY_AUDIT_THREAD),
        );
        if (values.out) {
          writeFileSync(values.out, `${text}\n`);
          io.out(`wrote ${values.out}`);
        } else io.out(text);
        return EXIT.ok;
      }
    }
  } finally {
    await db.close();
  }
}

function describe(approver: Approver): string {
  const keys = approver.keys
    .map((key) => `${key.keyId}${key.revokedAt ? ' (revoked)' : ''}`)
    .join(', ');
  const roles = approver.roles.length > 0 ? ` roles ${approver.roles.join(', ')}` : '';
  const revoked = approver.revokedAt ? ' REVOKED' : '';
  return `${approver.id} "${approver.displayName}"${roles} keys ${keys || 'none'}${revoked}`;
}
