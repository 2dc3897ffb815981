import { isBaseMessage, ToolMessage } from '@langchain/core/messages';
import { Command, isCommand, Send } from '@langchain/langgraph';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import type { SecretScrubber } from '../audit/index.js';
import type { ToolRunSuccess } from '../tools/index.js';
import { sanitizeOutput } from '../tools/sanitize-output.js';
import { asText } from './from-langchain-tool.js';

/**
 * Marks the artifact of a hosted tool's result that carries what text alone cannot: a
 * `ToolMessage`'s status, name, metadata and artifact, or a whole `Command`. Only results of
 * hosted tools are read for it (the host knows which tools it hosts), and it wraps the tool's
 * own artifact, so nothing a tool returns can pose as it.
 */
const ENVELOPE = 'veridex_host_result';

/** The JSON form of a hosted tool's `ToolMessage` fields (content travels as the output). */
interface MessageEnvelope {
  [ENVELOPE]: 'message';
  status?: 'success' | 'error';
  name?: string;
  metadata?: Record<string, unknown>;
  artifact?: unknown;
  additionalKwargs?: Record<string, unknown>;
  responseMetadata?: Record<string, unknown>;
}

/** The JSON form of a hosted tool's `Command` (messages in LangChain's serialised form). */
interface CommandEnvelope {
  [ENVELOPE]: 'command';
  command: unknown;
}

type Envelope = MessageEnvelope | CommandEnvelope;

// LangGraph's own checkpoint serialiser: messages inside a Command survive the ledger exactly
// as they survive a checkpoint.
const serde = new JsonPlusSerializer();

/**
 * A hosted tool's raw result in the form the pipeline validates, sanitises and stores: plain
 * text when that is all there is (the common case: one string), else the text plus an
 * envelope artifact.
 */
export async function encodeHostResult(
  raw: unknown,
): Promise<string | { llmOutput: string; artifact: Envelope }> {
  if (isCommand(raw)) {
    const command = raw as Command;
    return {
      llmOutput: commandText(command),
      artifact: { [ENVELOPE]: 'command', command: await toJson(commandFields(command)) },
    };
  }
  if (!isBaseMessage(raw) || raw.getType() !== 'tool') return asText(raw);
  const message = raw as ToolMessage;
  const text = asText(message.content);
  const envelope: MessageEnvelope = { [ENVELOPE]: 'message' };
  if (message.status === 'error') envelope.status = 'error';
  if (message.name !== undefined) envelope.name = message.name;
  if (message.artifact !== undefined) envelope.artifact = message.artifact;
  if (nonEmpty(message.metadata)) envelope.metadata = message.metadata;
  if (nonEmpty(message.additional_kwargs)) envelope.additionalKwargs = message.additional_kwargs;
  if (nonEmpty(message.response_metadata)) envelope.responseMetadata = message.response_metadata;
  return Object.keys(envelope).length === 1 ? text : { llmOutput: text, artifact: envelope };
}

/** What {@link decodeHostResult} needs to make text model-safe. */
export interface DecodeOptions {
  /** The tool's name as the caller knows it (the ToolMessage's `name` by default). */
  name: string;
  toolCallId: string;
  scrubber?: SecretScrubber;
  maxOutputBytes?: number;
}

/**
 * Rebuilds a hosted tool's result as its host returns it: a `ToolMessage` (the sanitised
 * content, with the tool's status, name, metadata and artifact), or the tool's `Command`, in
 * which every `ToolMessage` of the update is sanitised like any tool output.
 */
export async function decodeHostResult(
  result: ToolRunSuccess,
  options: DecodeOptions,
): Promise<ToolMessage | Command> {
  const envelope = envelopeOf(result.artifact);
  if (envelope?.[ENVELOPE] === 'command') {
    return toCommand((await fromJson(envelope.command)) as CommandFields, options);
  }
  return new ToolMessage({
    tool_call_id: options.toolCallId,
    name: envelope?.name ?? options.name,
    status: envelope?.status ?? 'success',
    content: result.content,
    ...(envelope?.artifact !== undefined ? { artifact: envelope.artifact } : {}),
    ...(envelope?.metadata ? { metadata: envelope.metadata } : {}),
    ...(envelope?.additionalKwargs ? { additional_kwargs: envelope.additionalKwargs } : {}),
    ...(envelope?.responseMetadata ? { response_metadata: envelope.responseMetadata } : {}),
  });
}

interface CommandFields {
  graph?: string;
  update?: unknown;
  resume?: unknown;
  goto: Array<string | { node: string; args: unknown }>;
}

function commandFields(command: Command): CommandFields {
  const goto = (Array.isArray(command.goto) ? command.goto : [command.goto]).map((target) =>
    target instanceof Send ? { node: target.node, args: target.args } : (target as string),
  );
  return {
    ...(command.graph !== undefined ? { graph: command.graph } : {}),
    ...(command.update !== undefined ? { update: command.update } : {}),
    ...(command.resume !== undefined ? { resume: command.resume } : {}),
    goto,
  };
}

function toCommand(fields: CommandFields, options: DecodeOptions): Command {
  return new Command({
    ...(fields.graph !== undefined ? { graph: fields.graph } : {}),
    ...(fields.update !== undefined
      ? { update: sanitizeUpdate(fields.update, options) as Record<string, unknown> }
      : {}),
    ...(fields.resume !== undefined ? { resume: fields.resume } : {}),
    goto: fields.goto.map((target) =>
      typeof target === 'string' ? target : new Send(target.node, target.args),
    ),
  });
}

/** The Command's tool messages are tool output the model will read: sanitised like any other. */
function sanitizeUpdate(update: unknown, options: DecodeOptions): unknown {
  const clean = (value: unknown): unknown => {
    if (!isBaseMessage(value) || value.getType() !== 'tool') return value;
    const message = value as ToolMessage;
    const { content } = sanitizeOutput(asText(message.content), {
      ...(options.maxOutputBytes ? { maxBytes: options.maxOutputBytes } : {}),
      ...(options.scrubber ? { scrubber: options.scrubber } : {}),
    });
    return new ToolMessage({
      content,
      tool_call_id: message.tool_call_id,
      ...(message.id !== undefined ? { id: message.id } : {}),
      ...(message.name !== undefined ? { name: message.name } : {}),
      ...(message.status !== undefined ? { status: message.status } : {}),
      ...(message.artifact !== undefined ? { artifact: message.artifact } : {}),
      ...(message.metadata !== undefined ? { metadata: message.metadata } : {}),
      additional_kwargs: message.additional_kwargs,
      response_metadata: message.response_metadata,
    });
  };
  if (Array.isArray(update)) {
    // [channel, value] tuples
    return update.map((entry) =>
      Array.isArray(entry) && entry.length === 2
        ? [entry[0], Array.isArray(entry[1]) ? entry[1].map(clean) : clean(entry[1])]
        : entry,
    );
  }
  if (typeof update !== 'object' || update === null) return update;
  return Object.fromEntries(
    Object.entries(update).map(([key, value]) => [
      key,
      Array.isArray(value) ? value.map(clean) : clean(value),
    ]),
  );
}

/** The text a Command shows the model: its tool messages' contents (for the audit and findings). */
function commandText(command: Command): string {
  const update = command.update as Record<string, unknown> | undefined;
  const values =
    typeof update === 'object' && update !== null && !Array.isArray(update)
      ? Object.values(update).flat()
      : [];
  return values
    .filter((value) => isBaseMessage(value) && value.getType() === 'tool')
    .map((value) => asText((value as ToolMessage).content))
    .join('\n');
}

function envelopeOf(artifact: unknown): Envelope | undefined {
  if (typeof artifact !== 'object' || artifact === null) return undefined;
  const kind = (artifact as Record<string, unknown>)[ENVELOPE];
  return kind === 'message' || kind === 'command' ? (artifact as Envelope) : undefined;
}

async function toJson(value: unknown): Promise<unknown> {
  const [, bytes] = await serde.dumpsTyped(value);
  return JSON.parse(new TextDecoder().decode(bytes));
}

function fromJson(value: unknown): Promise<unknown> {
  return serde.loadsTyped('json', JSON.stringify(value));
}

function nonEmpty(value: Record<string, unknown> | undefined): value is Record<string, unknown> {
  return value !== undefined && value !== null && Object.keys(value).length > 0;
}
