import { describe, expect, it } from 'vitest';
import * as protocol from './index.js';
import { ContextFoldError, ipcfErrorName, isContextFoldError } from './index.js';

type Guard = (e: unknown) => boolean;

/**
 * Every error class `contextfold/protocol` exports, with the guard of the same name: read from
 * the module itself, so a new class without its guard fails here instead of being left out.
 */
const CLASSES: [string, () => ContextFoldError, Guard | undefined][] = Object.entries(protocol)
  .filter(
    ([, v]) =>
      typeof v === 'function' && v !== ContextFoldError && v.prototype instanceof ContextFoldError,
  )
  .map(([name, v]) => [
    name,
    () => new (v as new (m: string) => ContextFoldError)('m'),
    (protocol as Record<string, unknown>)[`is${name}`] as Guard | undefined,
  ]);

describe('error guards', () => {
  it('finds every error class of the error model (five IPCF errors and six of its own)', () => {
    expect(CLASSES.length).toBe(11);
    for (const [name, , guard] of CLASSES) expect(typeof guard, `is${name}`).toBe('function');
  });

  it('each guard accepts its own class and no other (a path containment is an integrity check)', () => {
    for (const [name, make, guard] of CLASSES) {
      for (const [other, makeOther] of CLASSES) {
        const expected =
          other === name || (name === 'IntegrityCheckError' && other === 'PathContainmentError');
        expect(guard!(makeOther()), `${name} guard on ${other}`).toBe(expected);
      }
      expect(guard!(new Error('m')), name).toBe(false);
      expect(guard!({ code: make().code }), `${name} on a look-alike without the brand`).toBe(
        false,
      );
    }
  });

  it('match on the code and brand, so an error of another copy of the package passes', () => {
    for (const [name, make, guard] of CLASSES) {
      const e = make();
      // What another copy's error looks like to this copy: not an instance of our classes.
      const foreign = Object.assign(Object.create(null), { code: e.code });
      for (const s of Object.getOwnPropertySymbols(e)) foreign[s] = (e as never)[s];
      expect(foreign instanceof Error).toBe(false);
      expect(isContextFoldError(foreign), name).toBe(true);
      expect(guard!(foreign), name).toBe(true);
    }
  });

  it('each class is named by its IPCF name', () => {
    for (const [name, make] of CLASSES) {
      const e = make();
      expect(e.name, name).toBe(name);
      expect(ipcfErrorName(e.code), name).toBe(name);
    }
  });
});
