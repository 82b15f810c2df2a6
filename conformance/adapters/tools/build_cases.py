#!/usr/bin/env python3
"""Writes the adapter acceptance case file: conformance/adapters/cases.v1.json.

Usage:
  python3 conformance/adapters/tools/build_cases.py [--out FILE] [--check]

The committed cases.v1.json is the suite (cases are data; contract: seeds/003); this script is
how it was authored, so that the histories stay consistent (records large enough that every
integration archives them, prompts that name one record's identifiers and nothing else). It
never calls contextfold. --check regenerates and exits 1 if the committed file differs.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "cases.v1.json")

VERSION = "1.0.0"

# ---------------------------------------------------------------------------------------------
# Source anchors: the specification clause and the code path each case derives from. The
# runner checks each still holds (the text is still there), and fails the case otherwise.

CONF = "CONFORMANCE-IPCF-001"
RFC = "RFC-IPCF-001"


def spec(document, clause, marker):
    return {"surface": "spec", "document": document, "clause": clause, "marker": marker}


def code(path, marker):
    return {"surface": "code", "path": path, "marker": marker}


def protocol(marker):
    return {"surface": "protocol", "path": "conformance/PROTOCOL.md", "marker": marker}


S_CONF05 = spec(CONF, "CONF-05", "Historical payload retrieved from cold storage must bypass LLM re-interpretation")
S_CONF06 = spec(CONF, "CONF-06", "Calls exceeding the configured limit are chunked or bounded with an explicit truncation warning")
S_CONF04 = spec(CONF, "CONF-04", "Engine returns sorted candidate steps with latest state clearly distinguished")
S_CONF07 = spec(CONF, "CONF-07", "Recalled node tokens MUST be evicted from the prompt on the subsequent turn")
S_CONF09 = spec(CONF, "CONF-09", "artifact_sha256 mismatch raises explicit IntegrityCheckError; corrupted node is never hydrated")
S_CONF10 = spec(CONF, "CONF-10", "LLM is strictly prevented from hallucinating fallback data")
S_CONF12 = spec(CONF, "CONF-12", "Corrupted or incomplete data is never silently consumed")
S_CONF13 = spec(CONF, "CONF-13", "Candidate Requirement CONF-13: Passive Recall Interception")
S_PREDISPATCH = spec(CONF, "4.5 Pre-Dispatch Interception", "the harness passively tokenizes the incoming text and computes the intersection against the set of identifiers")
S_POSTTURN = spec(CONF, "4.5 Post-Turn Eviction", "the harness MUST evict the hydrated payload, returning active prompt tokens to baseline")
S_OWNERSHIP = spec(CONF, "CONF-13", "A superseded candidate (e.g. Step 91) MUST NOT usurp an intent")
S_CONTAINMENT = spec(RFC, "Security", "The engine derives the canonical path from the step id and rejects traversal, absolute paths")
S_EPHEMERAL = spec(RFC, "Security", "hydrated nodes MUST NOT leak into the persistent session transcript; they are single-turn inputs.")
S_SCRUB = spec(RFC, "Security", "Production implementations MUST redact payloads before writing cold nodes")
S_CRASH = spec(CONF, "4.4 Scenario A", "System has data that can never be found.")

C_REFUSED = protocol("A selected node that fails verification is **not** paged in")
C_PACK_REFUSED = code("src/harness/pack.ts", "the turn proceeds without it")
C_HOOK_REFUSED = code("src/adapters/claude-code/archived-context.ts", "was selected but not paged in")
C_HOOK_LIVE = code(
    "src/adapters/claude-code/archived-context.ts",
    "Selected steps that are still in the live context (after the last compaction): skipped.",
)
C_HOOK_DECL = code("src/adapters/claude-code/acceptance.ts", "record_in_live_context")
C_MCP_REFUSED = code("src/adapters/mcp/tools.ts", "so a refused page (tampered, missing, orphaned) is reported, never replaced by a guess (CONF-10)")
C_SYMLINK = code("src/store/containment.ts", "neither the node file nor cold_nodes/ may be a link that leads elsewhere")
C_SESSION_PATHS = code("src/adapters/claude-code/session-paths.ts", "One store per session, because step ids are positions in one conversation")
C_MW_SESSIONS = code("src/adapters/ai-sdk/middleware.ts", "A session with an id lives in `<dir>/sessions/<id>/`")
C_EVICT = code("src/harness/session-core.ts", "`post_turn_response`: evicts this turn's pages (CONF-07) and closes the turn.")
C_PAGE_IN = code("src/engine/context-fold.ts", "Passive page-in for one turn")
C_BLOCK = code("src/harness/archived-block.ts", "The closing tag repeats the first 16 hex digits of the payload hash")
C_VERIFY = code("src/store/verify.ts", "payload_sha256")
C_ARCH = code("src/harness/session-core.ts", "pages in what the prompt needs (verified, bounded)")

# ---------------------------------------------------------------------------------------------
# Histories. A record is one tool call whose output is large (every integration archives it:
# the in-process ones fold turns over 32 tokens) and carries its marker, a single identifier
# that no other node holds. User messages and replies are short and use no word a prompt uses.


def record_output(marker, lines, deep):
    """A tool output: the marker on the first line, filler, a deep line not in any summary."""
    body = [f"{marker} finished with exit code 0"]
    body += [f"  step {i:02d} of {marker}: {w}" for i, w in enumerate(lines)]
    body.append(f"  {deep}")
    return "\n".join(body)


FILLER = ["warming caches", "loading fixtures", "checking schema", "writing report", "cleaning up", "all steps passed"]


def rec(name, marker, deep, archived=True, live=False, extra_lines=(), command=None, output=None):
    out = output if output is not None else record_output(marker, list(FILLER) + list(extra_lines), deep)
    t = {
        "record": name,
        "marker": marker,
        "archived": archived,
        **({"host_context": "live"} if live else {}),
        "user": "Go on.",
        "tool": {"name": "Bash", "input": {"command": command or f"./tools/{name}.sh"}, "output": out},
        "assistant": "Done.",
    }
    return t


def small(live=True):
    t = {"user": "Next.", "assistant": "Done."}
    if live:
        t["host_context"] = "live"
    return t


def session(*turns):
    return {"history": list(turns)}


def ask(prompt, s="main"):
    return {"session": s, "prompt": prompt}


def big_lines(tag, n):
    return [f"{tag} sample {i:03d}: value {i * 37 % 1000:03d} within tolerance" for i in range(n)]


# Records used across cases (marker, deep line). Markers are single identifiers (\w runs).
A = ("alpha", "zephyr_ledger_7781", "deep_probe_alpha: 42 invoices reconciled against batch 0x5f1e")
B = ("bravo", "quokka_index_2093", "deep_probe_bravo: 17 shards rebuilt in 3.2 s")
C = ("charlie", "nimbus_queue_5510", "deep_probe_charlie: 905 messages drained from dead-letter")


def std(r, **kw):
    name, marker, deep = r
    return rec(name, marker, deep, **kw)


def deep(r):
    return r[2]


def marker(r):
    return r[1]


def q(*rs):
    """A prompt naming exactly these records' markers (the other words are stopwords)."""
    return "What was " + " and ".join(marker(r) for r in rs) + "?"


UNRELATED = "Anything else pending?"

# ---------------------------------------------------------------------------------------------
# The cases


def stricter(conjunct, description, present_when, absence):
    """A stop-direction declaration this case allows: `conjunct` holds when `present_when` does."""
    return [{"conjunct": conjunct, "description": description, "present_when": present_when, "absence_case_id": absence}]


def build():
    cases = []

    def add(cid, title, cls, reqs, input_, expect, source, strictness=None):
        cases.append(
            {
                "id": cid,
                "title": title,
                "class": cls,
                "profiles": ["normative", "safety"] if cls == "safety" else ["normative"],
                "requirements": sorted(reqs),
                "input": input_,
                "expect": expect,
                "strictness_allowed": strictness or [],
                "source": source,
            }
        )

    one = {"sessions": {"main": session(std(A), std(B), small())}}

    def with_store(*actions, sessions=None, calls=None, policy=None):
        i = {"sessions": sessions or one["sessions"], "store": list(actions), "calls": calls or [ask(q(A))]}
        if policy is not None:
            i = {"policy": policy, **i}
        return i

    refused_a = lambda err="IntegrityCheckError": {"includes": [{"record": "alpha", "error": err}]}  # noqa: E731

    # --- safety: what failed verification never reaches the model -------------------------
    # One damage to alpha's node each: the turn proceeds, alpha is refused with `error` and not
    # paged, and what the damage planted (`leaked`) never reaches the model.
    def damaged_alpha(cid, title, reqs, damage, leaked, source, error="IntegrityCheckError", paged=None):
        action = {"action": damage.pop("action"), "session": "main", **({"record": "alpha"} if damage.pop("record", True) else {}), **damage}
        call = {"proceeded": True, "paged": paged or {"excludes": ["alpha"]}, "refused": refused_a(error)}
        if leaked is not None:
            call["model_input"] = {"excludes": [leaked]}
        add(cid, title, "safety", reqs, with_store(action), {"calls": [call], "store": {"unrepaired": True}}, source)

    edit = {"find": "42 invoices"}
    alpha_edited_bravo_asked = lambda tag: with_store(  # noqa: E731
        {"action": "edit_payload", "session": "main", "record": "alpha", **edit, "replace": tag}, calls=[ask(q(A, B))]
    )
    damaged_alpha(
        "tamper--edited-payload-refused",
        "A node whose payload was edited on disk is refused and reported; its bytes never reach the model",
        ["CONF-09", "CONF-13"],
        {"action": "edit_payload", **edit, "replace": "TAMPERED_PAYLOAD_9c1"},
        "TAMPERED_PAYLOAD_9c1",
        [S_CONF09, C_REFUSED, C_PACK_REFUSED],
    )
    damaged_alpha(
        "tamper--forged-artifact-hash-refused",
        "A node edited with a recomputed artifact_sha256 (node and index) is refused on its payload hash",
        ["CONF-09", "CONF-13"],
        {"action": "forge_payload", **edit, "replace": "FORGED_PAYLOAD_77a"},
        "FORGED_PAYLOAD_77a",
        [spec(CONF, "CONF-09", "payload_sha256 and projection_sha256 integrity are independently verifiable"), C_VERIFY],
    )
    damaged_alpha(
        "tamper--truncated-node-refused",
        "A node file cut short by a partial write is refused and reported, never half-read",
        ["CONF-09", "CONF-12"],
        {"action": "truncate_node", "drop_bytes": 40},
        deep(A),
        [spec(CONF, "4.4 Scenario C", "SHA mismatch on hydration. IntegrityCheckError."), C_REFUSED],
    )
    add(
        "tamper--one-of-two-refused",
        "Of two records a prompt names, the tampered one is refused and only the intact one is paged in",
        "safety",
        ["CONF-09", "CONF-13"],
        alpha_edited_bravo_asked("TAMPERED_PAYLOAD_3e0"),
        {
            "calls": [
                {
                    "proceeded": True,
                    "paged": {"includes": ["bravo"], "excludes": ["alpha"]},
                    "refused": {"includes": [{"record": "alpha", "error": "IntegrityCheckError"}], "excludes": ["bravo"]},
                    "model_input": {"excludes": ["TAMPERED_PAYLOAD_3e0"]},
                    "pages_verified": True,
                }
            ],
            "store": {"unrepaired": True},
        },
        [S_CONF09, C_PAGE_IN],
    )
    damaged_alpha(
        "missing--deleted-node-refused",
        "A node file missing behind its index entry is refused as a broken reference, never replaced by a guess",
        ["CONF-10", "CONF-12"],
        {"action": "delete_node"},
        deep(A),
        [S_CONF10, spec(CONF, "4.4 Scenario B", "Recall call triggers BrokenReferenceError."), C_MCP_REFUSED],
        error="BrokenReferenceError",
    )
    add(
        "orphan--unindexed-node-never-paged",
        "A node file with no index entry (a crash before the index update) is never paged in",
        "safety",
        ["CONF-12"],
        with_store({"action": "unindex_node", "session": "main", "record": "alpha"}),
        {"calls": [{"paged": {"excludes": ["alpha"]}, "model_input": {"excludes": [deep(A)]}}], "store": {"unrepaired": True}},
        [S_CRASH, S_CONF12],
    )
    # An index file_path leading out of the store, where a copy of the node carries `copy`.
    for cid, style, leads, copy, check in [
        ("escape--absolute-file-path-refused", "absolute", "pointing at an absolute path outside the store", "ESCAPED_COPY_41d", "return fail('is absolute')"),
        ("escape--dotdot-file-path-refused", "dotdot", "that climbs out of the store with '..'", "ESCAPED_COPY_52e", "contains a relative segment"),
    ]:
        damaged_alpha(
            cid,
            f"An index file_path {leads} is refused; the outside copy never reaches the model",
            ["CONF-12"],
            {"action": "escape_file_path", "style": style, "inject": f"\n{copy}"},
            copy,
            [S_CONTAINMENT, code("src/store/containment.ts", check)],
        )
    damaged_alpha(
        "escape--symlinked-node-refused",
        "A node file replaced by a symlink to a byte-identical copy outside the store is refused",
        ["CONF-12"],
        {"action": "symlink_node"},
        None,
        [S_CONTAINMENT, C_SYMLINK],
    )
    damaged_alpha(
        "escape--symlinked-cold-dir-refused",
        "cold_nodes/ replaced by a symlink to a copy outside the store: nothing is paged in, the record is refused",
        ["CONF-12"],
        {"action": "symlink_cold_dir", "record": False},
        None,
        [S_CONTAINMENT, C_SYMLINK],
        paged={"exactly": []},
    )

    # --- safety: a page of one session never reaches another -----------------------------
    two = {"main": session(std(A), small()), "other": session(std(C), small())}
    add(
        "isolation--other-sessions-identifier-not-paged",
        "A prompt in one session naming an identifier archived only by another session gets nothing from it",
        "safety",
        ["CONF-12", "CONF-13"],
        {"sessions": two, "calls": [ask(q(C), "main"), ask(q(A), "other")]},
        {
            "calls": [
                {"proceeded": True, "paged": {"exactly": []}, "model_input": {"excludes": [deep(C)]}},
                {"proceeded": True, "paged": {"exactly": []}, "model_input": {"excludes": [deep(A)]}},
            ]
        },
        [C_SESSION_PATHS, C_MW_SESSIONS],
    )
    add(
        "isolation--foreign-node-over-own-refused",
        "Another session's node copied over this session's node is refused; its content never reaches this session",
        "safety",
        ["CONF-09", "CONF-12"],
        {
            "sessions": two,
            "store": [{"action": "copy_foreign_node", "session": "main", "record": "alpha", "from_session": "other", "from_record": "charlie"}],
            "calls": [ask(q(A, C), "main")],
        },
        {
            "calls": [
                {
                    "proceeded": True,
                    "paged": {"excludes": ["alpha", "charlie"]},
                    "refused": refused_a(),
                    "model_input": {"excludes": [deep(C)]},
                }
            ],
            "store": {"unrepaired": True},
        },
        [S_CONF09, C_SESSION_PATHS],
    )
    add(
        "isolation--index-points-into-other-session-refused",
        "An index file_path pointing into another session's store is refused; that session's node never reaches this one",
        "safety",
        ["CONF-12"],
        {
            "sessions": two,
            "store": [{"action": "point_into_session", "session": "main", "record": "alpha", "from_session": "other", "from_record": "charlie"}],
            "calls": [ask(q(A, C), "main")],
        },
        {
            "calls": [{"proceeded": True, "paged": {"excludes": ["alpha", "charlie"]}, "refused": refused_a(), "model_input": {"excludes": [deep(C)]}}],
            "store": {"unrepaired": True},
        },
        [S_CONTAINMENT, C_SESSION_PATHS],
    )
    add(
        "isolation--foreign-orphan-never-paged",
        "Another session's node planted in this store without an index entry is never paged in",
        "safety",
        ["CONF-12"],
        {
            "sessions": two,
            "store": [{"action": "plant_foreign_orphan", "session": "main", "from_session": "other", "from_record": "charlie", "step_id": 900}],
            "calls": [ask(q(C), "main")],
        },
        {"calls": [{"proceeded": True, "paged": {"exactly": []}, "model_input": {"excludes": [deep(C)]}}], "store": {"unrepaired": True}},
        [S_CRASH, C_SESSION_PATHS],
    )

    # --- safety: paged bytes are the verified stored bytes; nothing over the cap -----------
    exact_output = (
        "ledger_crlf_4417 export\r\n"
        "\tcolumn\tvalue  \r\n"
        "  Grüße — ✓ naïve café 東京 \r\n"
        "  trailing spaces kept   \n"
        "  tabs\tand\tCR\r\n"
        "  deep_probe_bytes: the exact bytes, CRLF and all, come back"
    )
    add(
        "bytes--page-is-the-verified-payload",
        "A page is a contiguous piece of the verified stored payload (CRLF, tabs, trailing spaces, non-ASCII) and carries its payload hash",
        "safety",
        ["CONF-05"],
        {"sessions": {"main": session(rec("exact", "ledger_crlf_4417", "", output=exact_output), small())}, "calls": [ask("What was ledger_crlf_4417?")]},
        {"calls": [{"proceeded": True, "paged": {"includes": ["exact"]}, "pages_verified": True, "model_input": {"contains": ["Grüße — ✓ naïve café 東京 \r\n"]}}]},
        [S_CONF05, C_BLOCK],
    )
    cap_policy = {
        "max_rehydration_tokens_per_call": 60,
        "max_rehydration_tokens_per_turn": 80,
        "scope": "single_turn",
        "eviction_trigger": "after_response",
        "integrity_verification": True,
    }
    add(
        "cap--large-record-bounded-and-flagged",
        "A record over the per-call cap is paged in bounded, flagged as partial, and a piece of the verified payload",
        "safety",
        ["CONF-05", "CONF-06"],
        {
            "policy": cap_policy,
            "sessions": {"main": session(std(A, extra_lines=big_lines("alpha", 40)), small())},
            "calls": [ask(q(A))],
        },
        {"calls": [{"proceeded": True, "paged": {"includes": ["alpha"]}, "pages_verified": True, "page_tokens_max": 80}]},
        [S_CONF06, code("src/harness/archived-block.ts", "Truncated: the rest stays archived.")],
    )
    turn_policy = {**cap_policy, "max_rehydration_tokens_per_call": 100, "max_rehydration_tokens_per_turn": 150}
    add(
        "cap--two-records-within-turn-budget",
        "Two large records named in one prompt together stay within the per-turn budget",
        "safety",
        ["CONF-06", "CONF-13"],
        {
            "policy": turn_policy,
            "sessions": {"main": session(std(A, extra_lines=big_lines("alpha", 40)), std(B, extra_lines=big_lines("bravo", 40)), small())},
            "calls": [ask(q(A, B))],
        },
        {"calls": [{"proceeded": True, "pages_verified": True, "page_tokens_max": 150}]},
        [spec(CONF, "CONF-06", "On-demand hydration cannot exceed max_rehydration_tokens"), C_ARCH],
    )
    add(
        "cap--default-policy-bounds-a-huge-record",
        "Under the default policy a record of ~6,000 tokens is paged in within the 3,500-token turn budget",
        "safety",
        ["CONF-06"],
        {"sessions": {"main": session(std(A, extra_lines=big_lines("alpha", 480)), small())}, "calls": [ask(q(A))]},
        {"calls": [{"proceeded": True, "paged": {"includes": ["alpha"]}, "pages_verified": True, "page_tokens_max": 3500}]},
        [spec(CONF, "CONF-06", "reference default: 3000 tokens"), C_ARCH],
    )

    # --- safety: never outdated information ------------------------------------------------
    # Three records of one intent: each has its own marker (its deep line's first word), all
    # share the identifier the prompt names.
    port = lambda name, value, d: rec(  # noqa: E731
        name,
        d.split(":")[0],
        d,
        output=f"pg_port_setting is now {value}\n  config/database.yml written\n  service restarted on {value}\n  {d}\n  "
        + "\n  ".join(big_lines(name, 4)),
    )
    # Liveness: the latest state must be paged in. Whether superseded states may come along is
    # the retrieval's choice (the reference RGSC never pages an older duplicate; ranked retrieval,
    # an extension RFC-IPCF-001 allows, may): only intent ownership under budget is normative.
    add(
        "intent--latest-state-paged-in",
        "A prompt about a value that changed (5433 → 5434 → 5433) gets the latest record",
        "liveness",
        ["CONF-04", "CONF-13"],
        {
            "sessions": {
                "main": session(
                    port("port_first", 5433, "deep_port_first: set by the installer"),
                    port("port_second", 5434, "deep_port_second: conflict with a local server"),
                    port("port_latest", 5433, "deep_port_latest: reverted after the conflict"),
                    small(),
                )
            },
            "calls": [ask("What is pg_port_setting?")],
        },
        {"calls": [{"proceeded": True, "paged": {"includes": ["port_latest"]}, "model_input": {"contains": ["deep_port_latest: reverted after the conflict"]}}]},
        [S_CONF04, spec(CONF, "4.1 Software MMU Scan", "Tie-breaking: sorted by (residual_gain DESC, step_id DESC).")],
    )
    own_policy = {**cap_policy, "max_rehydration_tokens_per_call": 400, "max_rehydration_tokens_per_turn": 450}
    add(
        "intent--over-budget-latest-never-replaced-by-older",
        "When the latest record for an intent does not fit the turn budget, an older record of that intent is never paged in its place",
        "safety",
        ["CONF-06", "CONF-13"],
        {
            "policy": own_policy,
            "sessions": {
                "main": session(
                    rec("kappa_old", "deep_kappa_old", "deep_kappa_old: flag was off", output="kappa_flag off\n  " + "\n  ".join(big_lines("kappa", 5)) + "\n  deep_kappa_old: flag was off"),
                    rec("kappa_new", "deep_kappa_new", "deep_kappa_new: flag is on", output="kappa_flag on\n  " + "\n  ".join(big_lines("kappanew", 140)) + "\n  deep_kappa_new: flag is on"),
                    rec("sigma", "deep_sigma", "deep_sigma: mode strict", output="sigma_mode strict\n  " + "\n  ".join(big_lines("sigma", 140)) + "\n  deep_sigma: mode strict"),
                    small(),
                )
            },
            "calls": [ask("What was sigma_mode and kappa_flag?")],
        },
        {"calls": [{"proceeded": True, "paged": {"excludes": ["kappa_old"]}, "model_input": {"excludes": ["deep_kappa_old: flag was off"]}, "page_tokens_max": 450}]},
        [S_OWNERSHIP, spec(RFC, "Intent ownership", "an older, superseded node is never hydrated in its place")],
    )

    # --- safety: eviction ---------------------------------------------------------------
    add(
        "evict--next-call-carries-no-page",
        "A page is in the call whose prompt named it and gone from the next call",
        "safety",
        ["CONF-07", "CONF-13"],
        {"sessions": {"main": session(std(A), small())}, "calls": [ask(q(A)), ask(UNRELATED)]},
        {
            "calls": [
                {"proceeded": True, "paged": {"includes": ["alpha"]}},
                {"proceeded": True, "paged": {"exactly": []}, "previous_pages_gone": True, "model_input": {"excludes": [deep(A)]}},
            ]
        },
        [S_CONF07, S_POSTTURN, C_EVICT],
    )
    add(
        "evict--rapid-fire-pages-never-accumulate",
        "Three calls naming three records one after another: each call carries only its own page",
        "safety",
        ["CONF-07", "CONF-13"],
        {"sessions": {"main": session(std(A), std(B), std(C), small())}, "calls": [ask(q(A)), ask(q(B)), ask(q(C))]},
        {
            "calls": [
                {"proceeded": True, "paged": {"exactly": ["alpha"]}},
                {"proceeded": True, "paged": {"exactly": ["bravo"]}, "previous_pages_gone": True, "model_input": {"excludes": [deep(A)]}},
                {"proceeded": True, "paged": {"exactly": ["charlie"]}, "previous_pages_gone": True, "model_input": {"excludes": [deep(A), deep(B)]}},
            ]
        },
        [spec(CONF, "4.2 Rapid-Fire Recalls", "The runtime must enforce post-turn eviction."), C_EVICT],
    )
    add(
        "evict--pages-never-written-back",
        "A paged-in record is never written back to disk as part of the session (no archived block in any file)",
        "safety",
        ["CONF-07"],
        {"sessions": {"main": session(std(A), small())}, "calls": [ask(q(A)), ask(UNRELATED)]},
        {
            "calls": [{"proceeded": True, "paged": {"includes": ["alpha"]}}, {"proceeded": True, "paged": {"exactly": []}}],
            "store": {"excludes": ["<archived_record"]},
        },
        [S_EPHEMERAL, code("src/harness/archived-block.ts", "tagged so {@link stripArchivedBlocks} can remove it")],
    )
    add(
        "scope--unrelated-prompt-pages-nothing",
        "A prompt that names nothing archived adds no page",
        "safety",
        ["CONF-13"],
        {"sessions": {"main": session(std(A), std(B), small())}, "calls": [ask(UNRELATED)]},
        {"calls": [{"proceeded": True, "paged": {"exactly": []}, "model_input": {"excludes": [deep(A), deep(B)]}}]},
        [spec(CONF, "4.5 Transparent Page-In", "If one or more candidate nodes match the intersection"), S_PREDISPATCH],
    )

    # --- safety: secrets (SEC-SCRUB; pass once the guard redacts before every write) --------
    def secret_case(cid, title, secrets, output=None, command=None, extra_source=()):
        name = "vault"
        mk = "vault_rotation_6621"
        out = output or ("vault_rotation_6621 rotated credentials\n  " + "\n  ".join(secrets) + "\n  deep_probe_vault: rotation complete")
        add(
            cid,
            title,
            "safety",
            ["SEC-SCRUB"],
            {"sessions": {"main": session(rec(name, mk, "", output=out, command=command), small())}, "calls": [ask("What was vault_rotation_6621?")]},
            {"calls": [{"proceeded": True, "model_input": {"excludes": list(secrets)}}], "store": {"excludes": list(secrets)}},
            [S_SCRUB, *extra_source],
        )

    secret_case(
        "secret--aws-key-pair-in-tool-output",
        "An AWS access key pair printed by a tool reaches neither the model nor any file the integration writes",
        ["AKIAQX4HZ7WB3KD5LM2P", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Hd3Mk2T"],
        output="vault_rotation_6621 rotated credentials\n  aws_access_key_id = AKIAQX4HZ7WB3KD5LM2P\n  aws_secret_access_key = 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\n  deep_probe_vault: rotation complete",
    )
    secret_case(
        "secret--github-token-in-tool-output",
        "A GitHub token printed by a tool reaches neither the model nor any file the integration writes",
        ["ghp_4hT9sQ2vXw8LmN3pR7kZ1yB6cF0dJ5eG2aUo"],
        output="vault_rotation_6621 rotated credentials\n  GITHUB_TOKEN=ghp_4hT9sQ2vXw8LmN3pR7kZ1yB6cF0dJ5eG2aUo\n  deep_probe_vault: rotation complete",
    )
    secret_case(
        "secret--private-key-block",
        "A PEM private key printed by a tool reaches neither the model nor any file the integration writes",
        ["MIIEowIBAAKCAQEAx7k3VqZ9tRj2W8nLpC4sYbH6mFdG1aKe0uXo5TiN3rQvJwBz"],
        output=(
            "vault_rotation_6621 rotated credentials\n-----BEGIN RSA PRIVATE KEY-----\n"
            "MIIEowIBAAKCAQEAx7k3VqZ9tRj2W8nLpC4sYbH6mFdG1aKe0uXo5TiN3rQvJwBz\n"
            "Hk8Pq2Ls5Dv7Fx9Gz1Mw3Nb4Vc6Xr8Ty0Ua2Ie4Oo6Pp8Aa1Ss3Dd5Ff7Gg9Hh0Jj\n"
            "-----END RSA PRIVATE KEY-----\n  deep_probe_vault: rotation complete"
        ),
    )
    secret_case(
        "secret--database-url-password-in-command",
        "A database password in a command line reaches neither the model (page or folded-step record) nor any file",
        ["s3cr3t-Pa55w0rd-8842"],
        command="psql postgres://billing:s3cr3t-Pa55w0rd-8842@db.internal:5433/billing -c 'select 1'",
    )
    secret_case(
        "secret--openai-project-key-in-tool-output",
        "An OpenAI project key printed by a tool reaches neither the model nor any file the integration writes",
        ["sk-proj-Xy7_kP2-mQ9vR4tL8wZ3nB6cD1fG5hJ0aS2dF4gH6jK8lZ0xC3vB5nM7qW9eR1tY3uI5oP7"],
        output="vault_rotation_6621 rotated credentials\n  OPENAI_API_KEY=sk-proj-Xy7_kP2-mQ9vR4tL8wZ3nB6cD1fG5hJ0aS2dF4gH6jK8lZ0xC3vB5nM7qW9eR1tY3uI5oP7\n  deep_probe_vault: rotation complete",
    )
    add(
        "secret--never-on-disk-even-unarchived",
        "A token in a turn that is not archived is still never written to any file the integration keeps",
        "safety",
        ["SEC-SCRUB"],
        {
            "sessions": {"main": session(std(A), {"user": "Use token ghp_8Lm2Qw4Er6Ty8Ui0Op2As4Df6Gh8Jk0Lz1Xc", "assistant": "Done.", "host_context": "live"})},
            "calls": [ask(UNRELATED)],
        },
        {"calls": [{"proceeded": True}], "store": {"excludes": ["ghp_8Lm2Qw4Er6Ty8Ui0Op2As4Df6Gh8Jk0Lz1Xc"]}},
        [S_SCRUB],
    )

    # --- liveness: what the floor says proceeds ---------------------------------------------
    add(
        "page-in--names-archived-identifier",
        "A prompt naming an archived identifier gets that record paged in, verified",
        "liveness",
        ["CONF-05", "CONF-13"],
        {"sessions": {"main": session(std(A), std(B), small())}, "calls": [ask(q(A))]},
        {"calls": [{"proceeded": True, "paged": {"includes": ["alpha"], "excludes": ["bravo"]}, "pages_verified": True, "model_input": {"contains": [deep(A)]}}]},
        [S_CONF13, S_PREDISPATCH, C_PAGE_IN],
    )
    add(
        "page-in--two-intents-one-prompt",
        "A prompt naming two archived identifiers gets both records",
        "liveness",
        ["CONF-13"],
        {"sessions": {"main": session(std(A), std(B), small())}, "calls": [ask(q(A, B))]},
        {"calls": [{"proceeded": True, "paged": {"includes": ["alpha", "bravo"]}, "pages_verified": True}]},
        [S_CONF13, spec(CONF, "CONF-13", "Candidate Requirement CONF-13"), C_PAGE_IN],
    )
    # A record whose marker is one whole identifier (a path, a non-ASCII word), beside bravo.
    for cid, title, name, m, d, prompt, expect, source in [
        (
            "page-in--file-path-identifier",
            "A prompt naming a file path that an archived tool run printed gets that record",
            "config",
            "config/zephyr_billing.yml",
            "deep_probe_config: retries set to 7",
            "What changed in config/zephyr_billing.yml?",
            {"model_input": {"contains": ["deep_probe_config: retries set to 7"]}},
            [S_PREDISPATCH, code("src/extract/terms.ts", "Query terms of a prompt (scan and recall)")],
        ),
        (
            "page-in--unicode-identifier",
            "A prompt naming a Turkish identifier in another case (SİPARİŞ_TABLOSU) gets the record holding sipariş_tablosu",
            "siparis",
            "sipariş_tablosu",
            "deep_probe_siparis: 1204 satır taşındı",
            "SİPARİŞ_TABLOSU nerede?",
            {"pages_verified": True},
            [spec(CONF, "CONF-13", "Passive Recall Interception"), code("src/extract/fold-token.ts", "The reference stopwords (English and Turkish)")],
        ),
    ]:
        history = session(rec(name, m, d, output=record_output(m, FILLER, d)), std(B), small())
        add(
            cid,
            title,
            "liveness",
            ["CONF-13"],
            {"sessions": {"main": history}, "calls": [ask(prompt)]},
            {"calls": [{"proceeded": True, "paged": {"includes": [name]}, **expect}]},
            source,
        )
    add(
        "page-in--asks-again-after-eviction",
        "A record paged in, then evicted, is paged in again when a later prompt asks again",
        "liveness",
        ["CONF-13"],
        {"sessions": {"main": session(std(A), small())}, "calls": [ask(q(A)), ask(UNRELATED), ask("Once more: " + q(A))]},
        {
            "calls": [
                {"proceeded": True, "paged": {"includes": ["alpha"]}},
                {"proceeded": True},
                {"proceeded": True, "paged": {"includes": ["alpha"]}, "pages_verified": True},
            ]
        },
        [S_POSTTURN, spec(CONF, "CONF-07", "Context size before hydration S_0 returns to S_0 + δ_new on turn N+1"), C_EVICT],
        # A host that cannot evict still carries the first call's page when the third call asks.
        strictness=stricter("record_in_live_context", "the record an earlier call paged in is still in the host's live context (the integration cannot evict it), so it is not paged in again", {"calls.0.prompt": q(A), "calls.2.prompt": "Once more: " + q(A)}, absence="page-in--names-archived-identifier"),
    )
    add(
        "page-in--refused-page-lets-turn-proceed",
        "A record refused for verification does not stop the turn: the model is called with the other record paged in",
        "liveness",
        ["CONF-09", "CONF-13"],
        alpha_edited_bravo_asked("TAMPERED_PAYLOAD_b71"),
        {"calls": [{"proceeded": True, "paged": {"includes": ["bravo"]}}]},
        [C_PACK_REFUSED, C_HOOK_REFUSED, C_MCP_REFUSED],
        strictness=stricter("halts_on_integrity_failure", "the integration stops the turn while any node the prompt selects fails verification", {"store.0.action": "edit_payload"}, absence="page-in--two-intents-one-prompt"),
    )
    live_history = lambda live: session(std(B), std(A, live=live), small(live=True))  # noqa: E731
    add(
        "page-in--archived-record-in-live-context",
        "A prompt naming an archived record that the host still carries verbatim gets that record paged in (the floor)",
        "liveness",
        ["CONF-13"],
        {"sessions": {"main": live_history(True)}, "calls": [ask(q(A))]},
        {"calls": [{"proceeded": True, "paged": {"includes": ["alpha"]}}]},
        [S_PREDISPATCH, C_HOOK_LIVE, C_HOOK_DECL],
        strictness=stricter("record_in_live_context", "a record still in the host's live context (after its last compaction) is not paged in again", {"sessions.main.history.1.host_context": "live"}, absence="page-in--archived-record-compacted"),
    )
    add(
        "page-in--archived-record-compacted",
        "The same record once the host compacted it away: paged in (the absence case of record_in_live_context)",
        "liveness",
        ["CONF-13"],
        {"sessions": {"main": live_history(False)}, "calls": [ask(q(A))]},
        {"calls": [{"proceeded": True, "paged": {"includes": ["alpha"]}, "pages_verified": True}]},
        [S_PREDISPATCH, C_HOOK_LIVE],
    )
    return cases


REQUIREMENTS = {
    "CONF-04": "Temporal Disambiguation: the latest state, never a superseded one",
    "CONF-05": "Exact Verbatim Retrieval: paged bytes are the verified stored bytes",
    "CONF-06": "Bounded Rehydration Cap: per call and per turn, partial pages flagged",
    "CONF-07": "Enforced Eviction Cycle: a page is gone from the next call (needs an integration that owns the prompt)",
    "CONF-09": "Tamper Detection: a node that fails verification is never paged in",
    "CONF-10": "Explicit Failure Mode: a missing node is reported, never replaced by a guess",
    "CONF-12": "Inconsistent State Detection and path containment: orphans, broken references, escapes, other sessions' stores",
    "CONF-13": "Passive Recall Interception: what the prompt names is paged in before the model is called",
    "SEC-SCRUB": "Secret scrubbing (RFC-IPCF-001 §Security): no secret from the input reaches the model or the disk",
}

PROFILES = {
    "normative": {"description": "every case"},
    "safety": {"description": "the safety cases only: zero deviation, no declaration excuses anything"},
}

CHANGELOG = [
    {
        "version": "1.0.0",
        "kind": "major",
        "reason": "First suite: what an integration does with the engine's decisions on one prompt, for every integration (issue 17).",
    }
]


def document():
    return {
        "$schema": "./cases.schema.json",
        "suite": "contextfold-adapter-acceptance",
        "version": VERSION,
        "contract": "adapter acceptance contract v1 (seeds/003): cases are data, adapters supply a subject; safety and liveness; stop-direction declarations bound to the case input",
        "changelog": CHANGELOG,
        "requirements": REQUIREMENTS,
        "profiles": PROFILES,
        "cases": build(),
    }


def render():
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    text = render()
    if a.check:
        with open(a.out, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{a.out} differs from what build_cases.py writes")
                return 1
        return 0
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {len(document()['cases'])} cases to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
