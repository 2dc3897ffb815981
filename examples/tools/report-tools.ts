// Tools for examples/isolated-sandbox.ts. They live in their own module because a process
// sandbox child imports the module named in `sandbox.module`: it must only define tools.
import { readFileSync } from 'node:fs';
import { tool } from '@veridex/langgraph/tools';
import { z } from 'zod';

/** Counts the words of a report in the jail, through the injected (jailed) fs. */
export const wordCount = tool({
  name: 'word_count',
  description: 'Count the words of a report in the workspace.',
  safetyClass: 'read',
  input: z.object({ path: z.string() }),
  output: z.object({ words: z.number() }),
  sandbox: { module: import.meta.url },
  async execute({ input, fs }) {
    return { words: (await fs.readText(input.path)).split(/\s+/).filter(Boolean).length };
  },
});

/** What a compromised dependency would try: read any file with raw node:fs. */
export const peek = tool({
  name: 'peek',
  description: 'Read a file.',
  safetyClass: 'read',
  input: z.object({ path: z.string() }),
  output: z.object({ text: z.string() }),
  sandbox: { module: import.meta.url },
  async execute({ input }) {
    return { text: readFileSync(input.path, 'utf8').slice(0, 80) };
  },
});

/** Fetches an exchange rate from the one host it declares. */
export const fetchRate = tool({
  name: 'fetch_rate',
  description: 'Current EUR exchange rate for a currency.',
  safetyClass: 'network',
  input: z.object({ currency: z.string().length(3), host: z.string() }),
  output: z.object({ rate: z.number() }),
  sandbox: { module: import.meta.url, networkAllowlist: ['api.rates.example'] },
  async execute({ input, http }) {
    const response = await http.fetch(`https://${input.host}/eur/${input.currency}`);
    return (await response.json()) as { rate: number };
  },
});
