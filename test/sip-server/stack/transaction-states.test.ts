// The RFC 3261 §17 transaction state machines as tables (sip-server/transaction/states.ts), and the
// drachtio layer's dialog table (sip-server/drachtio/dialogs.ts): every
// allowed move and every refused one, the policy for an illegal move (throw in tests, report and
// ignore in production), and the moves a real transaction makes, seen through 'stateChanged'.
import { expect } from 'chai';
import { parseMessage, type SipMessage, type SipRequest } from '../../../sip-server/message';
import { DIALOG } from '../../../sip-server/drachtio/dialogs';
import type { TransactionContext } from '../../../sip-server/transaction/context';
import { NonInviteServerTransaction } from '../../../sip-server/transaction/server';
import { InviteServerTransaction } from '../../../sip-server/transaction/server-invite';
import { allowMove, IllegalTransition, INVITE_CLIENT, INVITE_SERVER, NON_INVITE_CLIENT, NON_INVITE_SERVER, type MoveTable } from '../../../sip-server/transaction/states';

const ALLOWED: Record<string, [MoveTable, string[]]> = {
  'INVITE client': [
    INVITE_CLIENT,
    [
      'Calling>Proceeding',
      'Calling>Completed',
      'Calling>Accepted',
      'Calling>Terminated',
      'Proceeding>Completed',
      'Proceeding>Accepted',
      'Proceeding>Terminated',
      'Completed>Terminated',
      'Accepted>Terminated',
    ],
  ],
  'non-INVITE client': [NON_INVITE_CLIENT, ['Trying>Proceeding', 'Trying>Completed', 'Trying>Terminated', 'Proceeding>Completed', 'Proceeding>Terminated', 'Completed>Terminated']],
  'INVITE server': [
    INVITE_SERVER,
    ['Proceeding>Completed', 'Proceeding>Accepted', 'Proceeding>Terminated', 'Completed>Confirmed', 'Completed>Terminated', 'Confirmed>Terminated', 'Accepted>Terminated'],
  ],
  'non-INVITE server': [NON_INVITE_SERVER, ['Trying>Proceeding', 'Trying>Completed', 'Trying>Terminated', 'Proceeding>Completed', 'Proceeding>Terminated', 'Completed>Terminated']],
  // the drachtio layer's dialogs (RFC 3261 12): early (1xx with a To tag) or confirmed (2xx), then ended
  dialog: [DIALOG, ['Early>Confirmed', 'Early>Terminated', 'Confirmed>Terminated']],
};

function req(method: string): SipRequest {
  return parseMessage(
    [
      `${method} sip:a@127.0.0.1 SIP/2.0`,
      'Via: SIP/2.0/TCP 127.0.0.1:5099;branch=z9hG4bKst1',
      'From: <sip:b@127.0.0.1>;tag=1',
      'To: <sip:a@127.0.0.1>',
      'Call-ID: st1',
      `CSeq: 1 ${method}`,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'),
  ) as SipRequest;
}

/** A transaction context that records what is sent (TCP: no retransmission timers, Timer J/I are 0). */
function context(sent: SipMessage[] = []): TransactionContext {
  return {
    timers: { t1: 50, t2: 400, t4: 500 },
    send: async (m) => {
      sent.push(m);
    },
    onRetransmit: () => undefined,
    onTerminated: () => undefined,
  };
}
const DEST = { transport: 'tcp' as const, address: '127.0.0.1', port: 5099 };

describe('SIP transaction state tables (RFC 3261 §17)', () => {
  for (const [machine, [table, allowed]] of Object.entries(ALLOWED)) {
    it(`${machine}: exactly the listed moves are allowed, everything else is refused`, () => {
      const states = Object.keys(table);
      for (const from of states) {
        for (const to of states) {
          const ok = allowed.includes(`${from}>${to}`);
          if (ok) expect(allowMove(machine, table, from, to), `${from} -> ${to}`).to.equal(true);
          else expect(() => allowMove(machine, table, from, to), `${from} -> ${to}`).to.throw(IllegalTransition, `${from} -> ${to}`);
        }
      }
      expect(table.Terminated).to.deep.equal([]);
    });
  }

  it('an illegal move throws under test, and outside tests is reported and refused', () => {
    expect(() => allowMove('INVITE server', INVITE_SERVER, 'Accepted', 'Completed', undefined, true)).to.throw(IllegalTransition);
    const seen: IllegalTransition[] = [];
    expect(allowMove('INVITE server', INVITE_SERVER, 'Accepted', 'Completed', (e) => seen.push(e), false)).to.equal(false);
    expect(seen.map((e) => [e.machine, e.from, e.to])).to.deep.equal([['INVITE server', 'Accepted', 'Completed']]);
    // a state the machine does not have is refused too
    expect(allowMove('non-INVITE client', NON_INVITE_CLIENT, 'Trying', 'Accepted', () => undefined, false)).to.equal(false);
  });

  it('a non-INVITE server transaction moves Trying -> Proceeding -> Completed -> Terminated, one event per move', async () => {
    const sent: SipMessage[] = [];
    const r = req('MESSAGE');
    const tx = new NonInviteServerTransaction('k1', r, DEST, context(sent));
    const moves: string[] = [];
    tx.on('stateChanged', (to, from) => moves.push(`${from}>${to}`));
    expect(tx.respond(r.makeResponse(100))).to.equal(true);
    expect(tx.respond(r.makeResponse(180))).to.equal(true); // a further 1xx stays in Proceeding
    expect(tx.respond(r.makeResponse(200))).to.equal(true);
    expect(tx.respond(r.makeResponse(500)), 'a second final is refused').to.equal(false);
    await new Promise((ok) => setTimeout(ok, 20)); // Timer J is 0 on TCP
    expect(moves).to.deep.equal(['Trying>Proceeding', 'Proceeding>Completed', 'Completed>Terminated']);
    expect(sent.map((m) => (m as { status?: number }).status)).to.deep.equal([100, 180, 200]);
  });

  it('an INVITE server transaction: Proceeding -> Completed -> Confirmed (ACK) -> Terminated; a 2xx goes to Accepted', async () => {
    const inv = req('INVITE');
    const tx = new InviteServerTransaction('k2', inv, DEST, context());
    const moves: string[] = [];
    tx.on('stateChanged', (to, from) => moves.push(`${from}>${to}`));
    tx.respond(inv.makeResponse(486, undefined, { toTag: 't' }));
    tx.receiveRequest(req('ACK'));
    await new Promise((ok) => setTimeout(ok, 20));
    expect(moves).to.deep.equal(['Proceeding>Completed', 'Completed>Confirmed', 'Confirmed>Terminated']);

    const ok = new InviteServerTransaction('k3', inv, DEST, context());
    const m2: string[] = [];
    ok.on('stateChanged', (to, from) => m2.push(`${from}>${to}`));
    ok.respond(inv.makeResponse(200, undefined, { toTag: 't' }));
    expect(ok.respond(inv.makeResponse(486)), 'no non-2xx after a 2xx').to.equal(false);
    ok.destroy();
    expect(m2).to.deep.equal(['Proceeding>Accepted', 'Accepted>Terminated']);
  });
});
