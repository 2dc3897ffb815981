import { redactCredentials, SecretFingerprintStore, SecretScrubber } from '../src/audit/index.js';
import { createDatabase, migrate } from '../src/db/index.js';
import { sanitizeOutput } from '../src/tools/index.js';
import { regexSanitize } from './baseline/regex-sanitizer.js';

const MB = 1 << 20;
const fill = (unit: string, size = MB): string =>
  unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
const randomBase64 = (size: number): string => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let state = 12345;
  let text = '';
  for (let index = 0; index < size; index++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    text += alphabet[state >>> 26];
  }
  return text;
};

/**
 * Adversarial inputs, about 1 MiB of UTF-16 each. The first three are the ones the red-team
 * report timed (19.6 s, 24.6 s and 10.2 s at 200–400 KB with the regular expressions).
 */
export const GENERATORS: Record<string, (size?: number) => string> = {
  dcs_8bit: (size) => fill('\u0090', size),
  jwt_dashes: (size) => fill('eyJ-', size),
  scheme_chain: (size) => `${fill('a-', size)}://x`,
  osc_unterminated: (size) => fill('\u001b]0;title', size),
  nested_escapes: (size) => fill('\u001b[\u001b]\u009d\u001bP\u009b1;', size),
  csi_params: (size) => `\u001b[${fill('1;', size)}`,
  base64_long: (size) => randomBase64(size ?? MB),
  base64_padding: (size) => fill('QUJD=', size),
  chat_token_prefix: (size) => fill('<|', size),
  chat_token_bodies: (size) => fill(`<|${'a'.repeat(63)}`, size),
  tag_prefix: (size) => fill('<tool-a ', size),
  // The densest matches: a tag or a chat token every five characters (each an edit).
  tag_dense: (size) => fill('<tool', size),
  chat_token_dense: (size) => fill('<|a|>', size),
  tag_and_escapes: (size) => fill('<tool %41', size),
  escaped_openers: (size) => fill('\\u003c|', size),
  inst_prefix: (size) => fill('[INST', size),
  header_lines: (size) => fill('\n**Sy\u0455tem', size),
  header_leads: (size) => `\n${fill('*#> ', size)}`,
  combining_marks: (size) => fill(`a${'\u0301'.repeat(40)}`, size),
  lone_surrogates: (size) => fill('\ud800', size),
  emoji_zwj: (size) => fill('\u{1F468}\u200d\ufe0f', size),
  variation_selectors: (size) => fill('a\ufe01\ufe0f\u{E0100}', size),
  tag_flag_prefix: (size) => fill('\u{1F3F4}\u{E0067}\u{E0062}', size),
  invisible_fillers: (size) => fill('\u3164\u2800\u115f', size),
  pem_begin: (size) => fill('-----BEGIN RSA PRIVATE KEY-----\n', size),
  putty_lines: (size) => fill('Private-Lines: 9999\nA\n', size),
  userinfo_chain: (size) => fill('x://u:p', size),
  assignments: (size) => fill('password=x;', size),
  unclosed_markers: (size) => fill('[REDACTED', size),
  bearer_basic: (size) => fill('Bearer Basic ', size),
  azure_keys: (size) => fill('AccountKey=&sig=', size),
  mnemonic_words: (size) => fill('abandon ability ', size),
  aws_context: (size) =>
    fill('aws secret AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ', size),
  hex_context: (size) =>
    fill('private key 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318 ', size),
  percent_escapes: (size) => fill('%41%2F', size),
  prose: (size) =>
    fill('The quick brown fox jumps over the lazy dog; the token bucket refills. ', size),
  json: (size) =>
    fill('{"id":"3f2b8c9e-1d4a-4f6b-9c8e-7a6b5c4d3e2f","max_tokens":4096,"text":"hello"},', size),
};

interface Measure {
  wall: number;
  cpu: number;
}

// Best of `runs` (wall clock and this process's CPU time): the machine is shared, and the
// best run is the one least disturbed by others.
function measure(runs: number, fn: () => unknown): Measure {
  let wall = Number.POSITIVE_INFINITY;
  let cpu = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run++) {
    const usage = process.cpuUsage();
    const start = performance.now();
    fn();
    wall = Math.min(wall, performance.now() - start);
    const spent = process.cpuUsage(usage);
    cpu = Math.min(cpu, (spent.user + spent.system) / 1000);
  }
  return { wall, cpu };
}

/** `npm run bench -- sanitize`: worst-case milliseconds per MB over the adversarial generators. */
export async function run(): Promise<void> {
  // A scrubber as a governed agent has one: three registered secrets, and fingerprints of a
  // fourth loaded from the database, as another process would have stored them.
  const db = await createDatabase();
  await migrate(db);
  const other = new SecretScrubber();
  other.attach(SecretFingerprintStore.for(db));
  other.register('OTHER_PROCESS_KEY', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc');
  await other.refresh();
  const scrubber = new SecretScrubber();
  scrubber.attach(SecretFingerprintStore.for(db));
  scrubber.register('STRIPE_KEY', 'rk_live_0123456789abcdefABCDEF');
  scrubber.register('DB_PASSWORD', 'Zq8/vT+e3!Lm@9x#Wk2$Rb7&Hn4=');
  scrubber.register('WEBHOOK_SECRET', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
  await scrubber.refresh();

  const rows: Array<{
    name: string;
    mb: number;
    sanitize: Measure;
    redact: Measure;
    scrub: Measure;
  }> = [];
  for (const [name, generate] of Object.entries(GENERATORS)) {
    const text = generate();
    const mb = Buffer.byteLength(text) / MB;
    sanitizeOutput(text.slice(0, 50_000), { scrubber }); // warm up
    const sanitize = measure(3, () => sanitizeOutput(text, { scrubber }));
    const redact = measure(3, () => redactCredentials(text));
    const scrub = measure(3, () => scrubber.scrubText(text));
    rows.push({ name, mb, sanitize, redact, scrub });
  }
  await db.close();

  const perMb = (value: number, mb: number) => value / mb;
  console.log(
    'generator               MB   sanitizeOutput   redactCredentials   scrubText   (ms/MB, best of 3; cpu in brackets)',
  );
  for (const row of rows) {
    const cell = (m: Measure) =>
      `${perMb(m.wall, row.mb).toFixed(1).padStart(7)} [${perMb(m.cpu, row.mb).toFixed(0).padStart(4)}]`;
    console.log(
      `${row.name.padEnd(22)} ${row.mb.toFixed(2)}  ${cell(row.sanitize)}   ${cell(row.redact)}   ${cell(row.scrub)}`,
    );
  }
  const worst = (pick: (row: (typeof rows)[number]) => Measure) =>
    rows.reduce(
      (best, row) => {
        const value = perMb(pick(row).wall, row.mb);
        return value > best.value ? { value, name: row.name } : best;
      },
      { value: 0, name: '' },
    );
  const sanitize = worst((row) => row.sanitize);
  const redact = worst((row) => row.redact);
  const scrub = worst((row) => row.scrub);

  // The baseline, side by side: the regular-expression sanitiser this replaced, on 32 and
  // 64 KiB of the three inputs the red team reported (it is quadratic: 2× input, ~4× time).
  const baseline: string[] = [];
  for (const name of ['dcs_8bit', 'jwt_dashes', 'scheme_chain'] as const) {
    const small = measure(1, () => regexSanitize(GENERATORS[name]!(32 * 1024))).wall;
    const large = measure(1, () => regexSanitize(GENERATORS[name]!(64 * 1024))).wall;
    const current = measure(3, () => sanitizeOutput(GENERATORS[name]!(64 * 1024))).wall;
    console.log(
      `baseline ${name.padEnd(14)} regex: 32 KiB ${small.toFixed(0)} ms, 64 KiB ${large.toFixed(0)} ms (×${(large / small).toFixed(1)}); now 64 KiB ${current.toFixed(1)} ms`,
    );
    baseline.push(`baseline_${name}_64k_ms=${large.toFixed(0)}`);
  }
  const overall = [sanitize, redact, scrub].reduce((a, b) => (b.value > a.value ? b : a));
  console.log(
    `RESULT sanitize worst_ms_per_mb=${overall.value.toFixed(1)} worst_generator=${overall.name} sanitize_ms_per_mb=${sanitize.value.toFixed(1)} redact_ms_per_mb=${redact.value.toFixed(1)} scrub_ms_per_mb=${scrub.value.toFixed(1)} generators=${rows.length} ${baseline.join(' ')}`,
  );
}
