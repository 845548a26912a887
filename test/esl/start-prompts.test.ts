// The start command with the platform's defaults (scripts/processes.ts: each process's environment as it
// gets it): media-app on the fsmrf backend against our own switch (ESL_LISTEN and MEDIA_SERVER set). The
// switch's room plays only inside its sounds directory (ESL_SOUNDS_DIR, esl/config.ts), media-app fetches
// every prompt into MEDIA_SERVER_PROMPTS_DIR (media-app/kit/config.ts promptsDir): with neither set, or
// with the prompts moved alone, the switch reads where media-app writes.
import { expect } from 'chai';
import path from 'node:path';
import { loadEslConfig } from '../../esl/config';
import { loadMediaAppConfig, promptsDir } from '../../media-app/kit/config';
import { platformProcesses } from '../../scripts/processes';

const DATA_DIR = '/srv/ov-data';
const PLATFORM = { DATA_DIR, ESL_LISTEN: '127.0.0.1:8021', ESL_PASSWORD: 'x', MEDIA_SERVER: 'freeswitch://127.0.0.1:8021?password=x' };

/** The environment a process of the start command gets (scripts/start.ts: the command's, then its own). */
function envOf(env: NodeJS.ProcessEnv, name: string): NodeJS.ProcessEnv {
  const p = platformProcesses(env).find((x) => x.name === name);
  if (!p) throw new Error(`no process ${name}`);
  return { ...env, ...p.env };
}

/** Where the switch's room may play from, and where media-app writes the prompts, both as started. */
function dirs(env: NodeJS.ProcessEnv): { sounds: string; prompts: string } {
  const media = envOf(env, 'media-app');
  return { sounds: loadEslConfig(envOf(env, 'esl'))!.conferenceFiles.sounds, prompts: promptsDir(loadMediaAppConfig(media), media.DATA_DIR ?? '.data') };
}

/** Whether `file` lies inside `dir` (what the switch's room accepts, esl/conference/playback.ts). */
const inside = (dir: string, file: string) => !path.relative(dir, file).startsWith('..') && !path.isAbsolute(path.relative(dir, file));

describe('the start command: our switch reads the prompts media-app fetches for it', () => {
  it('with the defaults (only DATA_DIR), the switch plays from the directory media-app fetches into', () => {
    const { sounds, prompts } = dirs(PLATFORM);
    expect(prompts).to.equal(path.join(DATA_DIR, 'switch-prompts'));
    expect(inside(sounds, path.join(prompts, 'p-host-1-abcdef', 'prompt.wav')), `${prompts} inside ${sounds}`).to.equal(true);
  });

  it('MEDIA_SERVER_PROMPTS_DIR moved alone: the switch reads it there; an ESL_SOUNDS_DIR of the operator stays as set', () => {
    const moved = dirs({ ...PLATFORM, MEDIA_SERVER_PROMPTS_DIR: '/mnt/prompts' });
    expect(moved).to.deep.equal({ sounds: '/mnt/prompts', prompts: '/mnt/prompts' });
    expect(dirs({ ...PLATFORM, MEDIA_SERVER_PROMPTS_DIR: '/mnt/prompts', ESL_SOUNDS_DIR: '/mnt' })).to.deep.equal({ sounds: '/mnt', prompts: '/mnt/prompts' });
  });
});
