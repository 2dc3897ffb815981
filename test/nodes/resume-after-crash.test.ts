import { HumanMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { expect, it } from 'vitest';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import { resumeThread } from '../../src/nodes/index.js';
import { describeEachDatabase } from '../support/databases.js';

// Found by `npm run soak`: a worker killed after every task of a step had stored its writes
// (putWrites) but before the step's checkpoint (put) left a thread whose snapshot says
// `next: []` — LangGraph applies finished tasks' writes and drops them from `next` — so
// resumeThread called it "not suspended" and the thread never ran its remaining nodes.

function graphOn(checkpointer: BaseCheckpointSaver, ran: string[]) {
  const node = (name: string) => (state: typeof MessagesAnnotation.State) => {
    ran.push(name);
    return { messages: [{ role: 'ai', content: `${name} after ${state.messages.length}` }] };
  };
  return new StateGraph(MessagesAnnotation)
    .addNode('first', node('first'))
    .addNode('second', node('second'))
    .addEdge(START, 'first')
    .addEdge('first', 'second')
    .addEdge('second', END)
    .compile({ checkpointer });
}

describeEachDatabase(
  'resumeThread after a crash between a step’s writes and its checkpoint',
  ({ db, open }) => {
    it('runs the rest of the graph, without running the finished task again', async () => {
      const crashing = PostgresCheckpointer.fromDatabase(db());
      const put = crashing.put.bind(crashing);
      // The checkpoint that would record `first` as done: the process "dies" before it is stored.
      crashing.put = async (config, checkpoint, metadata, versions) => {
        if (metadata.step === 1) throw new Error('killed before the checkpoint was stored');
        return put(config, checkpoint, metadata, versions);
      };
      const ran: string[] = [];
      const config = { configurable: { thread_id: 'crash-between' }, durability: 'sync' as const };
      await expect(
        graphOn(crashing, ran).invoke({ messages: [new HumanMessage('go')] }, config),
      ).rejects.toThrow('killed before the checkpoint was stored');
      expect(ran).toEqual(['first']);

      // Another process, another checkpointer over the same database.
      const restarted = graphOn(PostgresCheckpointer.fromDatabase(await open()), ran);
      const snapshot = await restarted.getState(config);
      expect(snapshot.next).toEqual([]);
      expect(snapshot.tasks.map((task) => task.name)).toEqual(['first']);

      const result = await resumeThread(restarted, 'crash-between');
      expect(ran).toEqual(['first', 'second']);
      expect(result.messages.map((message) => message.content)).toEqual([
        'go',
        'first after 1',
        'second after 2',
      ]);
      const finished = await restarted.getState(config);
      expect(finished.next).toEqual([]);
      expect(finished.tasks).toEqual([]);
    });
  },
);
