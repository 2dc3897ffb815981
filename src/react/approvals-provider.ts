import { createContext, createElement, type ReactNode, useContext, useMemo } from 'react';
import { type ApprovalsClient, createApprovalsClient } from './approvals-client.js';

const ClientContext = createContext<ApprovalsClient | undefined>(undefined);

/**
 * Gives the hooks below it a client of the approvals service (default: this page's origin and
 * session cookie).
 *
 * @example <ApprovalsProvider client={createApprovalsClient({ baseUrl: 'http://localhost:8787' })}>…</ApprovalsProvider>
 */
export function ApprovalsProvider(props: { client?: ApprovalsClient; children?: ReactNode }) {
  const client = useMemo(() => props.client ?? createApprovalsClient(), [props.client]);
  return createElement(ClientContext.Provider, { value: client }, props.children);
}

/** The client from the nearest {@link ApprovalsProvider}, or one for this page's origin. */
export function useApprovalsClient(): ApprovalsClient {
  const client = useContext(ClientContext);
  return useMemo(() => client ?? createApprovalsClient(), [client]);
}
