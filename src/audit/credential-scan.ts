import type { CredentialKind, CredentialSpan } from './credential-kind.js';
import { startsRun } from './credential-text.js';

/** The state of one trigger pass over a text (see findTriggeredCredentials). */
export interface Scan {
  text: string;
  found: CredentialSpan[];
  /** PEM END lines found so far, per label: the first at or after the last search (-1: none). */
  pemEnds: Map<string, { at: number }>;
  /** The last truncated PEM body read: a body starting inside it ends where it ends. */
  pemBody: { start: number; end: number };
  /** Where the credentials found so far end. */
  ends: Set<number>;
  /** AWS key id candidates followed by more word characters (see awsKeyId). */
  pendingAwsIds: number[];
}

/** Records a credential found by a rule. */
export const push = (scan: Scan, start: number, end: number, kind: CredentialKind, rank = 1) => {
  scan.found.push({ start, end, kind, rank });
  scan.ends.add(end);
};

// A left boundary: no character of `mask` before `at` — or a credential found so far ends
// right there. Its marker ("…]") will be a boundary when the result is redacted again, so the
// first redaction must see one too (redacting twice changes nothing).
export const boundary = (scan: Scan, at: number, mask: number): boolean =>
  startsRun(scan.text, at, mask) || scan.ends.has(at);
