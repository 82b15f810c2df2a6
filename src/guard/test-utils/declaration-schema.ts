import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import {
  checkGuardDeclaration,
  GUARD_DECLARATION_SCHEMA,
  type GuardDeclaration,
} from '../conformance.js';

let validator: ((v: unknown) => boolean) & { errors?: unknown } = null as never;

/**
 * Validates a declaration against the published JSON Schema (draft 2020-12, ajv strict mode),
 * then checks the invariants the schema cannot state. Returns the problems (empty when valid).
 */
export function validateGuardDeclaration(decl: unknown): string[] {
  validator ??= new Ajv2020({ allErrors: true, strict: true }).compile(
    JSON.parse(readFileSync(GUARD_DECLARATION_SCHEMA, 'utf8')) as object,
  );
  if (!validator(decl)) {
    return ((validator.errors ?? []) as { instancePath: string; message?: string }[]).map(
      (e) => `${e.instancePath || '(root)'}: ${e.message}`,
    );
  }
  return checkGuardDeclaration(decl as GuardDeclaration);
}
