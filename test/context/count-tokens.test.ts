import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { encode as encodeCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countChatCompletionTokens, encodeChat } from 'gpt-tokenizer/model/gpt-4o';
import { describe, expect, it } from 'vitest';
import {
  contextLimitFor,
  countTokens,
  encodingFor,
  knownContextLimit,
  MessageTokenCounter,
  tokenizerFor,
} from '../../src/context/index.js';
import { VeridexError } from '../../src/errors/index.js';

describe('countTokens', () => {
  it('counts plain text exactly as the model encoding does', () => {
    const text = 'Pay invoice INV-1234 to Acme Suppliers: $50,000.00 — überweisen 🙂';
    expect(countTokens(text, { model: 'gpt-4o' })).toBe(encodeO200k(text).length);
    expect(countTokens(text, { model: 'gpt-4-0613' })).toBe(encodeCl100k(text).length);
  });

  it('counts a chat request like the official chat encoding, overhead and reply priming included', () => {
    const messages = [
      new SystemMessage('You are a careful treasury assistant.'),
      new HumanMessage('What is our USD balance?'),
      new AIMessage('It is 1,000,000.00 USD.'),
    ];
    const reference = encodeChat(
      [
        { role: 'system', content: 'You are a careful treasury assistant.' },
        { role: 'user', content: 'What is our USD balance?' },
        { role: 'assistant', content: 'It is 1,000,000.00 USD.' },
      ],
      'gpt-4o',
    ).length;
    expect(countTokens(messages, { model: 'gpt-4o' })).toBe(reference);
  });

  it('counts a tool call like gpt-tokenizer counts a function call', () => {
    const call = new AIMessage({
      content: '',
      tool_calls: [{ id: 'c1', name: 'get_balance', args: { currency: 'USD' } }],
    });
    const reference = countChatCompletionTokens!({
      messages: [
        {
          role: 'assistant',
          content: '',
          function_call: { name: 'get_balance', arguments: '{"currency":"USD"}' },
        },
      ],
    });
    expect(countTokens([call])).toBe(reference);
  });

  it('treats special-token markers in untrusted text as plain text instead of throwing', () => {
    const text = 'ignore this <|endoftext|> and <|im_start|>system';
    expect(countTokens(text)).toBeGreaterThan(10);
    expect(countTokens(new ToolMessage({ content: text, tool_call_id: 'x' }))).toBeGreaterThan(10);
  });

  it('recounts a message whose content was replaced after it was cached', () => {
    const counter = new MessageTokenCounter(tokenizerFor('o200k_base'));
    const message = new HumanMessage('short');
    const before = counter.message(message);
    message.content = 'a considerably longer message than before, with many more tokens in it';
    expect(counter.message(message)).toBeGreaterThan(before + 5);
  });

  it('counts image blocks at the configured flat rate and text blocks exactly', () => {
    const counter = new MessageTokenCounter(tokenizerFor('o200k_base'), { imageTokens: 100 });
    const message = new HumanMessage({
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      ],
    });
    expect(counter.message(message)).toBe(
      3 + 1 + encodeO200k('What is in this picture?').length + 100,
    );
  });
});

describe('model table', () => {
  it.each([
    ['gpt-4o-2024-08-06', 128_000],
    ['openai:gpt-4o-mini', 128_000],
    ['gpt-4.1-mini', 1_047_576],
    ['gpt-4-0613', 8_192],
    ['gpt-4-turbo-2024-04-09', 128_000],
    ['o1-preview', 128_000],
    ['o3-mini', 200_000],
    ['gpt-5-nano', 400_000],
    ['claude-sonnet-4-5-20250929', 200_000],
    ['anthropic.claude-3-5-sonnet-20240620-v1:0', 200_000],
    ['meta-llama/Llama-3.1-70B-Instruct', 128_000],
    ['llama3.1:8b', 128_000],
    ['llama3:8b', 8_192],
    ['mistral-large-latest', 131_072],
    ['open-mixtral-8x22b', 65_536],
    ['gemini-1.5-pro-002', 2_097_152],
  ])('knows the context window of %s', (model, limit) => {
    expect(knownContextLimit(model)).toBe(limit);
  });

  it('does not mistake o10 for o1', () => {
    expect(knownContextLimit('o10-preview')).toBeUndefined();
  });

  it('asks for contextLimit for an unknown model', () => {
    expect(() => contextLimitFor('my-finetune')).toThrowError(/contextLimit/);
    try {
      contextLimitFor('my-finetune');
    } catch (error) {
      expect(VeridexError.is(error, 'config_invalid')).toBe(true);
    }
    expect(contextLimitFor('my-finetune', 32_000)).toBe(32_000);
  });

  it('picks o200k for current OpenAI models, cl100k for older ones, and flags others as approximate', () => {
    expect(encodingFor('gpt-4o')).toEqual({ encoding: 'o200k_base', approximate: false });
    expect(encodingFor('o4-mini')).toEqual({ encoding: 'o200k_base', approximate: false });
    expect(encodingFor('gpt-5')).toEqual({ encoding: 'o200k_base', approximate: false });
    expect(encodingFor('gpt-3.5-turbo')).toEqual({ encoding: 'cl100k_base', approximate: false });
    expect(encodingFor('claude-opus-4-1')).toEqual({ encoding: 'o200k_base', approximate: true });
    expect(encodingFor('mistral-large')).toEqual({ encoding: 'o200k_base', approximate: true });
  });
});
