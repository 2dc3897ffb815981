import { vector } from '@electric-sql/pglite-pgvector';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import {
  Annotation,
  Command,
  END,
  interrupt,
  type LangGraphRunnableConfig,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { expect, it } from 'vitest';
import { ContextCompiler } from '../../src/context/index.js';
import {
  heuristicExtractor,
  llmExtractor,
  type MemoryExtractor,
  type MemoryManager,
} from '../../src/memory/index.js';
import { MemoryAnnotation, type MemoryNodesOptions, memoryNodes } from '../../src/nodes/index.js';
import { type ScriptedTurn, scriptedModel } from '../../src/testing/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { countRecords, makeMemory } from './memory-fixture.js';

const State = Annotation.Root({ ...MessagesAnnotation.spec, ...MemoryAnnotation.spec });

/** START → retrieve → agent (context compiler + scripted model) → evolve → END, with a checkpointer. */
function buildGraph(
  memory: MemoryManager,
  turns: readonly ScriptedTurn[],
  options: MemoryNodesOptions = {},
) {
  const model = scriptedModel(turns);
  const compiler = new ContextCompiler({ model: 'gpt-4o' });
  const { retrieve, evolve } = memoryNodes(memory, options);
  const agent = async (state: typeof State.State) => {
    const { messages } = await compiler.compile({
      system: 'You are a helpful assistant.',
      procedural: state.procedural,
      memories: state.memories,
      history: state.messages,
    });
    return {
      messages: [await model.invoke(messages)],
      workingMemory: [
        { content: 'The customer is on the Pro plan', promote: true, confidence: 0.9 },
        { content: 'scratch: looked up the weather API', promote: false },
      ],
    };
  };
  const graph = new StateGraph(State)
    .addNode('retrieve', retrieve)
    .addNode('agent', agent)
    .addNode('evolve', evolve)
    .addEdge(START, 'retrieve')
    .addEdge('retrieve', 'agent')
    .addEdge('agent', 'evolve')
    .addEdge('evolve', END)
    .compile({ checkpointer: new MemorySaver() });
  return { graph, model };
}

describeEachDatabase(
  'memoryNodes in a StateGraph',
  ({ db }) => {
    it('evolves a run into an episode and facts, discards unpromoted working memory, and retrieves them next run', async () => {
      const { memory } = makeMemory(db());
      await memory.setProcedure('tone', 'Answer in one short paragraph.');
      const { graph, model } = buildGraph(memory, [
        'Sunny in Lisbon today.',
        'You live in Lisbon.',
      ]);
      const config = { configurable: { thread_id: 'thread-n1' } };

      const first = await graph.invoke(
        {
          messages: [
            new HumanMessage('Hi, my name is Priya. I live in Lisbon. What is the weather like?'),
          ],
        },
        config,
      );
      expect(first.workingMemory).toEqual([]);
      expect(first.memoryCursor).toBe(2);
      expect(first.memoryWrites.map((write) => [write.status, write.content])).toEqual([
        [
          'written',
          'User asked: Hi, my name is Priya. I live in Lisbon. What is the weather like? Assistant answered: Sunny in Lisbon today.',
        ],
        ['written', 'The customer is on the Pro plan'],
        ['written', "The user's name is Priya."],
        ['written', 'The user lives in Lisbon.'],
      ]);
      const { rows } = await db().query<{ content: string; tier: string; source: string }>(
        'SELECT content, tier, source FROM veridex_memory_records ORDER BY content',
      );
      expect(rows.map((row) => row.content)).not.toContain('scratch: looked up the weather API');
      expect(rows.find((row) => row.tier === 'episodic')).toMatchObject({ source: 'model' });
      expect(rows.find((row) => row.content === 'The user lives in Lisbon.')).toMatchObject({
        tier: 'semantic',
        source: 'user',
      });
      const episodeId = first.memoryWrites[0]!.recordId!;
      const links = await memory.links([episodeId]);
      expect(
        links.filter((link) => link.type === 'derived_from' && link.to === episodeId),
      ).toHaveLength(3);

      const second = await graph.invoke(
        { messages: [new HumanMessage('Where do I live?')] },
        config,
      );
      expect(second.memories.map((entry) => entry.content)).toContain('The user lives in Lisbon.');
      expect(second.procedural).toEqual(['Answer in one short paragraph.']);
      const system = model.calls[1]![0]!;
      expect(system).toBeInstanceOf(SystemMessage);
      expect(String(system.content)).toContain('The user lives in Lisbon.');
      expect(String(system.content)).toContain('Answer in one short paragraph.');
    });

    it('writes nothing twice when evolve re-runs with the same state', async () => {
      const { memory } = makeMemory(db());
      const { evolve } = memoryNodes(memory);
      const state = {
        ...emptyState(),
        messages: [new HumanMessage('I prefer tea over coffee.'), new AIMessage('Noted.')],
        workingMemory: [{ content: 'Prefers meetings after 10am', promote: true }],
      };
      const config: LangGraphRunnableConfig = { configurable: { thread_id: 'thread-replay' } };
      await evolve(state, config);
      const count = await countRecords(db());
      const again = await evolve(state, config);
      expect(await countRecords(db())).toBe(count);
      expect(count).toBe(3);
      expect(
        again.memoryWrites?.every(
          (write) => write.status === 'written' || write.status === 'duplicate',
        ),
      ).toBe(true);
    });

    it('reports a denied candidate fact with its rule and stores the rest', async () => {
      const { memory } = makeMemory(db());
      const { evolve } = memoryNodes(memory, { episodes: false });
      const update = await evolve(
        {
          ...emptyState(),
          messages: [
            new HumanMessage(
              'My api key is sk-proj-abcdefghijklmnopqrstuvwxyz012345. I live in Oslo.',
            ),
            new AIMessage('Thanks.'),
          ],
        },
        { configurable: { thread_id: 'thread-secret' } },
      );
      expect(update.memoryWrites).toEqual([
        expect.objectContaining({ status: 'denied', ruleId: 'memory.deny_secrets' }),
        expect.objectContaining({ status: 'written', content: 'The user lives in Oslo.' }),
      ]);
      const { rows } = await db().query<{ content: string }>(
        'SELECT content FROM veridex_memory_records',
      );
      expect(JSON.stringify(rows)).not.toContain('sk-proj');
    });

    it('extracts facts with a chat model, validating its reply, and falls back on garbage', async () => {
      const { memory } = makeMemory(db());
      const reply =
        '```json\n{"summary": "Booked a table.", "facts": [{"content": "The user is vegetarian", "subject": "user", "predicate": "diet", "object": "vegetarian", "confidence": 1}]}\n```';
      const extractor = llmExtractor(scriptedModel([reply]), { maxConfidence: 0.8 });
      const messages = [
        new HumanMessage('Book a table, I am vegetarian.'),
        new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'book', args: {} }] }),
        new ToolMessage({ content: 'booked', tool_call_id: 'c1', name: 'book' }),
        new AIMessage('Booked.'),
      ];
      const extraction = await extractor({ messages, workingMemory: [], threadId: 't' });
      expect(extraction.episode).toEqual({
        summary: 'Booked a table.',
        participants: ['user', 'assistant', 'tool:book'],
      });
      expect(extraction.facts).toEqual([
        expect.objectContaining({
          content: 'The user is vegetarian',
          confidence: 0.8,
          source: 'model',
        }),
      ]);
      const fallback = await llmExtractor(scriptedModel(['I cannot do JSON']))({
        messages: [new HumanMessage('I live in Perth.')],
        workingMemory: [],
        threadId: 't',
      });
      expect(fallback.facts.map((fact) => fact.content)).toEqual(['The user lives in Perth.']);

      const { evolve } = memoryNodes(memory, { extractor });
      const update = await evolve(
        { ...emptyState(), messages },
        { configurable: { thread_id: 'thread-llm' } },
      );
      expect(update.memoryWrites?.map((write) => write.status)).toEqual(['written', 'written']);
    });

    it('lets an interrupt raised during evolve suspend the graph, and writes once after the resume', async () => {
      const { memory } = makeMemory(db());
      const base = heuristicExtractor();
      const reviewed: MemoryExtractor = async (input) => {
        const extraction = await base(input);
        const approved = interrupt({
          review: extraction.facts.map((fact) => fact.content),
        }) as boolean;
        return approved ? extraction : { facts: [] };
      };
      const { graph } = buildGraph(memory, ['Noted.'], { extractor: reviewed, episodes: false });
      const config = { configurable: { thread_id: 'thread-review' } };
      const suspended = await graph.invoke(
        { messages: [new HumanMessage('I live in Kyoto.')] },
        config,
      );
      expect((suspended as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
      expect(await countRecords(db())).toBe(0);
      const resumed = await graph.invoke(new Command({ resume: true }), config);
      expect(resumed.memoryWrites.map((write) => write.status)).toEqual(['written', 'written']);
      expect(await countRecords(db())).toBe(2);
    });

    it('keeps each user in their own namespace', async () => {
      const { memory } = makeMemory(db());
      const options: MemoryNodesOptions = {
        namespace: (config) => ['users', String(config.configurable?.user_id)],
        extractor: heuristicExtractor(),
      };
      const { graph } = buildGraph(memory, ['Noted.', 'I do not know.'], options);
      await graph.invoke(
        { messages: [new HumanMessage('I live in Accra.')] },
        { configurable: { thread_id: 'thread-a', user_id: 'ama' } },
      );
      const other = await graph.invoke(
        { messages: [new HumanMessage('Where do I live?')] },
        { configurable: { thread_id: 'thread-b', user_id: 'ben' } },
      );
      expect(other.memories).toEqual([]);
      const hits = await memory.recall('where does the user live', {
        namespace: ['users', 'ama'],
        tiers: ['semantic'],
      });
      expect(hits[0]?.record.content).toBe('The user lives in Accra.');
    });
  },
  { extensions: { vector } },
);

it('the heuristic extractor records nothing from a run without first-person statements', async () => {
  const extractor: MemoryExtractor = heuristicExtractor();
  const result = await extractor({
    messages: [new HumanMessage('What is 2 + 2?'), new AIMessage('4')],
    workingMemory: [{ content: 'not promoted' }],
    threadId: 't',
  });
  expect(result.facts).toEqual([]);
  expect(result.episode?.summary).toBe('User asked: What is 2 + 2? Assistant answered: 4');
});

function emptyState(): typeof State.State {
  return {
    messages: [],
    memories: [],
    procedural: [],
    workingMemory: [],
    memoryWrites: [],
    memoryCursor: 0,
  };
}
