import type { BaseMessage } from '@langchain/core/messages';
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import type {
  ContextCompiler,
  ContextMemory,
  ContextReport,
  ContextTool,
} from '../context/index.js';

/** A value given directly or computed from the graph state on each call. */
export type FromState<State, Value> =
  | Value
  | ((state: State, config: LangGraphRunnableConfig) => Value | Promise<Value>);

/** Options for {@link contextNode}. */
export interface ContextNodeOptions<State> {
  /** The system prompt. Do not also pass `prompt` to `createReactAgent`: the compiler owns it. */
  system?: FromState<State, string>;
  /** Procedural memory (standing instructions), appended to the system prompt. */
  procedural?: FromState<State, string | readonly string[]>;
  /** Retrieved memories with relevance scores, e.g. from a memory retrieve node's state key. */
  memories?: FromState<State, readonly ContextMemory[]>;
  /** The tools bound to the model, so their definitions are counted against V_e. */
  tools?: readonly ContextTool[];
  /** State key of the conversation. Default `messages`. */
  messagesKey?: string;
  /** State key the compiled messages are written to. Default `llmInputMessages`. */
  outputKey?: string;
  /** When set, the compile report is also written to this state key (it must exist in the state). */
  reportKey?: string;
}

/** What the node returns: the compiled messages (and the report, when `reportKey` is set). */
export type ContextNodeUpdate = { llmInputMessages: BaseMessage[] } & Record<string, unknown>;

/**
 * A LangGraph node (and pre-model hook) that compiles the model's input with a
 * {@link ContextCompiler} and writes it to `llmInputMessages`, LangGraph's pre-model hook
 * convention: `createReactAgent` then sends those messages to the model while the stored
 * `messages` history stays untouched. The thread id (summary cache, audit) comes from
 * `config.configurable.thread_id`. The returned function can also be called inside your own
 * model node: `const { llmInputMessages } = await compile(state, config)`.
 *
 * @example
 * const agent = createReactAgent({ llm, tools, preModelHook: contextNode(compiler, { system: 'You pay invoices.', tools }) });
 */
export function contextNode<State extends Record<string, unknown>>(
  compiler: ContextCompiler,
  options: ContextNodeOptions<State> = {},
): (state: State, config?: LangGraphRunnableConfig) => Promise<ContextNodeUpdate> {
  const messagesKey = options.messagesKey ?? 'messages';
  const outputKey = options.outputKey ?? 'llmInputMessages';
  return async function compileContext(state, config = {}) {
    const history = (state[messagesKey] ?? []) as BaseMessage[];
    const [system, procedural, memories] = await Promise.all([
      resolve(options.system, state, config),
      resolve(options.procedural, state, config),
      resolve(options.memories, state, config),
    ]);
    const threadId = config.configurable?.thread_id;
    const { messages, report } = await compiler.compile({
      history,
      ...(system === undefined ? {} : { system }),
      ...(procedural === undefined ? {} : { procedural }),
      ...(memories === undefined ? {} : { memories }),
      ...(options.tools ? { tools: options.tools } : {}),
      ...(typeof threadId === 'string' ? { threadId } : {}),
      ...(config.signal ? { signal: config.signal } : {}),
    });
    const update: Record<string, BaseMessage[] | ContextReport> = { [outputKey]: messages };
    if (options.reportKey) update[options.reportKey] = report;
    return update as ContextNodeUpdate;
  };
}

async function resolve<State, Value>(
  value: FromState<State, Value> | undefined,
  state: State,
  config: LangGraphRunnableConfig,
): Promise<Value | undefined> {
  return typeof value === 'function'
    ? (value as (state: State, config: LangGraphRunnableConfig) => Value | Promise<Value>)(
        state,
        config,
      )
    : value;
}
