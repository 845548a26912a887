/** What every signed-in page reads: the agent, the customer, and the event stream. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Agent, Customer } from './api';
import type { EventStream } from './events';

export interface ConsoleContext {
  me: Agent;
  customer: Customer;
  events: EventStream;
  /** `customer_id:<id>:<resource>:*` for this customer (`agent_id:<me>:...` for agents below manager). */
  topic(resource: string, id?: string): string;
}

export const Ctx = createContext<ConsoleContext | null>(null);

export function useConsole(): ConsoleContext {
  const c = useContext(Ctx);
  if (!c) throw new Error('useConsole outside the signed-in shell');
  return c;
}
