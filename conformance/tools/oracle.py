"""IPCF-1.1 reference algorithms (ipcf-projection-v2), written from the specification text.

This is the corpus authoring oracle: `build_corpus.py` uses it to derive the expected values of
cases that the published vectors do not pin (custom histories, budgets, recall labels). It is a
second, independent implementation in the reference's own language (Python `re` gives the exact
`\\w`, `\\b`, `\\s` semantics the specification assumes) and it never calls contextfold.
`python3 build_corpus.py --vectors DIR` re-checks it against every published vector first.
"""

import hashlib
import json
import re
import unicodedata

PROJECTION_VERSION = "ipcf-projection-v2"

DEFAULT_POLICY = {
    "policy_version": "1.1",
    "max_rehydration_tokens_per_call": 3000,
    "max_rehydration_tokens_per_turn": 3500,
    "scope": "single_turn",
    "eviction_trigger": "after_response",
    "integrity_verification": True,
}

STOPWORDS = set(
    """and the for with this that from are was were will can has had have what which how did
    you all any not but we is it on at to of in do be or an as if by so no up my ve ile için
    olan bir bu şu daha gibi kadar diye veya ya ama fakat lakin çünkü böyle nasıl neden ne hangi
    var yok şey mi mu mü mı""".split()
)

IDENT_RE = re.compile(r"\b[^\W\d]\w{2,}\b|\b[0-9]{3,}\b")
FILE_RE = re.compile(
    r"(?:[\w.-]+[/\\])+[\w.-]+\.[a-zA-Z0-9]+|[\w.-]+\.(?:py|js|ts|json|md|sql|sh|yml|yaml|html|css|rs|go|cs)"
)
CMD_RE = re.compile(r"^\s*(?:\$|>)\s*([a-zA-Z0-9_.-]+(?:\s+[^;\n\r]+)?)", re.MULTILINE)
ERR_RE = re.compile(
    r"\b(?:[A-Z][a-zA-Z0-9]+Error|[A-Z][a-zA-Z0-9]+Exception|FATAL|PANIC|Traceback)\b"
    r"|HTTP\s+[45]\d{2}|\b[A-Z]{2,}_[A-Z0-9_]+_ERROR\b"
)


def canonical_json(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def nfc(text):
    return unicodedata.normalize("NFC", text)


def fold_token(token):
    t = nfc(token.lower())
    return t.replace("\u0307", "").replace("ı", "i")


def identifiers(text):
    out = set()
    for m in IDENT_RE.findall(text):
        f = fold_token(m)
        if f in STOPWORDS or m in STOPWORDS:
            continue
        out.add(f)
    return sorted(out)


def files(text):
    return sorted({m.replace("\\", "/") for m in FILE_RE.findall(text)})


def commands(text):
    out = set()
    for m in CMD_RE.findall(text):
        s = m.strip()
        if s:
            out.add(s)
    return sorted(out)


def errors(text):
    return sorted(set(ERR_RE.findall(text)))


def payload_of(summary, raw_content):
    return raw_content if raw_content else summary


def token_estimate(text):
    return max(1, len(text) // 4)


def policy_hash(policy):
    return sha256_hex(canonical_json(policy))


def project(turn, policy=None, projection_version=PROJECTION_VERSION):
    """Everything a fold computes for one turn: terms, the three-field identity inputs, hashes."""
    policy = DEFAULT_POLICY if policy is None else policy
    summary = turn["summary"]
    payload = payload_of(summary, turn.get("raw_content"))
    text = nfc(summary) + "\n" + nfc(payload)
    ids = identifiers(text)
    fs = turn["files"] if turn.get("files") is not None else files(text)
    cs = turn["commands"] if turn.get("commands") is not None else commands(text)
    es = turn["errors"] if turn.get("errors") is not None else errors(text)
    normalized = nfc(payload).rstrip()
    projection = {
        "projection_version": projection_version,
        "step_id": turn["step_id"],
        "normalized_content": normalized,
        "identifiers": sorted(set(ids)),
        "files": sorted(set(fs)),
        "commands": sorted(set(cs)),
        "errors": sorted(set(es)),
        "folding_policy_hash": policy_hash(policy),
    }
    return {
        "step_id": turn["step_id"],
        "summary": summary,
        "identifiers": ids,
        "files": fs,
        "commands": cs,
        "errors": es,
        "normalized_content": normalized,
        "payload_sha256": sha256_hex(payload),
        "projection_sha256": sha256_hex(canonical_json(projection)),
        "folding_policy_hash": policy_hash(policy),
        "token_estimate": token_estimate(payload),
    }


def match_terms(node):
    cached = node.get("_match_terms")
    if cached is None:
        cached = set(node["identifiers"])
        cached.update(fold_token(f) for f in node["files"])
        cached.update(fold_token(e) for e in node["errors"])
        node["_match_terms"] = cached
    return cached


def summary_terms(node):
    cached = node.get("_summary_terms")
    if cached is None:
        cached = set(identifiers(nfc(node["summary"])))
        node["_summary_terms"] = cached
    return cached


def query_terms(query):
    q = nfc(query)
    terms = set(identifiers(q))
    terms.update(fold_token(f) for f in files(q))
    terms.update(fold_token(e) for e in errors(q))
    return terms


def recall(nodes, query):
    # Recall matches the query's identifiers only; scan also uses the query's files and errors.
    q = set(identifiers(nfc(query)))
    cands = []
    for n in nodes:
        in_summary = summary_terms(n)
        indexed = match_terms(n)
        cov = 0
        score = 0
        for t in q:
            hit = False
            if t in in_summary:
                score += 2
                hit = True
            if t in indexed:
                score += 1
                hit = True
            if hit:
                cov += 1
        if cov > 0:
            cands.append({"step_id": n["step_id"], "coverage": cov, "score": score})
    if not cands:
        return []
    top = max(c["coverage"] for c in cands)
    primary = sorted([c for c in cands if c["coverage"] == top], key=lambda c: -c["step_id"])
    related = sorted([c for c in cands if c["coverage"] < top], key=lambda c: -c["step_id"])
    for i, c in enumerate(primary):
        if i == 0:
            c["status"] = "latest_chronological"
        elif i == len(primary) - 1:
            c["status"] = "historical"
        else:
            c["status"] = "superseded"
    for c in related:
        c["status"] = "related"
    return primary + related


def scan(nodes, query, policy=None):
    """Residual greedy set cover under the per-turn budget, with intent ownership."""
    policy = DEFAULT_POLICY if policy is None else policy
    per_call = policy["max_rehydration_tokens_per_call"]
    per_turn = policy.get("max_rehydration_tokens_per_turn", 3500)
    residual = set(query_terms(query))
    remaining = {n["step_id"]: n for n in nodes if match_terms(n) & residual}
    selected, dropped = [], []
    consumed = 0
    while residual and remaining:
        best = None
        for sid, n in remaining.items():
            gain = len(residual & match_terms(n))
            if best is None or gain > best[0] or (gain == best[0] and sid > best[1]):
                best = (gain, sid)
        if best is None or best[0] == 0:
            break
        n = remaining.pop(best[1])
        taken = sorted(residual & match_terms(n))
        cost = min(n["token_estimate"], per_call, per_turn)
        pick = {"step_id": n["step_id"], "matched_terms": taken, "cost": cost}
        if not selected or consumed + cost <= per_turn:
            selected.append(pick)
            consumed += cost
        else:
            dropped.append(pick)
        residual -= set(taken)
    return {"selected": selected, "budget_dropped": dropped, "query_terms": sorted(query_terms(query))}
