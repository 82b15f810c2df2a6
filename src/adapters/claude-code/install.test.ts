import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test-utils/temp-dir.js';
import {
  hookCommand,
  hookCommandBase,
  installClaudeCode,
  mergeHooks,
  removeHooks,
  shellQuote,
  uninstallClaudeCode,
} from './install.js';

const base = 'node /opt/contextfold/dist/cli/bin.js';

describe('installClaudeCode', () => {
  it('creates .claude/settings.json with the three hooks', () => {
    const project = tempDir().dir;
    const r = installClaudeCode({
      scope: 'project',
      projectDir: project,
      userDir: '/nowhere',
      command: base,
    });
    expect(r).toMatchObject({ changed: true, backup: null });
    expect(r.hooks).toEqual({
      UserPromptSubmit: 'added',
      PreCompact: 'added',
      SessionStart: 'added',
    });
    const s = JSON.parse(readFileSync(join(project, '.claude', 'settings.json'), 'utf8'));
    expect(s).toEqual({
      hooks: {
        UserPromptSubmit: [
          { hooks: [{ type: 'command', command: `${base} hook user-prompt-submit`, timeout: 15 }] },
        ],
        PreCompact: [
          { hooks: [{ type: 'command', command: `${base} hook pre-compact`, timeout: 60 }] },
        ],
        SessionStart: [
          { hooks: [{ type: 'command', command: `${base} hook session-start`, timeout: 15 }] },
        ],
      },
    });
  });

  it('is idempotent and keeps every other setting and hook, with a backup of the old file', () => {
    const user = tempDir().dir;
    const path = join(user, 'settings.json');
    const original = {
      model: 'opus',
      permissions: { allow: ['Bash(npm test:*)'] },
      hooks: {
        UserPromptSubmit: [
          { matcher: '', hooks: [{ type: 'command', command: '~/bin/log-prompt.sh' }] },
        ],
        Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
      },
    };
    writeFileSync(path, JSON.stringify(original, null, 4));
    const first = installClaudeCode({
      scope: 'user',
      projectDir: '/nowhere',
      userDir: user,
      command: base,
    });
    expect(first.backup).toBe(`${path}.bak`);
    expect(JSON.parse(readFileSync(`${path}.bak`, 'utf8'))).toEqual(original);
    const after = readFileSync(path, 'utf8');
    const s = JSON.parse(after);
    expect(s.model).toBe('opus');
    expect(s.permissions).toEqual(original.permissions);
    expect(s.hooks.Stop).toEqual(original.hooks.Stop);
    expect(s.hooks.UserPromptSubmit).toHaveLength(2);
    expect(s.hooks.UserPromptSubmit[0]).toEqual(original.hooks.UserPromptSubmit[0]);

    writeFileSync(`${path}.bak`, 'sentinel');
    const second = installClaudeCode({
      scope: 'user',
      projectDir: '/nowhere',
      userDir: user,
      command: base,
    });
    expect(second).toMatchObject({ changed: false, backup: null });
    expect(Object.values(second.hooks)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(readFileSync(path, 'utf8')).toBe(after);
    expect(readFileSync(`${path}.bak`, 'utf8')).toBe('sentinel');
  });

  it('updates an existing contextfold hook in place when the command changes (never duplicates)', () => {
    const project = tempDir().dir;
    installClaudeCode({
      scope: 'project',
      projectDir: project,
      userDir: '/nowhere',
      command: base,
    });
    const r = installClaudeCode({
      scope: 'project',
      projectDir: project,
      userDir: '/nowhere',
      command: 'contextfold',
      dir: '/data/cf store',
    });
    expect(Object.values(r.hooks)).toEqual(['updated', 'updated', 'updated']);
    const s = JSON.parse(readFileSync(join(project, '.claude', 'settings.json'), 'utf8'));
    expect(s.hooks.PreCompact).toEqual([
      {
        hooks: [
          {
            type: 'command',
            command: "contextfold --dir '/data/cf store' hook pre-compact",
            timeout: 60,
          },
        ],
      },
    ]);
  });

  it('recognises its hook with the options a hook command line takes (--no-redact), never adding a second', () => {
    const settings = {
      hooks: {
        UserPromptSubmit: [
          {
            hooks: [
              { type: 'command', command: 'contextfold hook user-prompt-submit --no-redact' },
            ],
          },
        ],
      },
    };
    const r = mergeHooks(settings, (e) => hookCommand('contextfold', e));
    expect(r.hooks.UserPromptSubmit).toBe('updated');
    expect(r.settings.hooks).toMatchObject({
      UserPromptSubmit: [
        {
          hooks: [{ type: 'command', command: 'contextfold hook user-prompt-submit', timeout: 15 }],
        },
      ],
    });
    // Another program's hook named like an event is not ours.
    const other = {
      hooks: { PreCompact: [{ hooks: [{ command: 'contextfold hook pre-compact-x' }] }] },
    };
    expect(mergeHooks(other, (e) => hookCommand('contextfold', e)).hooks.PreCompact).toBe('added');
  });

  it('writes a settings file that is a symlink (dotfiles) where it points, keeping the link', () => {
    const home = tempDir().dir;
    const dotfiles = join(home, 'dotfiles', 'settings.json');
    mkdirSync(join(home, 'dotfiles'));
    mkdirSync(join(home, '.claude'));
    writeFileSync(dotfiles, '{"model":"opus"}');
    const link = join(home, '.claude', 'settings.json');
    symlinkSync(dotfiles, link);
    const r = installClaudeCode({
      scope: 'user',
      projectDir: home,
      userDir: join(home, '.claude'),
      command: base,
    });
    expect(r).toMatchObject({ settings: link, changed: true, backup: `${link}.bak` });
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(dotfiles, 'utf8'))).toMatchObject({ model: 'opus', hooks: {} });
    expect(readFileSync(`${link}.bak`, 'utf8')).toBe('{"model":"opus"}');
  });

  it('refuses a settings file that is not JSON and leaves it untouched', () => {
    const project = tempDir().dir;
    mkdirSync(join(project, '.claude'));
    const path = join(project, '.claude', 'settings.json');
    writeFileSync(path, '{ "hooks": ');
    expect(() =>
      installClaudeCode({ scope: 'project', projectDir: project, userDir: '/x', command: base }),
    ).toThrow(/settings\.json is not valid JSON; fix or move it/);
    expect(readFileSync(path, 'utf8')).toBe('{ "hooks": ');
    expect(existsSync(`${path}.bak`)).toBe(false);
  });

  it('a settings path that is a directory, or a .claude that is a file, is a usage error', () => {
    const project = tempDir().dir;
    const path = join(project, '.claude', 'settings.json');
    mkdirSync(path, { recursive: true });
    const install = (projectDir: string) => () =>
      installClaudeCode({ scope: 'project', projectDir, userDir: '/x', command: base });
    expect(install(project)).toThrow(
      expect.objectContaining({
        code: 'USAGE',
        message: `cannot read ${path} (EISDIR); fix or move it, then install again`,
      }),
    );
    const other = tempDir().dir;
    writeFileSync(join(other, '.claude'), 'not a directory');
    expect(install(other)).toThrow(
      expect.objectContaining({ code: 'USAGE', message: expect.stringMatching(/^cannot write /) }),
    );
    expect(readFileSync(join(other, '.claude'), 'utf8')).toBe('not a directory');
  });

  it('refuses hooks of the wrong shape', () => {
    expect(() => mergeHooks({ hooks: [] }, () => 'x')).toThrow(/"hooks" must be an object/);
    expect(() => mergeHooks({ hooks: { PreCompact: {} } }, () => 'x')).toThrow(
      /"hooks.PreCompact" must be an array/,
    );
    expect(() => mergeHooks([], () => 'x')).toThrow(/expected a JSON object/);
  });
});

describe('uninstallClaudeCode', () => {
  it('takes out exactly what install added, keeping every other setting and hook', () => {
    const user = tempDir().dir;
    const path = join(user, 'settings.json');
    const original = {
      model: 'opus',
      hooks: {
        UserPromptSubmit: [
          { matcher: '', hooks: [{ type: 'command', command: '~/bin/log-prompt.sh' }] },
        ],
        Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
      },
    };
    writeFileSync(path, JSON.stringify(original, null, 2));
    const opts = { scope: 'user' as const, projectDir: '/nowhere', userDir: user };
    installClaudeCode({ ...opts, command: base });
    const installed = readFileSync(path, 'utf8');
    const r = uninstallClaudeCode(opts);
    expect(r).toMatchObject({ changed: true, backup: `${path}.bak` });
    expect(r.removed).toEqual({ UserPromptSubmit: 1, PreCompact: 1, SessionStart: 1 });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(original);
    expect(readFileSync(`${path}.bak`, 'utf8')).toBe(installed);
    // Again: nothing to remove, nothing written.
    writeFileSync(`${path}.bak`, 'sentinel');
    expect(uninstallClaudeCode(opts)).toMatchObject({ changed: false, backup: null });
    expect(readFileSync(`${path}.bak`, 'utf8')).toBe('sentinel');
  });

  it('removes a hook line edited by hand (an option after the event) and leaves no empty hooks', () => {
    const { settings, removed } = removeHooks({
      hooks: {
        PreCompact: [
          {
            hooks: [
              { type: 'command', command: 'contextfold --dir .cf hook pre-compact --no-redact' },
            ],
          },
        ],
        SessionStart: [],
      },
    });
    expect(removed.PreCompact).toBe(1);
    expect(settings).toEqual({ hooks: { SessionStart: [] } });
    expect(
      removeHooks({
        hooks: {
          PreCompact: [{ hooks: [{ type: 'command', command: 'contextfold hook pre-compact' }] }],
        },
      }).settings,
    ).toEqual({});
  });

  it('leaves a missing settings file missing and refuses one that is not JSON', () => {
    const project = tempDir().dir;
    const opts = { scope: 'project' as const, projectDir: project, userDir: '/nowhere' };
    expect(uninstallClaudeCode(opts)).toMatchObject({ changed: false, backup: null });
    expect(existsSync(join(project, '.claude'))).toBe(false);
    mkdirSync(join(project, '.claude'));
    writeFileSync(join(project, '.claude', 'settings.json'), '{ nope');
    expect(() => uninstallClaudeCode(opts)).toThrow(
      /not valid JSON; fix or move it, then uninstall again/,
    );
  });
});

describe('hook commands', () => {
  it('uses $CLAUDE_PROJECT_DIR for an installation inside the project, an absolute path otherwise', () => {
    expect(
      hookCommandBase({
        binPath: '/repo/node_modules/contextfold/dist/cli/bin.js',
        projectDir: '/repo',
        scope: 'project',
      }),
    ).toBe('node "$CLAUDE_PROJECT_DIR"/node_modules/contextfold/dist/cli/bin.js');
    expect(
      hookCommandBase({
        binPath: '/usr/lib/node_modules/contextfold/dist/cli/bin.js',
        projectDir: '/repo',
        scope: 'project',
      }),
    ).toBe('node /usr/lib/node_modules/contextfold/dist/cli/bin.js');
    expect(
      hookCommandBase({
        binPath: '/repo/node_modules/contextfold/dist/cli/bin.js',
        projectDir: '/repo',
        scope: 'user',
      }),
    ).toBe('node /repo/node_modules/contextfold/dist/cli/bin.js');
  });

  it('quotes paths for the shell', () => {
    expect(shellQuote("/it's here/bin.js")).toBe(`'/it'\\''s here/bin.js'`);
    expect(hookCommand('contextfold', 'session-start', '.cf')).toBe(
      'contextfold --dir .cf hook session-start',
    );
  });
});
