import { findAssignedSecrets, findContextualCredentials } from './credential-context.js';
import type { CredentialKind, CredentialSpan } from './credential-kind.js';
import { findTriggeredCredentials } from './credential-triggers.js';
import { scanWords, type WordContext } from './credential-words.js';
import { TextEdits } from './text-edits.js';

export type { CredentialKind } from './credential-kind.js';

/** The result of {@link redactCredentials}. */
export interface CredentialRedaction {
  text: string;
  /** Kinds found, each once, in order of first appearance. Never the values. */
  kinds: CredentialKind[];
}

/**
 * Replaces credential-shaped substrings with `[REDACTED:<kind>]`: vendor keys and tokens
 * (AWS, GitHub, Slack tokens and webhooks, Stripe keys and webhook secrets, OpenAI, Anthropic,
 * Google API keys and OAuth client secrets, npm, Hugging Face, SendGrid, Twilio), JWTs, PEM
 * private keys (also truncated ones) and PuTTY keys, Azure storage keys and SAS signatures,
 * HTTP Bearer and Basic credentials, passwords in URLs and in `name=value` assignments,
 * BIP-39 mnemonics, and — next to the words that announce them — bare AWS secret keys, hex
 * private keys and Twilio auth tokens. Where the name of a credential comes first
 * (`password=`, `Bearer `, `user:` in a URL) it is kept.
 *
 * Runs in time linear in the length of `text` (hand-written scanners, no backtracking
 * regular expression; `npm run bench -- sanitize` measures the worst cases). Deterministic and
 * idempotent: redacting the result again changes nothing and reports no kinds.
 *
 * @example redactCredentials('url=postgres://app:hunter22@db/prod').text
 * // 'url=postgres://app:[REDACTED:connection_string_password]@db/prod'
 */
export function redactCredentials(text: string): CredentialRedaction {
  // Stage 1: what stands on its own (a prefix, a header, a name in front of a value, twelve
  // wordlist words). The word pass skips what the others found, as it skips the markers
  // they become, and records the context the second stage needs.
  const triggered: CredentialSpan[] = [];
  findTriggeredCredentials(text, triggered);
  const others = merge(triggered);
  const assigned: CredentialSpan[] = [];
  findAssignedSecrets(text, assigned, others);
  const standalone = assigned.length === 0 ? others : merge([...triggered, ...assigned]);
  const mnemonics: CredentialSpan[] = [];
  const words = scanWords(text, mnemonics, standalone);
  const first = apply(
    text,
    mnemonics.length === 0 ? standalone : merge([...standalone, ...mnemonics]),
  );
  // Stage 2, on the redacted text: shapes that need context. Context is measured from the
  // last context word, marker or redacted candidate of its kind, so that redacting (which
  // shortens the text) never brings a candidate into range: redacting twice changes nothing.
  const contextual: CredentialSpan[] = [];
  findContextualCredentials(first.text, contextual, shift(words, first.spans));
  if (contextual.length === 0) return { text: first.text, kinds: first.kinds };
  const second = apply(first.text, merge(contextual));
  return { text: second.text, kinds: [...new Set([...first.kinds, ...second.kinds])] };
}

// Overlapping spans become their union, under the kind of the one that starts first (the
// most specific on a tie), so nothing any rule matched survives.
function merge(spans: CredentialSpan[]): CredentialSpan[] {
  if (spans.length < 2) return spans; // nothing to order or join (the common case: none)
  const order = (a: CredentialSpan, b: CredentialSpan) =>
    a.start - b.start || a.rank - b.rank || b.end - a.end;
  let sorted = true;
  for (let index = 1; index < spans.length && sorted; index++) {
    sorted = order(spans[index - 1]!, spans[index]!) <= 0;
  }
  if (!sorted) spans.sort(order);
  const merged: CredentialSpan[] = [];
  for (const span of spans) {
    const last = merged.at(-1);
    if (last && span.start < last.end) {
      if (span.end > last.end) merged[merged.length - 1] = { ...last, end: span.end };
    } else {
      merged.push(span);
    }
  }
  return merged;
}

interface Applied {
  text: string;
  kinds: CredentialKind[];
  /** The merged spans that were replaced (each by the marker of its kind). */
  spans: CredentialSpan[];
}

const markers = new Map<CredentialKind, string>();
const markerOf = (kind: CredentialKind): string => {
  let marker = markers.get(kind);
  if (marker === undefined) {
    marker = `[REDACTED:${kind}]`;
    markers.set(kind, marker);
  }
  return marker;
};

function apply(text: string, spans: CredentialSpan[]): Applied {
  if (spans.length === 0) return { text, kinds: [], spans };
  const kinds: CredentialKind[] = [];
  const edits = new TextEdits();
  for (const span of spans) {
    edits.add(span.start, span.end - span.start, markerOf(span.kind));
    if (!kinds.includes(span.kind)) kinds.push(span.kind);
  }
  return { text: edits.apply(text), kinds, spans };
}

// Context positions of the original text, moved to where they are after `spans` were
// replaced by their markers. A context inside a span (a key word that is one of the words of
// a redacted mnemonic) is dropped: the next pass reads a marker there, and no context (left
// in place, it also broke the order the context lists must keep).
function shift(words: WordContext, spans: Applied['spans']): WordContext {
  if (spans.length === 0) return words;
  const move = (ends: number[]): number[] => {
    const moved: number[] = [];
    let next = 0;
    let offset = 0;
    for (const end of ends) {
      while (next < spans.length && spans[next]!.end < end) {
        const span = spans[next]!;
        offset += span.end - span.start - markerOf(span.kind).length;
        next++;
      }
      // Words are read only inside mnemonics (the word pass skips other credentials, and
      // records a context at the end of some: that one the marker keeps).
      const span = spans[next];
      if (span && span.start < end) {
        if (end < span.end || span.kind === 'bip39_mnemonic') continue;
        offset += span.end - span.start - markerOf(span.kind).length; // ends with the marker
        next++;
      }
      moved.push(end - offset);
    }
    return moved;
  };
  return {
    aws: move(words.aws),
    privateKey: move(words.privateKey),
    key: move(words.key),
    twilio: move(words.twilio),
  };
}
