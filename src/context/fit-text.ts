import type { Tokenizer } from './tokenizer.js';

/**
 * Cuts `text` to at most `maxTokens` tokens, keeping its head and tail around a
 * `[truncated: N tokens]` marker. Re-tokenising decoded pieces can shift a token at each cut,
 * so the result is re-counted and cut again until it fits.
 *
 * @example fitText(longSummary, 500, tokenizerFor('o200k_base')).tokens // ≤ 500
 */
export function fitText(
  text: string,
  maxTokens: number,
  tokenizer: Tokenizer,
): { text: string; tokens: number } {
  const tokens = tokenizer.count(text);
  if (tokens <= maxTokens) return { text, tokens };
  const encoded = tokenizer.encode(text);
  let keep = maxTokens - tokenizer.count(`\n[truncated: ${encoded.length} tokens]\n`);
  while (keep > 0) {
    const head = Math.ceil(keep / 2);
    const tail = keep - head;
    const fitted =
      tokenizer.decode(encoded.slice(0, head)) +
      `\n[truncated: ${encoded.length - keep} tokens]\n` +
      (tail > 0 ? tokenizer.decode(encoded.slice(encoded.length - tail)) : '');
    const fittedTokens = tokenizer.count(fitted);
    if (fittedTokens <= maxTokens) return { text: fitted, tokens: fittedTokens };
    keep -= fittedTokens - maxTokens;
  }
  return { text: '', tokens: 0 };
}
