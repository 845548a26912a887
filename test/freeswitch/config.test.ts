// freeswitch/: the configuration a real FreeSWITCH 1.10 gets to be the platform's media server. Every
// XML file is parsed (fast-xml-parser, after its strict well-formedness check), FreeSWITCH's
// preprocessor is followed ($${var} from vars.xml, the include globs), and each file is held to what
// the platform and drachtio-fsmrf expect of it: the drachtio_mrf profile, the mrf dialplan's answer and
// socket, the event socket's port and password variables against .env.example, every module fsmrf's
// applications and API commands need, conference profiles at 8 and 16 kHz.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ESL_VARIABLES } from '../../esl/config';
import { RTPENGINE_DEFAULTS } from '../../scripts/rtpengine';
import { MEDIA_TIMEOUT_HEADER } from '../../core/sip/media-timeout-header';

const DIR = path.join(__dirname, '../../freeswitch');
const ROOT = path.join(__dirname, '../..');

type El = Record<string, unknown>;
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', isArray: (_n, _j, _leaf, isAttribute) => !isAttribute });

/** Every .xml file under freeswitch/, relative. */
function xmlFiles(dir = DIR): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return xmlFiles(full);
    return e.name.endsWith('.xml') ? [path.relative(DIR, full)] : [];
  });
}

const read = (rel: string) => fs.readFileSync(path.join(DIR, rel), 'utf8');
/** The text FreeSWITCH's preprocessor acts on: comments left out. */
const live = (rel: string) => read(rel).replace(/<!--[\s\S]*?-->/g, '');
const parse = (rel: string): El => parser.parse(read(rel)) as El;
const kids = (e: El | undefined, name: string): El[] => (e?.[name] as El[] | undefined) ?? [];
const one = (e: El | undefined, name: string): El => {
  const list = kids(e, name);
  if (list.length !== 1) throw new Error(`expected one <${name}>, found ${list.length}`);
  return list[0]!;
};
const attr = (e: El, name: string) => e[`@${name}`] as string | undefined;

/** vars.xml's `<X-PRE-PROCESS cmd="set" data="name=value">`, in order (a value may use earlier ones). */
function vars(): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of kids(one(parse('vars.xml'), 'include'), 'X-PRE-PROCESS')) {
    expect(attr(p, 'cmd')).to.equal('set');
    const data = attr(p, 'data')!;
    const eq = data.indexOf('=');
    out.set(data.slice(0, eq), data.slice(eq + 1));
  }
  return out;
}

/** Variables FreeSWITCH sets itself before it reads the configuration (switch_core.c). */
const BUILT_IN = new Set(['local_ip_v4', 'local_ip_v6', 'sounds_dir', 'recordings_dir', 'base_dir', 'conf_dir', 'log_dir', 'hostname', 'switch_serial']);

/** A value as FreeSWITCH's preprocessor expands it; a built-in stays as it is. */
function expand(v: string, env = vars()): string {
  return v.replace(/\$\$\{([^}]+)\}/g, (all, name: string) => {
    if (env.has(name)) return expand(env.get(name)!, env);
    if (BUILT_IN.has(name)) return all;
    throw new Error(`$\${${name}} is not set in vars.xml`);
  });
}

/** `<param name value>` children as a map, expanded. */
function params(e: El): Map<string, string> {
  return new Map(kids(e, 'param').map((p) => [attr(p, 'name')!, expand(attr(p, 'value')!)]));
}

/** A commented default of .env.example (`# NAME=value` or `NAME=value`). */
function envDefault(name: string): string {
  const m = new RegExp(`^#?\\s*${name}=(.*)$`, 'm').exec(fs.readFileSync(path.join(ROOT, '.env.example'), 'utf8'));
  if (!m) throw new Error(`${name} is not in .env.example`);
  return m[1]!.trim();
}

describe('freeswitch/: the configuration of a real FreeSWITCH 1.10', () => {
  const files = xmlFiles();

  it('has the files the platform needs, each well-formed XML', () => {
    expect(files).to.include.members([
      'freeswitch.xml',
      'vars.xml',
      'sip_profiles/drachtio_mrf.xml',
      'dialplan/mrf.xml',
      'autoload_configs/event_socket.conf.xml',
      'autoload_configs/acl.conf.xml',
      'autoload_configs/modules.conf.xml',
      'autoload_configs/conference.conf.xml',
      'autoload_configs/sofia.conf.xml',
      'autoload_configs/switch.conf.xml',
    ]);
    for (const f of files) {
      const r = XMLValidator.validate(read(f));
      expect(r, `${f}: ${JSON.stringify(r)}`).to.equal(true);
    }
    expect(fs.existsSync(path.join(DIR, 'README.md'))).to.equal(true);
  });

  it('the checks can fail: a broken file is refused', () => {
    expect(XMLValidator.validate('<configuration><settings></configuration>')).to.not.equal(true);
    expect(XMLValidator.validate('<a b="1" b="2"/>')).to.not.equal(true);
    expect(() => expand('$${no_such_var}')).to.throw(/no_such_var/);
  });

  it('every $${variable} is set in vars.xml (or by FreeSWITCH), every include matches files', () => {
    for (const f of files) for (const m of live(f).matchAll(/\$\$\{([^}]+)\}/g)) expect(expand(m[0]), f).to.be.a('string');
    for (const f of files) {
      for (const m of live(f).matchAll(/<X-PRE-PROCESS cmd="include" data="([^"]+)"\/>/g)) {
        const pattern = path.join(path.dirname(path.join(DIR, f)), m[1]!);
        const dir = path.dirname(pattern);
        const glob = new RegExp(`^${path.basename(pattern).replace(/\./g, '\\.').replace(/\*/g, '.*')}$`);
        const matched = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => glob.test(n)) : [];
        expect(matched, `${f} includes ${m[1]}`).to.not.be.empty;
      }
    }
    // the top: vars, the modules' settings, the dialplan; the SIP profiles through sofia.conf.xml
    const top = read('freeswitch.xml');
    for (const inc of ['vars.xml', 'autoload_configs/*.xml', 'dialplan/*.xml']) expect(top).to.include(`data="${inc}"`);
    expect(read('autoload_configs/sofia.conf.xml')).to.include('data="../sip_profiles/*.xml"');
  });

  it("the drachtio_mrf profile: the one fsmrf looks for, in the mrf context, on .env.example's ESL_SIP_ADDRESS port, sip-server only", () => {
    const profiles = files.filter((f) => f.startsWith('sip_profiles/'));
    expect(profiles).to.deep.equal(['sip_profiles/drachtio_mrf.xml']);
    const profile = one(one(parse('sip_profiles/drachtio_mrf.xml'), 'include'), 'profile');
    expect(attr(profile, 'name')).to.equal('drachtio_mrf');
    const p = params(one(profile, 'settings'));
    expect(p.get('context')).to.equal('mrf');
    expect(p.get('dialplan')).to.equal('XML');
    const [sipHost, sipPort] = envDefault('ESL_SIP_ADDRESS').split(':');
    expect(p.get('sip-port')).to.equal(sipPort);
    expect(p.get('sip-ip')).to.equal(sipHost);
    expect(p.get('auth-calls')).to.equal('false');
    expect(p.get('enable-3pcc')).to.equal('true'); // fsmrf's createEndpoint without SDP
    expect(p.get('dtmf-type')).to.equal('rfc2833');
    const acl = p.get('apply-inbound-acl')!;
    const lists = kids(one(one(parse('autoload_configs/acl.conf.xml'), 'configuration'), 'network-lists'), 'list');
    const list = lists.find((l) => attr(l, 'name') === acl);
    expect(list, `acl list ${acl}`).to.not.equal(undefined);
    expect(attr(list!, 'default')).to.equal('deny');
  });

  it("the mrf dialplan sets media_timeout from the platform's header and answers fsmrf's INVITEs and opens the outbound socket to X-esl-outbound (async full), nothing else", () => {
    const contexts = kids(one(parse('dialplan/mrf.xml'), 'include'), 'context');
    expect(contexts.map((c) => attr(c, 'name'))).to.deep.equal(['mrf']);
    const exts = kids(contexts[0], 'extension');
    expect(exts).to.have.length(1);
    const conds = kids(exts[0], 'condition');
    const ua = conds.find((c) => attr(c, 'field') === '${sip_user_agent}')!;
    const re = new RegExp(attr(ua, 'expression')!);
    expect(re.test('drachtio-fsmrf:6d0f3c1e-8a34-4bd4-9c55-2f1b1e5c0a77')).to.equal(true);
    expect(re.test('Polycom/5.9')).to.equal(false);
    const hdr = conds.find((c) => attr(c, 'field') === '${sip_h_X-esl-outbound}')!;
    const hostPort = new RegExp(attr(hdr, 'expression')!);
    expect(hostPort.test('10.0.0.7:34521')).to.equal(true);
    expect(hostPort.test('10.0.0.7')).to.equal(false);
    const actions = conds.flatMap((c) => kids(c, 'action')).map((a) => [attr(a, 'application'), attr(a, 'data')]);
    // the media timeout first: FreeSWITCH reads media_timeout when the answer activates the RTP, not later
    expect(actions[0]).to.deep.equal(['set', `media_timeout=\${sip_h_${MEDIA_TIMEOUT_HEADER}}`]);
    expect(actions[1]).to.deep.equal(['answer', undefined]);
    expect(actions.at(-1)).to.deep.equal(['socket', '${sip_h_X-esl-outbound} async full']);
    expect(actions.filter(([app]) => app === 'socket')).to.have.length(1);
  });

  it("the event socket: .env.example's ESL_LISTEN port, the password as a placeholder to replace (never ClueCon), loopback ACL", () => {
    expect(ESL_VARIABLES).to.include.members(['ESL_LISTEN', 'ESL_PASSWORD']);
    const s = one(one(parse('autoload_configs/event_socket.conf.xml'), 'configuration'), 'settings');
    const raw = new Map(kids(s, 'param').map((p) => [attr(p, 'name')!, attr(p, 'value')!]));
    expect(raw.get('listen-port')).to.equal('$${esl_port}');
    expect(raw.get('password')).to.equal('$${esl_password}');
    const p = params(s);
    expect(p.get('listen-port')).to.equal(envDefault('ESL_LISTEN'));
    expect(p.get('listen-ip')).to.equal('127.0.0.1');
    expect(envDefault('ESL_PASSWORD')).to.equal(''); // no default password on either side
    expect(p.get('password')).to.match(/^REPLACE-WITH-/);
    expect(p.get('password')).to.not.equal('ClueCon');
    const acl = p.get('apply-inbound-acl')!;
    const list = kids(one(one(parse('autoload_configs/acl.conf.xml'), 'configuration'), 'network-lists'), 'list').find((l) => attr(l, 'name') === acl)!;
    expect(attr(list, 'default')).to.equal('deny');
    expect(kids(list, 'node').map((n) => [attr(n, 'type'), attr(n, 'cidr')])).to.deep.equal([['allow', '127.0.0.1/32']]);
  });

  it('modules.conf loads every module fsmrf needs, mod_audio_fork and mod_avmd among them, each once', () => {
    const loaded = kids(one(one(parse('autoload_configs/modules.conf.xml'), 'configuration'), 'modules'), 'load').map((l) => attr(l, 'module')!);
    expect(new Set(loaded).size).to.equal(loaded.length);
    // what fsmrf 5.0's Endpoint, Conference and MediaServer execute and call (esl/README.md, issue 55)
    const needed = {
      mod_event_socket: 'Mrf.connect, the socket application',
      mod_sofia: 'the drachtio_mrf profile, sofia status',
      mod_dialplan_xml: 'the mrf context',
      mod_dptools: 'answer, playback, play_and_get_digits, record, record_session, set, export, set_mute',
      mod_commands: 'uuid_bridge, uuid_transfer, uuid_dump, uuid_setvar',
      mod_conference: 'conference and its API',
      mod_avmd: 'avmd_start / avmd::beep',
      mod_audio_fork: 'uuid_audio_fork',
      mod_say_en: 'say',
      mod_tts_commandline: 'speak',
      mod_sndfile: 'wav playback and record',
      mod_tone_stream: 'tone_stream://',
    };
    for (const [mod, why] of Object.entries(needed)) expect(loaded, `${mod} (${why})`).to.include(mod);
  });

  it('conference profiles at 8 and 16 kHz, "default" (the one fsmrf gets without a profile) at 8 kHz', () => {
    const profiles = kids(one(one(parse('autoload_configs/conference.conf.xml'), 'configuration'), 'profiles'), 'profile');
    const rates = new Map(profiles.map((p) => [attr(p, 'name')!, Number(params(p).get('rate'))]));
    expect(rates.get('default')).to.equal(8000);
    expect([...rates.values()]).to.include.members([8000, 16000]);
    for (const p of profiles) expect(params(p).get('interval'), attr(p, 'name')).to.equal('20');
  });

  it("each conference profile names its TTS: saymember (an AnnounceUrl's <Say>) speaks nothing without tts-engine and tts-voice", () => {
    // conference_member_say returns success with nothing queued when the profile has no tts-engine or
    // tts-voice: no speech and no play-file-member-done. The engine is mod_tts_commandline's speech
    // interface (its name: tts_commandline), the voice espeak-ng's, as the endpoint's speak uses.
    const profiles = kids(one(one(parse('autoload_configs/conference.conf.xml'), 'configuration'), 'profiles'), 'profile');
    const loaded = kids(one(one(parse('autoload_configs/modules.conf.xml'), 'configuration'), 'modules'), 'load').map((l) => attr(l, 'module')!);
    expect(loaded).to.include('mod_tts_commandline');
    for (const p of profiles) {
      expect(params(p).get('tts-engine'), attr(p, 'name')).to.equal('tts_commandline');
      expect(params(p).get('tts-voice'), attr(p, 'name')).to.equal('en-us');
    }
  });

  it('speak: the customer\'s text reaches espeak-ng after `--`, never as an option (a text "-f/etc/…" would read a file aloud)', () => {
    const command = params(one(one(parse('autoload_configs/tts_commandline.conf.xml'), 'configuration'), 'settings')).get('command') ?? '';
    const words = command.split(/\s+/);
    const text = words.indexOf('${text}');
    expect(text, command).to.be.above(0);
    expect(words[text - 1], 'the word before ${text} ends the options').to.equal('--');
    expect(words.indexOf('${voice}'), 'the voice only as the value of -v').to.equal(words.indexOf('-v') + 1);
  });

  it("RTP ports apart from media-app's RTP_PORT_MIN..MAX and rtpengine's 40000-44999", () => {
    const p = params(one(one(parse('autoload_configs/switch.conf.xml'), 'configuration'), 'settings'));
    const lo = Number(p.get('rtp-start-port'));
    const hi = Number(p.get('rtp-end-port'));
    expect(lo).to.be.below(hi);
    const apart = (min: number, max: number) => hi < min || lo > max;
    expect(apart(Number(envDefault('RTP_PORT_MIN')), Number(envDefault('RTP_PORT_MAX')))).to.equal(true);
    expect(apart(RTPENGINE_DEFAULTS.portMin, RTPENGINE_DEFAULTS.portMax)).to.equal(true);
  });
});
