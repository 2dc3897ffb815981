import { useEffect, useState } from 'react';
import { type Approval, get } from './api.js';
import { groupDigits, timeLeft } from './format.js';

/** Pending requests the signed-in approver may decide, newest first. */
export function ApprovalList({ version }: { version: number }) {
  const [items, setItems] = useState<Approval[] | undefined>();
  const [error, setError] = useState('');
  useEffect(() => {
    void version;
    get<{ items: Approval[] }>('/api/approvals?scope=mine').then(
      (page) => setItems(page.items),
      (caught: Error) => setError(caught.message),
    );
  }, [version]);
  if (error) return <p className="message">{error}</p>;
  if (!items) return <p>Loading…</p>;
  return (
    <section aria-labelledby="pending-title">
      <h1 id="pending-title">Waiting for you ({items.length})</h1>
      {items.length === 0 ? <p>Nothing to decide right now.</p> : null}
      <ul className="cards">
        {items.map((item) => (
          <li key={item.id}>
            <a className="card" href={`#/approvals/${item.id}`} data-testid="approval-card">
              <div className="headline">
                <strong>{item.toolName ?? 'action'}</strong>
                {item.highlights.amount ? (
                  <span className="amount">
                    {groupDigits(item.highlights.amount)} {item.highlights.currency}
                  </span>
                ) : null}
              </div>
              {item.highlights.recipient ? (
                <div className="recipient">to {item.highlights.recipient}</div>
              ) : null}
              <div className="rule">
                {item.rule.name}: {item.reason}
              </div>
              <div className="meta">
                <span data-testid="quorum">
                  {item.quorum.approvals} of {item.quorum.required} approvals
                </span>
                {item.decisions.length > 0 ? (
                  <span>
                    approved by {item.decisions.map((d) => d.approverName ?? d.approver).join(', ')}
                  </span>
                ) : null}
                <span>{timeLeft(item.expiresAt)} left</span>
              </div>
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}
