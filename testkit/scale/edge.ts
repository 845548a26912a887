// The shipped edge (deploy/kamailio/kamailio.cfg, unmodified) on a free loopback port: the test
// writes only kamailio-local.cfg (listen address, dispatcher list, ctl socket, limits) and
// dispatcher.list next to a copy of the config, as an operator would.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../ports';
import { KamailioProcess } from '../kamailio';

const CONFIG = path.join(__dirname, '..', '..', 'deploy', 'kamailio', 'kamailio.cfg');

export interface EdgeOptions {
  /** The nodes' sip-server ports on 127.0.0.1 (dispatcher set 1). */
  nodes: number[];
  pikeReqs?: number;
  inviteRate?: number;
  pingIntervalSec?: number;
  /** Also SIP over WebSocket on a loopback port of its own (`wsPort`; WS_PORT of the config). */
  ws?: boolean;
  /** Also SIP over secure WebSocket (`wssPort`) with this certificate and key (PEM files). */
  wss?: { certPath: string; keyPath: string };
  /** WS_KEEPALIVE_SEC: how often the edge pings its WebSocket clients. */
  wsKeepaliveSec?: number;
  /** More lines for kamailio-local.cfg. */
  localLines?: string[];
}

export class Edge {
  private constructor(
    readonly port: number,
    readonly rundir: string,
    private readonly k: KamailioProcess,
    readonly wsPort = 0,
    readonly wssPort = 0,
  ) {}

  /** The edge's SIP WebSocket URL (with `ws: true`). */
  get wsUrl(): string {
    return `ws://127.0.0.1:${this.wsPort}`;
  }

  static async start(o: EdgeOptions): Promise<Edge> {
    const port = await freePort();
    const wsPort = o.ws ? await freePort() : 0;
    const wssPort = o.wss ? await freePort() : 0;
    const rundir = fs.mkdtempSync(path.join(os.tmpdir(), 'edge-'));
    fs.copyFileSync(CONFIG, path.join(rundir, 'kamailio.cfg'));
    fs.writeFileSync(path.join(rundir, 'dispatcher.list'), o.nodes.map((p, i) => `1 sip:127.0.0.1:${p} 0 0 node=${i}\n`).join(''));
    fs.writeFileSync(
      path.join(rundir, 'kamailio-local.cfg'),
      [
        '#!define EDGE_LISTENS',
        `listen=udp:127.0.0.1:${port}`,
        `listen=tcp:127.0.0.1:${port}`,
        `#!substdef "!DISPATCHER_LIST!${rundir}/dispatcher.list!"`,
        `#!substdef "!CTL_SOCKET!unix:${rundir}/kamailio_ctl!"`,
        `#!define PIKE_REQS ${o.pikeReqs ?? 100000}`,
        `#!define INVITE_RATE ${o.inviteRate ?? 10000}`,
        `#!define DS_PING_INTERVAL ${o.pingIntervalSec ?? 1}`,
        ...(o.ws ? [`listen=tcp:127.0.0.1:${wsPort}`, `#!define WS_PORT ${wsPort}`, `#!define WS_KEEPALIVE_SEC ${o.wsKeepaliveSec ?? 30}`] : []),
        ...(o.wss ? [`listen=tls:127.0.0.1:${wssPort}`, `#!define WSS_PORT ${wssPort}`, `#!substdef "!WSS_CERT!${o.wss.certPath}!"`, `#!substdef "!WSS_KEY!${o.wss.keyPath}!"`] : []),
        ...(o.localLines ?? []),
        '',
      ].join('\n'),
    );
    const k = new KamailioProcess(path.join(rundir, 'kamailio.cfg'), rundir, { shm: 64, pkg: 8 });
    await k.start();
    return new Edge(port, rundir, k, wsPort, wssPort);
  }

  get log(): string {
    return this.k.log;
  }

  /** Kamailio's main process id (its workers are its children). */
  get pid(): number | undefined {
    return this.k.pid;
  }

  rpc(...args: string[]): Promise<string> {
    return this.k.rpc(...args);
  }

  /** Sets a node (by sip-server port) active ('a') or inactive ('i') at the dispatcher. */
  async setState(port: number, state: 'a' | 'i'): Promise<void> {
    await this.rpc('dispatcher.set_state', state, '1', `sip:127.0.0.1:${port}`);
  }

  /** Dispatcher state per node port: 'A' active, 'I' inactive, 'P' probing (first letter of FLAGS). */
  async states(): Promise<Record<number, string>> {
    const out = await this.rpc('dispatcher.list');
    const states: Record<number, string> = {};
    const re = /URI:\s*sip:127\.0\.0\.1:(\d+)\s+FLAGS:\s*(\w+)/g;
    for (let m = re.exec(out); m; m = re.exec(out)) states[Number(m[1])] = m[2]!;
    return states;
  }

  async close(): Promise<void> {
    await this.k.stop();
    fs.rmSync(this.rundir, { recursive: true, force: true });
  }
}
