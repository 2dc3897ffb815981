// False positives a real user meets (lower severity than a bypass, but they train operators to
// accept holds unread, and the sentence the scan removes is the operation's documentation).
// Ordinary OpenAPI descriptions match the needle tables: "You must" is a directive, "send …
// password" a secret read, "report … https://" an exfiltration, "do not notify the user" a
// concealment, a `<system>` placeholder an unclosed model tag (which removes the rest of the
// description). The first case is verbatim from a public OpenAPI document ("You must be
// authenticated to use this method."); the others are the phrasing of common auth, webhook and
// notification endpoints. Each operation is held for review and loses the sentence.
//
// Status (scan fix, branch imp-fix-scan): the first three cases pass (`NOT_BEFORE` in
// poisoning-needles.ts: `you must be|have`, a secret's name before `reset`, `report bugs`).
// Branch importer-fix: the notification sentence passes (`NEAR_NOT_BEFORE`: a channel after
// the user); the `<system>` placeholder is no longer cut but is still held, by the scan's
// hold-only finding and by the output sanitiser's role-token hold (OPEN-ATTACKS.md says why).
//
// Fix (mechanism): weigh context rather than single needles — a directive needs an object that
// is a tool call or an instruction to the assistant (`you must … call|pass|send|read`), not a
// precondition (`you must be authenticated`); a secret or exfiltration pair needs the secret
// and the URL to be the object of the same clause and the URL to be outside the operation's
// own server and documentation hosts; a tag block needs a closing tag or an instruction inside
// it before everything after it is cut. Keep removal for high-confidence findings only and let
// low-confidence ones hold without cutting.
import { describe, expect, it } from 'vitest';
import { openApiOperationDescribedAs } from './fixtures/poisoned-imports.js';

const ordinary: string[] = [
  'You must be authenticated to use this method.',
  'Send a password reset email to the user.',
  'Report bugs at https://github.com/example/api/issues.',
  'Sets the notification preference. If false, do not notify the user by email.',
  'Updates the <system> settings of a tenant. Requires the admin scope.',
];

describe('ordinary API descriptions', () => {
  for (const text of ordinary) {
    it(`"${text}" is neither held nor cut`, async () => {
      const tool = await openApiOperationDescribedAs(text);
      expect(tool.review, 'held for review').toBeUndefined();
      expect(tool.description).toBe(text);
    });
  }
});
