/** The console shell: session state, the navigation, and the page of the current hash route. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, auth, canManage, isSuperAdmin, onGateError } from './api';
import { AgentPhone, phaseLive, type PhonePhase } from './components/agent-phone';
import { EventStream, type SocketState } from './events';
import { loadSession, next, type Session } from './session';
import { landingOf, useRoute, href, type Route } from './router';
import { Ctx, type ConsoleContext } from './context';
import { SignIn, SignUp, Verify } from './pages/sign-in';
import { SetPassword } from './pages/set-password';
import { GateBanner } from './pages/gate';
import { CallsPage } from './pages/calls';
import { DashboardPage } from './pages/dashboard';
import { CallPage } from './pages/call';
import { NumbersPage } from './pages/numbers';
import { ExtensionsPage } from './pages/extensions';
import { FlowsPage } from './pages/flows';
import { FlowPage } from './pages/flow';
import { RecordingsPage } from './pages/recordings';
import { ContactCenterPage } from './pages/contact-center';
import { WebhooksPage } from './pages/webhooks';
import { AccessKeysPage } from './pages/accesskeys';
import { OperatorPage } from './pages/operator';
import { VoicemailPage } from './pages/voicemail';
import { ParkedCallsPage } from './pages/parked-calls';
import { BlfPage } from './pages/blf';
import { EvalsPage } from './pages/evals';
import { EvalScenariosRoute } from './pages/eval-scenarios';
import { AisRoute } from './pages/ais';

const NAV: { path: string; label: string; operator?: boolean; manager?: boolean }[] = [
  { path: 'calls', label: 'Live calls' },
  { path: 'dashboard', label: 'Dashboard', manager: true },
  { path: 'numbers', label: 'Numbers' },
  { path: 'extensions', label: 'Extensions' },
  { path: 'voicemail', label: 'Voicemail' },
  { path: 'parked', label: 'Parked calls', manager: true },
  { path: 'blf', label: 'Busy lamps', manager: true },
  { path: 'flows', label: 'Flows' },
  { path: 'recordings', label: 'Recordings' },
  { path: 'contact-center', label: 'Agents & queues' },
  { path: 'ais', label: 'AI agents' },
  { path: 'evals', label: 'Evals' },
  { path: 'webhooks', label: 'Webhooks' },
  { path: 'accesskeys', label: 'Access keys' },
  { path: 'operator', label: 'Operator', operator: true },
];

export function App() {
  const [session, setSession] = useState<Session>({ kind: 'loading' });
  const [landing, setLanding] = useState(() => landingOf(location.pathname, location.search));
  const route = useRoute();
  const refresh = () => void loadSession().then((i) => setSession((s) => next(s, i)));
  useEffect(() => {
    refresh();
    return onGateError((error) => setSession((s) => next(s, { type: 'error', error })));
  }, []);
  const signOut = async () => {
    // the agent's browser SIP credentials go with the session (the embedded phone's own sign-out would come too late)
    await api.del('/service_agents/me/sip_credentials').catch(() => undefined);
    await auth.signOut().catch(() => undefined);
    setSession((s) => next(s, { type: 'signed-out' }));
  };

  if (landing) {
    // the mailed links: /console/verify?token=… and /console/password-reset?token=…
    if (landing.page === 'verify') return <Verify token={landing.token} />;
    return <SetPassword token={landing.token} onSignedIn={() => (history.replaceState(null, '', `${location.pathname.replace(/[^/]*$/, '')}#/calls`), setLanding(null), refresh())} />;
  }
  if (route.path[0] === 'signup') return <SignUp />;
  if (route.path[0] === 'verify') return <Verify token={route.query.get('token') ?? ''} />;
  switch (session.kind) {
    case 'loading':
      return (
        <main id="main" class="auth-page">
          <p>Loading…</p>
        </main>
      );
    case 'signed-out':
      return <SignIn notice={session.notice} onSignedIn={refresh} onGate={(error, email) => setSession((s) => next(s, { type: 'error', error, email }))} />;
    case 'gated':
      return <GateBanner gate={session} onRecovered={refresh} onSignOut={signOut} />;
    case 'signed-in':
      return <Shell session={session} route={route} onSignOut={signOut} />;
  }
}

function Shell(props: { session: Extract<Session, { kind: 'signed-in' }>; route: Route; onSignOut: () => void }) {
  const { me, customer } = props.session;
  const [socket, setSocket] = useState<SocketState>('connecting');
  const [menu, setMenu] = useState(false);
  const events = useMemo(() => new EventStream(), []);
  useEffect(() => {
    events.onState = (s) => setSocket(s);
    events.start();
    return () => events.stop();
  }, [events]);
  const ctx: ConsoleContext = {
    me,
    customer,
    events,
    // customer-wide topics need manager permission; an agent follows what concerns it
    topic: (resource, id = '*') => (canManage(me) ? `customer_id:${customer.id}:${resource}:${id}` : `agent_id:${me.id}:${resource}:${id}`),
  };
  const operator = isSuperAdmin(me);
  const section = props.route.path[0] || 'calls';
  // the browser phone starts on the first visit of Agents & queues and stays registered across pages
  const [phoneWanted, setPhoneWanted] = useState(false);
  const [phonePhase, setPhonePhase] = useState<PhonePhase>('idle');
  useEffect(() => {
    if (section === 'contact-center') setPhoneWanted(true);
  }, [section]);
  useEffect(() => setMenu(false), [section, props.route.path[1]]);

  return (
    <Ctx.Provider value={ctx}>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <button class="menu-toggle" aria-expanded={menu} aria-controls="nav" onClick={() => setMenu(!menu)}>
          Menu
        </button>
        <span class="brand">openvoice</span>
        <span class={`socket socket-${socket}`} title="Live event stream" aria-live="polite">
          {socket === 'open' ? 'live' : socket}
        </span>
        <span class="who">
          {me.username} · {customer.name || customer.email}
        </span>
        <button class="link" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <div class="layout">
        <nav id="nav" class={menu ? 'open' : ''} aria-label="Sections">
          <ul>
            {NAV.filter((n) => (!n.operator || operator) && (!n.manager || canManage(me))).map((n) => (
              <li>
                <a href={href(n.path)} aria-current={section === n.path ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          <Page route={props.route} operator={operator} />
          {phoneWanted && (
            <section class="card" id="phone-slot" aria-label="Phone" hidden={section !== 'contact-center' && !phaseLive(phonePhase)}>
              <header class="card-head">
                <h2>Phone</h2>
              </header>
              <AgentPhone onPhase={setPhonePhase} />
            </section>
          )}
        </main>
      </div>
    </Ctx.Provider>
  );
}

function Page({ route, operator }: { route: Route; operator: boolean }) {
  const [section = 'calls', id] = route.path;
  switch (section) {
    case 'calls':
      return id ? <CallPage key={id} id={id} /> : <CallsPage />;
    case 'dashboard':
      return <DashboardPage route={route} />;
    case 'numbers':
      return <NumbersPage />;
    case 'extensions':
      return <ExtensionsPage focus={id} />;
    case 'voicemail':
      return <VoicemailPage box={id} />;
    case 'parked':
      return <ParkedCallsPage />;
    case 'blf':
      return <BlfPage />;
    case 'flows':
      return id ? <FlowPage key={id} id={id} /> : <FlowsPage />;
    case 'recordings':
      return <RecordingsPage focus={id} />;
    case 'contact-center':
      return <ContactCenterPage />;
    case 'ais':
      return <AisRoute path={route.path.slice(1)} />;
    case 'evals':
      return id === 'scenarios' ? <EvalScenariosRoute id={route.path[2]} /> : <EvalsPage path={route.path.slice(1)} />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'accesskeys':
      return <AccessKeysPage />;
    case 'operator':
      return operator ? <OperatorPage /> : <p class="empty">Not found.</p>;
    default:
      return <p class="empty">Not found.</p>;
  }
}
