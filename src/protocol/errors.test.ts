import { describe, expect, it } from 'vitest';
import {
  BrokenReferenceError,
  type ContextFoldError,
  GuardTableError,
  IntegrityCheckError,
  ipcfErrorName,
  isBrokenReferenceError,
  isContextFoldError,
  isGuardTableError,
  isIntegrityCheckError,
  isLockTimeoutError,
  isNodeNotFoundError,
  isOrphanedNodeError,
  isPathContainmentError,
  isStepConflictError,
  isStoreNotFoundError,
  isStoreUnavailableError,
  isUsageError,
  LockTimeoutError,
  NodeNotFoundError,
  OrphanedNodeError,
  PathContainmentError,
  StepConflictError,
  StoreNotFoundError,
  StoreUnavailableError,
  UsageError,
} from './index.js';

/** Every error class with its guard: one row per class the package exports. */
const CLASSES: [string, () => ContextFoldError, (e: unknown) => boolean][] = [
  ['NodeNotFoundError', () => new NodeNotFoundError('m'), isNodeNotFoundError],
  ['IntegrityCheckError', () => new IntegrityCheckError('m'), isIntegrityCheckError],
  ['PathContainmentError', () => new PathContainmentError('m'), isPathContainmentError],
  ['OrphanedNodeError', () => new OrphanedNodeError('m'), isOrphanedNodeError],
  ['BrokenReferenceError', () => new BrokenReferenceError('m'), isBrokenReferenceError],
  ['UsageError', () => new UsageError('m'), isUsageError],
  ['StepConflictError', () => new StepConflictError('m'), isStepConflictError],
  ['LockTimeoutError', () => new LockTimeoutError('m'), isLockTimeoutError],
  ['StoreNotFoundError', () => new StoreNotFoundError('m'), isStoreNotFoundError],
  ['StoreUnavailableError', () => new StoreUnavailableError('m'), isStoreUnavailableError],
  ['GuardTableError', () => new GuardTableError('m'), isGuardTableError],
];

describe('error guards', () => {
  it('each guard accepts its own class and no other (a path containment is an integrity check)', () => {
    for (const [name, make, guard] of CLASSES) {
      for (const [other, makeOther] of CLASSES) {
        const expected =
          other === name || (name === 'IntegrityCheckError' && other === 'PathContainmentError');
        expect(guard(makeOther()), `${name} guard on ${other}`).toBe(expected);
      }
      expect(guard(new Error('m')), name).toBe(false);
      expect(guard({ code: make().code }), `${name} on a look-alike without the brand`).toBe(false);
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
      expect(guard(foreign), name).toBe(true);
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
