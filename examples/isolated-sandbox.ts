// IsolatedProcessSandbox: tools run in a fresh process inside Linux namespaces (bubblewrap). The
// kernel, not the tool's good manners, keeps it in its jail: no other files, no host processes,
// no network but the allowlisted hosts, reached through a proxy in this process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool } from '@veridex/langgraph/governance';
import { IsolatedProcessSandbox } from '@veridex/langgraph/sandbox';
import { fetchRate, peek, wordCount } from './tools/report-tools.js';

const availability = IsolatedProcessSandbox.availability();
if (!availability.available) {
  // Never a silent downgrade: without bubblewrap the sandbox refuses to exist (and CI fails).
  if (process.env.CI === 'true') throw new Error(availability.reason);
  console.log(`skipped: ${availability.reason}`);
  process.exit(0);
}

const jail = mkdtempSync(join(tmpdir(), 'veridex-isolated-example-'));
writeFileSync(join(jail, 'q3.txt'), 'Revenue grew nine percent while costs stayed flat.');

// The edge of the world: a fake rates API. The parent's egress proxy performs admitted
// requests with this fetch (the default is the real globalThis.fetch).
const ratesApi = (async () => Response.json({ rate: 1.08 })) as unknown as typeof fetch;
const sandbox = new IsolatedProcessSandbox({ jailRoot: jail, fetch: ratesApi, timeoutMs: 10_000 });

try {
  const words = await runTool(wordCount, { path: 'q3.txt' }, { sandbox });
  console.log('word_count →', words.status === 'success' ? words.output : words.message);

  // Raw node:fs is allowed, but only the jail, the system's read-only files and this tool's
  // code exist in the sandbox: the host's /etc/passwd is simply not there.
  const peeked = await runTool(peek, { path: '/etc/passwd' }, { sandbox });
  console.log('peek /etc/passwd →', peeked.status, peeked.status === 'error' ? peeked.message : '');

  const rate = await runTool(
    fetchRate,
    { currency: 'USD', host: 'api.rates.example' },
    { sandbox },
  );
  console.log('fetch_rate (allowlisted) →', rate.status === 'success' ? rate.output : rate.message);
  const exfiltrate = await runTool(
    fetchRate,
    { currency: 'USD', host: 'attacker.example' },
    { sandbox },
  );
  console.log(
    'fetch_rate (off the list) →',
    exfiltrate.status === 'error' ? exfiltrate.code : 'reached?!',
  );
} finally {
  sandbox.close();
  rmSync(jail, { recursive: true, force: true });
}
