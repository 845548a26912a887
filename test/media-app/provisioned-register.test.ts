// A phone provisioned from the QR code on a default install (no wildcard DNS) registers on first
// scan: the document's outbound proxy is the SIP server's advertised address, the REGISTER's
// Request-URI/To stay the registration domain {label}.reg.{SIP_DOMAIN} (it names the customer).
// The sipp REGISTERs below are built from the rendered documents' own fields.
import { usePlatform } from '../../testkit/media-app/platform-hooks';
import { expect } from 'chai';
import { loadConfig } from '../../core/config';
import { renderConfig } from '../../control-api/provisioning';
import { accountFor } from '../../control-api/provisioning/target';
import { parseXmlStrict, find } from '../control-api/resources/xml-check';
import { testEnv } from '../../testkit/api';
import { createExtension, sipp, SIP_DOMAIN, type Platform } from '../../testkit/media-app/harness';

function registerVia(ruri: string, user: string, domain: string, route: string | null): string {
  const req = (cseq: number, auth: boolean) => `<send retrans="500"><![CDATA[
REGISTER ${ruri} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
${route ? `Route: ${route}\n` : ''}From: <sip:${user}@${domain}>;tag=[call_number]
To: <sip:${user}@${domain}>
Call-ID: [call_id]
CSeq: ${cseq} REGISTER
Contact: <sip:${user}@[local_ip]:[local_port]>
Expires: 3600
Max-Forwards: 70
${auth ? '[authentication]\n' : ''}Content-Length: 0

]]></send>`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="provisioned-register">
${req(1, false)}
<recv response="401" auth="true"/>
${req(2, true)}
<recv response="200"/>
</scenario>`;
}

describe('media-app: a QR-provisioned phone registers through the outbound proxy', function () {
  this.timeout(60_000);
  let p: Platform;

  usePlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.1/32' }, (x) => (p = x));

  /** The provisioning target of a default install whose sip-server is the test platform's. */
  const target = () => loadConfig(testEnv({ SIP_DOMAIN, SIP_ADVERTISED_HOST: '127.0.0.1', SIP_PORT: String(p.sipPort) }) as NodeJS.ProcessEnv, { persistSecret: false }).provisioningSip;

  it('Linphone: what liblinphone 5.1 sends (REGISTER sip:{identity domain} to reg_proxy, reg_route as Route) registers', async () => {
    const { ext, domain, password } = await createExtension();
    const root = parseXmlStrict(renderConfig('linphone', accountFor(ext, target())).body);
    const regProxy = find(root, (e) => e.attrs.name === 'reg_proxy')!.text;
    const regRoute = find(root, (e) => e.attrs.name === 'reg_route')!.text;
    const identity = find(root, (e) => e.attrs.name === 'reg_identity')!.text;
    expect(regProxy).to.equal(`<sip:127.0.0.1:${p.sipPort};transport=udp>`);
    expect(regRoute).to.equal(`<sip:127.0.0.1:${p.sipPort};transport=udp;lr>`);
    expect(identity).to.equal(`sip:${ext.username}@${domain}`);
    const proxy = /^<sip:([^;>]+)/.exec(regProxy)![1]!;
    const r = await sipp(registerVia(`sip:${domain}`, ext.username, domain, regRoute), [proxy, '-i', '127.0.0.1', '-m', '1', '-au', ext.username, '-ap', password]).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(await p.app.registrar.bindings.get(`${ext.username}@${domain}`)).to.have.length(1);
  });

  it('Yealink: sip_server = label domain, outbound proxy = the platform; no Route', async () => {
    const { ext, domain, password } = await createExtension();
    const kv = new Map(
      renderConfig('yealink', accountFor(ext, target()))
        .body.trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(' = ') as [string, string]),
    );
    expect(kv.get('account.1.outbound_proxy_enable')).to.equal('1');
    const proxy = `${kv.get('account.1.outbound_proxy.1.address')}:${kv.get('account.1.outbound_proxy.1.port')}`;
    expect(proxy).to.equal(`127.0.0.1:${p.sipPort}`);
    const server = kv.get('account.1.sip_server.1.address')!;
    expect(server).to.equal(domain);
    const r = await sipp(registerVia(`sip:${server}`, ext.username, domain, null), [proxy, '-i', '127.0.0.1', '-m', '1', '-au', ext.username, '-ap', password]).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(await p.app.registrar.bindings.get(`${ext.username}@${domain}`)).to.have.length(1);
  });
});
