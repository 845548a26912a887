// Parsers of the vendor documents for the provisioning tests: each returns the account settings a
// phone of that family reads, so the tests compare what a phone would apply.
import { expect } from 'chai';
import { parseXmlStrict, type XmlElement } from './xml-check';

/** Yealink `.cfg`: the version header, then `key = value` lines (comments start with #). */
export function yealinkCfg(text: string): Map<string, string> {
  const lines = text.split('\n').filter((l) => l !== '');
  expect(lines[0]).to.equal('#!version:1.0.0.1');
  return new Map(
    lines
      .slice(1)
      .filter((l) => !l.startsWith('#'))
      .map((l) => {
        const m = /^([a-z0-9_.]+) = (.*)$/.exec(l);
        expect(m, `bad line ${l}`).to.not.equal(null);
        return [m![1]!, m![2]!] as [string, string];
      }),
  );
}

const childTexts = (e: XmlElement) => Object.fromEntries(e.children.map((c) => [c.name, c.text]));

export function grandstreamXml(text: string): { mac: string | undefined; p: Record<string, string> } {
  const root = parseXmlStrict(text);
  expect(root.name).to.equal('gs_provision');
  const config = root.children.find((c) => c.name === 'config')!;
  return { mac: root.children.find((c) => c.name === 'mac')?.text, p: childTexts(config) };
}

export function polycomPhone(text: string): Record<string, string> {
  const root = parseXmlStrict(text);
  expect(root.name).to.equal('polycomConfig');
  return root.children[0]!.attrs;
}

export function polycomMaster(text: string): Record<string, string> {
  const root = parseXmlStrict(text);
  expect(root.name).to.equal('APPLICATION');
  return root.attrs;
}

export function ciscoXml(text: string): Record<string, string> {
  const root = parseXmlStrict(text);
  expect(root.name).to.equal('flat-profile');
  return childTexts(root);
}

export function fanvilXml(text: string): Record<string, string> {
  const root = parseXmlStrict(text);
  expect(root.name).to.equal('sysConf');
  const line = root.children.find((c) => c.name === 'sip')!.children.find((c) => c.name === 'line' && c.attrs.index === '1')!;
  return childTexts(line);
}

/** Real phones' User-Agent headers. */
export const UA = {
  yealink: 'Yealink SIP-T54W 96.86.0.100',
  polycom: 'PolycomVVX-VVX_450-UA/6.4.0',
  grandstream: 'Grandstream Model HW GXP2170 SW 1.0.11.23',
  spa: 'Cisco/SPA504G-7.6.2',
  mpp: 'Cisco-CP-8841-3PCC/11.3',
  fanvil: 'Fanvil X6U 2.12.x',
  linphone: 'LinphoneAndroid/5.2.5 (Pixel 7) LinphoneSDK/5.3.47 (tags/5.3.47^0)',
  snom: 'snom D785/10.1.54.13',
} as const;
