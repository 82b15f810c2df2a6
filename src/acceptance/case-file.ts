import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { packagePath } from '../fs/package-root.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { UsageError } from '../protocol/errors.js';
import { type AcceptanceCase, type CaseFile, caseFileSchema } from './case-schema.js';

/** The case file shipped with this package. */
export const DEFAULT_CASE_FILE = packagePath('conformance', 'adapters', 'cases.v1.json');

/** A loaded, checked case file and the SHA-256 of its bytes. */
export interface LoadedCaseFile {
  path: string;
  content_sha256: string;
  file: CaseFile;
}

function issue(e: z.ZodError): string {
  const i = e.issues[0];
  return `${i?.path.length ? i.path.join('.') : '(root)'}: ${i?.message}`;
}

/** Every record name an expectation or store action may use, per session. */
function recordsOf(c: AcceptanceCase): Map<string, Map<string, boolean>> {
  const out = new Map<string, Map<string, boolean>>();
  for (const [s, session] of Object.entries(c.input.sessions)) {
    const names = new Map<string, boolean>();
    let live = false;
    session.history.forEach((t, i) => {
      const where = `case ${c.id}: sessions.${s}.history.${i}`;
      if (t.host_context === 'live') live = true;
      else if (live) throw new UsageError(`${where}: a compacted turn follows a live one`);
      if (t.record === undefined) return;
      if (names.has(t.record)) throw new UsageError(`${where}: record ${t.record} named twice`);
      if (!t.tool || t.marker === undefined || !t.tool.output.includes(t.marker)) {
        throw new UsageError(`${where}: a record needs a tool whose output contains its marker`);
      }
      names.set(t.record, t.archived === true);
    });
    out.set(s, names);
  }
  return out;
}

/** Structural checks zod cannot express: references between parts of one case. */
function checkCase(c: AcceptanceCase, ids: Set<string>, file: CaseFile): void {
  const where = `case ${c.id}`;
  const records = recordsOf(c);
  const names = [...records.values()].flatMap((m) => [...m.keys()]);
  const all = new Set(names);
  // Expectations name records without their session: a name means one record in the case.
  if (all.size !== names.length)
    throw new UsageError(`${where}: a record name is used by two sessions`);
  const archived = (s: string, r: string, what: string) => {
    if (records.get(s)?.get(r) !== true)
      throw new UsageError(`${where}: ${what} names ${s}/${r}, which is no archived record`);
  };
  for (const p of c.profiles)
    if (!(p in file.profiles)) throw new UsageError(`${where}: unknown profile ${p}`);
  if (!c.profiles.includes('normative'))
    throw new UsageError(`${where}: every case is in the normative profile`);
  if (c.profiles.includes('safety') !== (c.class === 'safety'))
    throw new UsageError(`${where}: the safety profile holds exactly the safety cases`);
  for (const r of c.requirements)
    if (!(r in file.requirements)) throw new UsageError(`${where}: unknown requirement ${r}`);
  for (const a of c.input.store) {
    if ('record' in a) archived(a.session, a.record, `store action ${a.action}`);
    if ('from_record' in a) archived(a.from_session, a.from_record, `store action ${a.action}`);
  }
  for (const k of c.input.calls)
    if (!records.has(k.session))
      throw new UsageError(`${where}: a call names session ${k.session}`);
  if (c.expect.calls.length !== c.input.calls.length)
    throw new UsageError(`${where}: expect.calls must have one entry per input call`);
  for (const e of c.expect.calls) {
    const named = [
      ...(e.paged?.includes ?? []),
      ...(e.paged?.excludes ?? []),
      ...(e.paged?.exactly ?? []),
      ...(e.refused?.excludes ?? []),
      ...(e.refused?.includes ?? []).map((x) => x.record),
    ];
    for (const r of named)
      if (!all.has(r)) throw new UsageError(`${where}: an expectation names unknown record ${r}`);
  }
  if (c.class === 'safety' && c.strictness_allowed.length > 0)
    throw new UsageError(`${where}: a safety case allows no strictness (zero deviation)`);
  for (const s of c.strictness_allowed) {
    if (!ids.has(s.absence_case_id) || s.absence_case_id === c.id)
      throw new UsageError(`${where}: absence case ${s.absence_case_id} is not another case`);
  }
}

/**
 * Reads and checks the adapter acceptance case file: its JSON Schema (zod, the same definition
 * the published `cases.schema.json` is generated from), then the references between the parts
 * of each case. A broken file is a {@link UsageError} naming the place; nothing runs.
 *
 * @example
 * const { file } = loadCaseFile(); file.cases.length; // >= 30
 */
export function loadCaseFile(path = DEFAULT_CASE_FILE): LoadedCaseFile {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    throw new UsageError(`cannot read the adapter case file: ${path}`, { path });
  }
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new UsageError(`the adapter case file is not valid JSON: ${path}`, { path });
  }
  const r = caseFileSchema.safeParse(json);
  if (!r.success)
    throw new UsageError(`adapter case file is malformed at ${issue(r.error)}: ${path}`, { path });
  const file = r.data;
  if (file.changelog[0]!.version !== file.version) {
    throw new UsageError(`adapter case file ${file.version} has no changelog entry: ${path}`);
  }
  const ids = new Set<string>();
  for (const c of file.cases) {
    if (ids.has(c.id)) throw new UsageError(`adapter case ${c.id} is listed twice: ${path}`);
    ids.add(c.id);
  }
  for (const c of file.cases) checkCase(c, ids, file);
  return { path, content_sha256: sha256Hex(bytes), file };
}
