import { useEffect, useState } from 'react';
import { type ApprovalDetail, get } from './api.js';
import { groupDigits, resolutionLine, timeLeft } from './format.js';
import { decideWithPasskey } from './passkey.js';

/** One request: the full call, the rule, who decided, the trace; approve or reject with a reason. */
export function ApprovalDetailView({ id, version }: { id: string; version: number }) {
  const [detail, setDetail] = useState<ApprovalDetail | undefined>();
  const [reason, setReason] = useState('');
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const [refresh, setRefresh] = useState(0);
  useEffect(() => {
    void version;
    void refresh;
    get<ApprovalDetail>(`/api/approvals/${encodeURIComponent(id)}`).then(
      setDetail,
      (error: Error) => setMessage(error.message),
    );
  }, [id, version, refresh]);
  if (!detail) return <p className="message">{message || 'Loading…'}</p>;

  const decide = async (decision: 'approve' | 'reject') => {
    setBusy(true);
    setMessage('');
    try {
      const after = await decideWithPasskey(detail, decision, reason);
      setMessage(
        decision === 'approve'
          ? `Approved: ${after.quorum.approvals} of ${after.quorum.required}, status ${after.status}.`
          : `Rejected: status ${after.status}.`,
      );
      setReason('');
      setRefresh((value) => value + 1);
    } catch (error) {
      setMessage((error as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const edits = detail.decisions.filter((decision) => decision.editedArgs);
  return (
    <article aria-labelledby="detail-title">
      <p>
        <a href="#/">← Back to the inbox</a>
      </p>
      <h1 id="detail-title">
        {detail.toolName ?? 'Action'}
        {detail.highlights.amount ? (
          <span className="amount">
            {' '}
            {groupDigits(detail.highlights.amount)} {detail.highlights.currency}
          </span>
        ) : null}
      </h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd data-testid="status">{detail.status}</dd>
        <dt>Approvals</dt>
        <dd data-testid="detail-quorum">
          {detail.quorum.approvals} of {detail.quorum.required} ({detail.route}, tier{' '}
          {detail.quorum.tier.name})
        </dd>
        <dt>Rule</dt>
        <dd>
          {detail.rule.name} — {detail.reason}
        </dd>
        <dt>Proposed by</dt>
        <dd>{detail.proposer}</dd>
        {detail.status === 'pending' ? (
          <>
            <dt>Time left</dt>
            <dd>{timeLeft(detail.expiresAt)}</dd>
          </>
        ) : (
          <>
            <dt>Run</dt>
            <dd data-testid="detail-resumption">
              {resolutionLine(detail.status, detail.resumption)}
            </dd>
          </>
        )}
        <dt>Proposal hash</dt>
        <dd className="hash">{detail.proposalHash}</dd>
      </dl>
      <h2>Arguments</h2>
      <pre className="arguments">
        {JSON.stringify(detail.proposal.arguments ?? detail.proposal, null, 2)}
      </pre>
      {edits.map((decision) => (
        <div key={decision.decidedAt}>
          <h2>Edited by {decision.approver}</h2>
          <pre className="arguments diff">{JSON.stringify(decision.editedArgs, null, 2)}</pre>
        </div>
      ))}
      <h2>Decisions</h2>
      {detail.decisions.length === 0 ? <p>None yet.</p> : null}
      <ul>
        {detail.decisions.map((decision) => (
          <li key={`${decision.approver}-${decision.decidedAt}`}>
            {decision.decision} by {decision.approverName ?? decision.approver} (
            {decision.method ?? 'unsigned'}){decision.reason ? `: “${decision.reason}”` : ''}
          </li>
        ))}
      </ul>
      {detail.mayDecide ? (
        <form
          className="decide"
          onSubmit={(event) => {
            event.preventDefault();
            void decide('approve');
          }}
        >
          <label htmlFor="reason">Reason (signed with your decision)</label>
          <textarea
            id="reason"
            value={reason}
            onChange={(event) => setReason(event.target.value)}
            rows={2}
          />
          <div className="buttons">
            <button type="submit" className="primary" disabled={busy}>
              Approve with passkey
            </button>
            <button
              type="button"
              className="danger"
              disabled={busy}
              onClick={() => void decide('reject')}
            >
              Reject
            </button>
          </div>
        </form>
      ) : (
        <p>
          You cannot decide this request now (already decided by you, not on its list, or closed).
        </p>
      )}
      <p role="status" aria-live="polite" className="message" data-testid="decision-message">
        {message}
      </p>
      <h2>Reasoning before the request</h2>
      {detail.reasoning.length === 0 ? (
        <p>No conversation is stored for this thread here.</p>
      ) : (
        <ol className="reasoning" data-testid="reasoning">
          {detail.reasoning.map((message, index) => (
            // Messages have no stable id of their own; their order is what they mean.
            // biome-ignore lint/suspicious/noArrayIndexKey: the list is never reordered
            <li key={index}>
              <strong>{message.role}</strong>
              {message.toolCalls?.length
                ? ` (calls ${message.toolCalls.map((call) => call.name).join(', ')})`
                : ''}
              {message.content ? `: ${message.content}` : ''}
            </li>
          ))}
        </ol>
      )}
      <h2>Trace up to the request</h2>
      <ol className="trace">
        {detail.trace.map((event) => (
          <li key={event.eventId}>
            <code>{event.type}</code> <time>{event.timestamp}</time>
          </li>
        ))}
      </ol>
    </article>
  );
}
