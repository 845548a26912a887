import { expect } from 'chai';
import zlib from 'node:zlib';
import QRCode from 'qrcode';
import { renderConfig, formatFromUserAgent, PHONE_FORMATS, type ProvisioningAccount } from '../../../control-api/provisioning';
import { qrPng, qrSvg } from '../../../control-api/provisioning/qr';
import { parseXmlStrict, find } from './xml-check';

const account = (over: Partial<ProvisioningAccount> = {}): ProvisioningAccount => ({
  username: '1001',
  password: `p<a&s"s'w>rd`,
  domain: 'ab12.reg.sip.example.test',
  displayName: 'Front <Desk> & "Co"',
  proxyHost: 'ab12.reg.sip.example.test',
  proxyPort: 5060,
  transport: 'udp',
  expires: 3600,
  mac: null,
  ...over,
});

describe('provisioning renderers', () => {
  it('Linphone: the addendum form, well-formed, password escaped and recoverable', () => {
    const out = renderConfig('linphone', account());
    expect(out.contentType).to.match(/^application\/xml/);
    const root = parseXmlStrict(out.body);
    expect(root.name).to.equal('config');
    expect(root.attrs.xmlns).to.equal('http://www.linphone.org/xsds/lpconfig.xsd');
    const entry = (section: string, name: string) => find(root, (e) => e.name === 'section' && e.attrs.name === section)?.children.find((c) => c.attrs.name === name);
    expect(entry('proxy_0', 'reg_proxy')?.text).to.equal('<sip:ab12.reg.sip.example.test;transport=udp>');
    expect(entry('proxy_0', 'reg_identity')?.text).to.equal('sip:1001@ab12.reg.sip.example.test');
    expect(entry('auth_info_0', 'username')?.text).to.equal('1001');
    expect(entry('auth_info_0', 'passwd')?.text).to.equal(`p<a&s"s'w>rd`);
    expect(entry('auth_info_0', 'domain')?.text).to.equal('ab12.reg.sip.example.test');
    expect(entry('auth_info_0', 'realm')?.text).to.equal('ab12.reg.sip.example.test');
    expect(out.body).not.to.contain(`p<a&s`);
    for (const e of root.children.flatMap((s) => s.children)) expect(e.attrs.overwrite).to.equal('true');
  });

  it('Linphone: an outbound proxy with a non-default port is reg_proxy and reg_route; reg_identity keeps the registration domain', () => {
    const root = parseXmlStrict(renderConfig('linphone', account({ proxyHost: '192.0.2.10', proxyPort: 5080, transport: 'tcp' })).body);
    expect(find(root, (e) => e.attrs.name === 'reg_proxy')?.text).to.equal('<sip:192.0.2.10:5080;transport=tcp>');
    expect(find(root, (e) => e.attrs.name === 'reg_identity')?.text).to.equal('sip:1001@ab12.reg.sip.example.test');
    expect(find(root, (e) => e.attrs.name === 'reg_route')?.text).to.equal('<sip:192.0.2.10:5080;transport=tcp;lr>');
  });

  it('Yealink: version header and the account keys, one per line', () => {
    const out = renderConfig('yealink', account({ password: 'line\nbreak=x' }));
    const lines = out.body.trim().split('\n');
    expect(lines[0]).to.equal('#!version:1.0.0.1');
    const kv = new Map(
      lines.slice(1).map((l) => {
        const m = /^([a-z0-9_.]+) = (.*)$/.exec(l);
        expect(m, `bad line ${l}`).to.not.equal(null);
        return [m![1], m![2]] as const;
      }),
    );
    for (const k of [
      'account.1.enable',
      'account.1.auth_name',
      'account.1.user_name',
      'account.1.password',
      'account.1.sip_server.1.address',
      'account.1.sip_server.1.port',
      'account.1.sip_server.1.transport_type',
      'account.1.display_name',
      'account.1.label',
    ]) {
      expect(kv.has(k), k).to.equal(true);
    }
    expect(kv.get('account.1.enable')).to.equal('1');
    expect(kv.get('account.1.user_name')).to.equal('1001');
    expect(kv.get('account.1.password')).to.equal('linebreak=x');
    expect(kv.get('account.1.sip_server.1.address')).to.equal('ab12.reg.sip.example.test');
    expect(kv.get('account.1.sip_server.1.transport_type')).to.equal('0');
  });

  it('Grandstream: gs_provision with the account P-values', () => {
    const root = parseXmlStrict(renderConfig('grandstream', account()).body);
    expect(root.name).to.equal('gs_provision');
    const config = root.children[0];
    expect(config.name).to.equal('config');
    const p = Object.fromEntries(config.children.map((c) => [c.name, c.text]));
    expect(p.P271).to.equal('1');
    expect(p.P47).to.equal('ab12.reg.sip.example.test');
    expect(p.P35).to.equal('1001');
    expect(p.P36).to.equal('1001');
    expect(p.P34).to.equal(`p<a&s"s'w>rd`);
    expect(p.P3).to.equal('Front <Desk> & "Co"');
    expect(p.P32).to.equal('60');
  });

  it('Polycom: polycomConfig with reg.1 attributes', () => {
    const root = parseXmlStrict(renderConfig('polycom', account()).body);
    expect(root.name).to.equal('polycomConfig');
    const reg = root.children[0];
    expect(reg.name).to.equal('reg');
    expect(reg.attrs['reg.1.address']).to.equal('1001@ab12.reg.sip.example.test');
    expect(reg.attrs['reg.1.auth.userId']).to.equal('1001');
    expect(reg.attrs['reg.1.auth.password']).to.equal(`p<a&s"s'w>rd`);
    expect(reg.attrs['reg.1.server.1.transport']).to.equal('UDPOnly');
  });

  it('Snom: settings/phone-settings with user_* of identity 1', () => {
    const root = parseXmlStrict(renderConfig('snom', account()).body);
    expect(root.name).to.equal('settings');
    const ps = root.children[0];
    expect(ps.name).to.equal('phone-settings');
    const v = Object.fromEntries(ps.children.map((c) => [c.name, c]));
    expect(v.user_name.text).to.equal('1001');
    expect(v.user_pass.text).to.equal(`p<a&s"s'w>rd`);
    expect(v.user_host.text).to.equal('ab12.reg.sip.example.test');
    expect(v.user_name.attrs.idx).to.equal('1');
  });

  it('every format renders a control-character password without breaking its syntax', () => {
    for (const f of PHONE_FORMATS) {
      const body = renderConfig(f, account({ password: 'a\u0001b\u0000c<&>' })).body;
      if (f !== 'yealink') parseXmlStrict(body);
      expect(body).not.to.match(/[\u0000\u0001]/); // eslint-disable-line no-control-regex -- asserts control characters are gone
    }
  });

  it('the strict checker itself rejects broken XML', () => {
    for (const bad of ['<a><b></a></b>', '<a x=1/>', '<a>&nbsp;</a>', '<a>1 < 2</a>', '<a/><b/>', '<a x="1" x="2"/>', '<a>']) {
      expect(() => parseXmlStrict(bad), bad).to.throw();
    }
  });

  it('User-Agent picks the family; one naming none picks nothing (the router answers 400)', () => {
    expect(formatFromUserAgent('Yealink SIP-T46S 66.86.0.15')).to.equal('yealink');
    expect(formatFromUserAgent('Grandstream GXP2170 1.0.11.3')).to.equal('grandstream');
    expect(formatFromUserAgent('PolycomVVX-VVX_411-UA/5.9.0')).to.equal('polycom');
    expect(formatFromUserAgent('Poly/7.0 Edge E350')).to.equal('polycom');
    expect(formatFromUserAgent('snom D785/10.1.54.13')).to.equal('snom');
    expect(formatFromUserAgent('Cisco/SPA504G-7.6.2')).to.equal('cisco');
    expect(formatFromUserAgent('Cisco-CP-8841-3PCC/11.3')).to.equal('cisco');
    expect(formatFromUserAgent('Fanvil X6U 2.12.x')).to.equal('fanvil');
    expect(formatFromUserAgent('Linphone/5.2 (iPhone)')).to.equal('linphone');
    expect(formatFromUserAgent(undefined)).to.equal(null);
    expect(formatFromUserAgent('curl/8.0')).to.equal(null);
    expect(formatFromUserAgent('Unknown')).to.equal(null);
  });

  it('Cisco flat-profile and Fanvil sysConf: well-formed, the password escaped and recoverable', () => {
    const c = parseXmlStrict(renderConfig('cisco', account({ proxyHost: '192.0.2.10', proxyPort: 5080 })).body);
    expect(c.name).to.equal('flat-profile');
    const cv = Object.fromEntries(c.children.map((e) => [e.name, e.text]));
    expect(cv).to.include({
      User_ID_1_: '1001',
      Auth_ID_1_: '1001',
      Password_1_: `p<a&s"s'w>rd`,
      Proxy_1_: 'ab12.reg.sip.example.test',
      Outbound_Proxy_1_: '192.0.2.10:5080',
      Use_Outbound_Proxy_1_: 'Yes',
    });
    const noProxy = Object.fromEntries(parseXmlStrict(renderConfig('cisco', account()).body).children.map((e) => [e.name, e.text]));
    expect(noProxy).to.include({ Proxy_1_: 'ab12.reg.sip.example.test', Use_Outbound_Proxy_1_: 'No', Outbound_Proxy_1_: '' });
    const f = parseXmlStrict(renderConfig('fanvil', account({ proxyHost: '192.0.2.10', transport: 'tls', proxyPort: 5061 })).body);
    expect(f.name).to.equal('sysConf');
    const line = find(f, (e) => e.name === 'line')!;
    const fv = Object.fromEntries(line.children.map((e) => [e.name, e.text]));
    expect(fv).to.include({ RegisterAddr: 'ab12.reg.sip.example.test', RegisterPswd: `p<a&s"s'w>rd`, ProxyAddr: '192.0.2.10', ProxyPort: '5061', Transport: '3' });
  });

  it('Grandstream names the bound MAC in <mac>', () => {
    const root = parseXmlStrict(renderConfig('grandstream', account({ mac: '000b82aabbcc' })).body);
    expect(root.children.map((c) => c.name)).to.deep.equal(['mac', 'config']);
    expect(root.children[0]!.text).to.equal('000b82aabbcc');
    expect(parseXmlStrict(renderConfig('grandstream', account()).body).children.map((c) => c.name)).to.deep.equal(['config']);
  });
});

describe('provisioning QR codes', () => {
  const short = 'https://pbx.example.test/provisioning/extension?token=' + 'a'.repeat(64);
  const long = short + '&format=grandstream&' + 'x'.repeat(200);

  function pngInfo(buf: Buffer) {
    expect(buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).to.equal(true);
    let off = 8;
    let width = 0,
      height = 0,
      colorType = -1,
      bitDepth = 0;
    const idat: Buffer[] = [];
    let sawEnd = false;
    while (off < buf.length) {
      const len = buf.readUInt32BE(off);
      const type = buf.toString('latin1', off + 4, off + 8);
      const data = buf.subarray(off + 8, off + 8 + len);
      if (type === 'IHDR') {
        width = data.readUInt32BE(0);
        height = data.readUInt32BE(4);
        bitDepth = data[8];
        colorType = data[9];
      } else if (type === 'IDAT') idat.push(data);
      else if (type === 'IEND') sawEnd = true;
      off += 12 + len;
    }
    expect(sawEnd).to.equal(true);
    const raw = zlib.inflateSync(Buffer.concat(idat));
    const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[colorType];
    expect(raw.length).to.equal(height * (1 + Math.ceil((width * channels * bitDepth) / 8)));
    return { width, height };
  }

  it('PNG: valid signature, IHDR, inflatable image data of the declared size', async () => {
    const { width, height } = pngInfo(await qrPng(short));
    expect(width).to.equal(height);
    expect(width).to.be.at.least(21 + 4);
  });

  it('the code grows with the URL length (symbol size matches the qrcode model of that URL)', async () => {
    const m1 = QRCode.create(short, { errorCorrectionLevel: 'M' }).modules.size;
    const m2 = QRCode.create(long, { errorCorrectionLevel: 'M' }).modules.size;
    expect(m2).to.be.greaterThan(m1);
    for (const [url, modules] of [
      [short, m1],
      [long, m2],
    ] as const) {
      const svg = await qrSvg(url);
      const root = parseXmlStrict(svg);
      expect(root.name).to.equal('svg');
      expect(root.attrs.viewBox).to.equal(`0 0 ${modules + 4} ${modules + 4}`);
      const path = root.children.find((c) => c.name === 'path' && /^M/.test(c.attrs.d ?? '') && c.attrs.stroke);
      expect(path, 'a dark-module path').to.not.equal(undefined);
    }
  });
});
