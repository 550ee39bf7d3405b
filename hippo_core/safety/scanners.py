"""Detection of credentials and prompt injections in user text: one rule table, linear time.

`find_secrets(text)` and `find_injections(text)` return `Finding`s whose `start`/`end` index the text as
given; `hippo_core.safety.scrub` redacts exactly the spans `find_secrets` reports, so detection (the capture
filter, the promotion gate) and redaction (conversation ingest, stored fields) can never disagree.

**Normalisation.** Text is scanned in a normalised copy: NFKC (full-width and other compatibility
forms become ASCII) with the invisible characters U+200B–U+200D, U+2060, U+FEFF and the soft hyphen
removed, so `AKIA` split by a zero-width space is still a key. Every character of the copy remembers
the character of the original it came from, so a finding maps back to a span of the original text.
The injection scanner goes further: Cyrillic and Greek look-alikes fold to Latin (`CONFUSABLES`),
case folds, whitespace runs (newlines too) collapse to one space, and letters spaced out one by one
(`i g n o r e`) join.

**Linear time.** Python's `re` backtracks, so every pattern here is written to run in time linear in
its input: a token starts only where no character of its own alphabet precedes it (a lookbehind), so
one run of token characters is scanned from one place only; token bodies are possessive (`++`,
`{m,}+`), so a failed match never gives characters back; context windows are bounded (`{0,40}?`).
Checks that need more than a regex (is this name a secret's, entropy, placeholders, a nearby AWS key
id, a base64 decode) run in Python on each candidate or a bounded slice around it. `tests/security` holds the adversarial timing tests.

**Precision.** A rule may carry an `accept` check: vendor tokens with a weak prefix must look random;
`name = value` assignments count only when the value is a literal (not `os.environ[...]`,
`settings.api_key`, `bcrypt(pw)`, `${DB_PASSWORD}`, `<your-password>`, `****`, a bare identifier) and
the name ends in a secret word (`api_key`, `DB_PASSWORD`, `accessToken`; not `tokens`, `password_hash`,
`TOKEN_LIMIT`); a high-entropy token counts only next to a secret word, and never when it is a hex
digest, a UUID or a camelCase identifier. `tests/fixtures/secrets` measures both sides.

**Best effort.** A secret with no recognisable shape and no secret word nearby (a bare password in
prose without "password", a hex key with no name) passes; so does a key split across lines or spelled
out. Injection detection is a tripwire for the common phrasings in English and Korean, not a
guarantee: a paraphrase in other words, another language, an encoding (base64, leetspeak), or an
instruction spread over several sentences can pass. Text that came from outside stays untrusted.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pydantic import BaseModel


class Finding(BaseModel):
    kind: str
    start: int  # offsets in the text as given (not the normalised copy)
    end: int
    excerpt: str


# ---------------------------------------------------------------------------------------------------
# Normalisation


INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")
_INVISIBLE_RE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")

# Cyrillic and Greek letters that look like Latin ones (a small, deliberate subset of Unicode's
# confusables): enough for "Ignоre" with a Cyrillic о; not a general transliteration.
CONFUSABLES = str.maketrans(
    "аbвсԁеһіјӏкмnорԛѕтuνѡхуАВЕНІЈКМОРЅТХУαβεηικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "abbcdehijlkmnopqstuvwxyABEHIJKMOPSTXYabenikvoptuxABEZHIKMNOPTYX",
)

# Letters spelled out one by one: "i g n o r e", "i.g.n.o.r.e" (at least four letters).
_SPACED_LETTERS = re.compile(r"(?<![a-z])[a-z](?:[ .\-_*][a-z]){3,}(?![a-z])")


class OffsetMap:
    """Where the characters of a derived text came from, in pieces: the piece that starts at derived
    index `start` maps to `origin`, moving `step` original characters per derived character (1: copied,
    0: several derived characters from one original, or one space for a whitespace run; 2: every
    second character kept)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.origins: list[int] = []
        self.steps: list[int] = []

    def add(self, start: int, origin: int, step: int) -> None:
        self.starts.append(start)
        self.origins.append(origin)
        self.steps.append(step)

    def __call__(self, index: int) -> int:
        k = bisect_right(self.starts, index) - 1
        return self.origins[k] + (index - self.starts[k]) * self.steps[k]


@dataclass(frozen=True)
class View:
    """A normalised copy of a text and the maps back to the original (none: the copy is the original)."""

    text: str
    maps: tuple[OffsetMap, ...] = ()

    def origin(self, index: int) -> int:
        for offsets in reversed(self.maps):
            index = offsets(index)
        return index

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original characters a span of the copy came from."""
        return self.origin(start), self.origin(end - 1) + 1


def secret_view(text: str) -> View:
    """NFKC with invisible characters removed (the original itself when nothing changes)."""
    return View(text) if text.isascii() else _normalise(text, injection=False)


def injection_view(text: str) -> View:
    """`secret_view` plus look-alike folding, case folding, one space per whitespace run, letters joined."""
    view = _normalise(text, injection=True)
    view = _rewrite(view, _WHITESPACE_TO_COLLAPSE, lambda run: (" ", 0))
    return _rewrite(view, _SPACED_LETTERS, lambda letters: (letters[::2], 2))


_INV = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
_TEXT_OR_INVISIBLE = re.compile(rf"[^{_INV}]++|[{_INV}]++")
_WORD_OR_SPACE = re.compile(r"\S++|\s++")
_WHITESPACE_TO_COLLAPSE = re.compile(r"\s{2,}+|[^\S ]")


def _fold(s: str, injection: bool) -> str:
    if s.isascii():
        return s.lower() if injection else s
    out = s if unicodedata.is_normalized("NFKC", s) else unicodedata.normalize("NFKC", s)
    return out.translate(CONFUSABLES).casefold() if injection else out


def _one_to_one(run: str, folded: str) -> bool:
    """Did every character of `run` become one character of `folded`? Equal lengths after NFKC and
    after NFC (so nothing composed that a compatibility expansion could hide) say so."""
    return len(folded) == len(run) and (run.isascii() or len(unicodedata.normalize("NFC", run)) == len(run))


class _Builder:
    """Pieces of a derived text and where each came from."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.offsets = OffsetMap()
        self.pos = 0

    def emit(self, piece: str, origin: int, step: int) -> None:
        if piece:
            self.offsets.add(self.pos, origin, step)
            self.parts.append(piece)
            self.pos += len(piece)

    def view(self, maps: tuple[OffsetMap, ...]) -> View:
        return View("".join(self.parts), (*maps, self.offsets))


def _normalise(text: str, *, injection: bool) -> View:
    """Piece by piece, so C string methods do the work: the whole text, else each stretch between
    invisible characters, else each word is converted in one go when each of its characters stays one
    character; only a word holding a ligature or an expanding case fold goes character by character."""
    if unicodedata.is_normalized("NFKC", text) and not _INVISIBLE_RE.search(text):
        folded = text.translate(CONFUSABLES).casefold() if injection else text
        if len(folded) == len(text):  # the usual case: one piece, the identity map
            return View(folded)
    out = _Builder()
    for stretch in _TEXT_OR_INVISIBLE.finditer(text):
        if stretch.group()[0] in INVISIBLE:
            continue
        folded = _fold(stretch.group(), injection)
        if _one_to_one(stretch.group(), folded):
            out.emit(folded, stretch.start(), 1)
            continue
        for word in _WORD_OR_SPACE.finditer(stretch.group()):
            at, folded = stretch.start() + word.start(), _fold(word.group(), injection)
            if _one_to_one(word.group(), folded):
                out.emit(folded, at, 1)
            else:
                for k, ch in enumerate(word.group()):
                    out.emit(_fold(ch, injection), at + k, 0)
    return out.view(())


def _rewrite(view: View, pattern: re.Pattern[str], replace: Callable[[str], tuple[str, int]]) -> View:
    """`view` with every match of `pattern` replaced; `replace` gives the new text and its map step."""
    if not pattern.search(view.text):
        return view
    out = _Builder()
    last = 0
    for m in pattern.finditer(view.text):
        out.emit(view.text[last : m.start()], last, 1)
        piece, step = replace(m.group())
        out.emit(piece, m.start(), step)
        last = m.end()
    out.emit(view.text[last:], last, 1)
    return out.view(view.maps)


# ---------------------------------------------------------------------------------------------------
# Checks shared by the rules (each runs on one candidate, in time bounded by the candidate's length)


def _classes(s: str) -> set[str]:
    return {"u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "o" for c in s}


def _mixed(s: str) -> bool:
    """At least two of upper case, lower case, digits: random keys are; words and names are not."""
    return len(_classes(s) - {"o"}) >= 2


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(k / n * math.log2(k / n) for k in Counter(s).values()) if n else 0.0


def _class_changes(s: str) -> float:
    """Share of neighbouring characters of different classes: ≈0.6 for random base62, ≈0.2 for camelCase."""
    kinds = ["u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "o" for c in s]
    return sum(a != b for a, b in zip(kinds, kinds[1:], strict=False)) / max(1, len(s) - 1)


_HEX_OR_UUID = re.compile(r"[0-9a-fA-F]++(?:-[0-9a-fA-F]++)*+")
_PLACEHOLDER = re.compile(
    r"(?i)your|example|placeholder|change[_-]?me|replace|redacted|dummy|sample|xxxx|\*\*\*|\.\.\.|…|<|>"
    r"|^(?:none|null|nil|true|false|undefined|required|optional|string|str|secret|password|token)$"
)
_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]{0,64}+(?:\.[A-Za-z_$][\w$]{0,64}+)++")
_SNAKE_NAME = re.compile(r"[a-z][a-z0-9]*+(?:_[a-z0-9]++)++|[A-Z][A-Z0-9]*+(?:_[A-Z0-9]++)++")
_BARE_WORD = re.compile(r"[A-Za-z_]++")


def _literal(value: str, *, quoted: bool, env_style: bool, password: bool) -> bool:
    """Is `value` a literal credential rather than code, a reference, a name or a placeholder?"""
    v = value.rstrip(")]}.,:")
    if len(v) < 6 or v[0] in "$%<{[(*@&#!\\.~" or _PLACEHOLDER.search(v):
        return False
    if any(c in v for c in "()[]{}") or len(set(v)) <= 2:  # a call, a subscript, a template; ****
        return False
    if _DOTTED_NAME.fullmatch(v) or _SNAKE_NAME.fullmatch(v):  # settings.api_key, "HIPPO_MCP_TOKEN"
        return False
    if not password:  # keys are made by machines: digits among letters, or cases changing often
        return _mixed(v) and (not _BARE_WORD.fullmatch(v) or (len(v) >= 20 and _class_changes(v) >= 0.3))
    return quoted or env_style or not _BARE_WORD.fullmatch(v)  # password = user_pw is a variable


def _line_start(s: str, start: int) -> bool:
    """Only spaces, tabs or a list dash between the previous newline and `start` (looks back ≤ 8)."""
    j = start
    while j > 0 and s[j - 1] in " \t-" and start - j < 8:
        j -= 1
    return j == 0 or s[j - 1] == "\n"


# ---------------------------------------------------------------------------------------------------
# The rule table


@dataclass(frozen=True)
class SecretRule:
    """One credential shape. The secret is group `s` when the pattern has one, else the whole match."""

    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] | None = None
    # A fixed vendor prefix: the excerpt may show it, and base64 payloads are re-scanned with the rule.
    prefixed: bool = True
    # The rule runs only when one of these occurs in the lower-cased text (empty: always).
    keywords: tuple[str, ...] = ()

    def secret_span(self, m: re.Match[str]) -> tuple[int, int]:
        return m.span("s") if "s" in self.pattern.groupindex else m.span()


# A token starts where no token character precedes it: one run of token characters is then tried from
# one place only, which keeps every rule below linear however long the run.
_B = r"(?<![A-Za-z0-9_-])"
_E = r"(?![A-Za-z0-9_-])"

# Names that hold a secret end in one of these (compared lower-cased, without `_` and `-`):
# api_key, apiKey, DB_PASSWORD, accessToken, client-secret; not tokens, password_hash, TOKEN_LIMIT.
_SECRET_NAME_ENDS = (
    "apikey", "accesskey", "secretkey", "privatekey", "signingkey", "encryptionkey", "masterkey", "authkey",
    "secret", "token", "credential", "credentials",
)  # fmt: skip
_PASSWORD_NAME_ENDS = ("password", "passwd", "passphrase", "pwd")

# `NAME = value`, `"name": "value"`, `name: value`, `name => value`: a whole identifier (possessive, so
# one identifier is read once), then the operator; which names count is decided in `accept`.
_ASSIGNMENT = (
    r"(?<![A-Za-z0-9_-])(?P<name>[A-Za-z0-9_-]{1,64}+)(?P<nq>[\"']?)"
    r"(?P<sp1>[ \t]{0,8}+)(?P<op>:=|=>|==|=|:)(?P<sp2>[ \t]{0,8}+)(?P<vq>[\"'`]?)"
    r"(?P<s>[^\s\"'`,;]{1,256}+)"
)


def _assignment_accept(name_ends: tuple[str, ...], password: bool) -> Callable[[re.Match[str]], bool]:
    def accept(m: re.Match[str]) -> bool:
        name, op = m.group("name"), m.group("op")
        if not name.lower().replace("_", "").replace("-", "").endswith(name_ends):
            return False
        quoted = bool(m.group("vq"))
        env_style = op == "=" and not m.group("sp1") and not m.group("sp2") and name.upper() == name
        if op == ":" and not (m.group("nq") or quoted or _line_start(m.string, m.start())):
            return False  # "the token: ..." in prose; JSON, YAML and quoted values still count
        return _literal(m.group("s"), quoted=quoted, env_style=env_style, password=password)

    return accept


def _prose_password(m: re.Match[str]) -> bool:
    v = m.group("s").rstrip(".,;:!?)`'\"")
    return not _BARE_WORD.fullmatch(v) and _literal(v, quoted=True, env_style=False, password=True)


def _random(m: re.Match[str]) -> bool:
    return _mixed(m.group(0))


def _bearer(m: re.Match[str]) -> bool:
    v = m.group("s")
    return _mixed(v) and not _PLACEHOLDER.search(v)


def _basic_auth(m: re.Match[str]) -> bool:
    decoded = _b64decode(m.group("s"))
    return decoded is not None and ":" in decoded and not _PLACEHOLDER.search(decoded)


def _url_password(m: re.Match[str]) -> bool:
    v = m.group("s")
    return v[0] not in "$%<{[*" and not _PLACEHOLDER.search(v) and len(set(v)) > 2


_AWS_KEY_ID = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])")


def _near_aws_key_id(m: re.Match[str]) -> bool:
    s = m.group("s")
    if not ({"u", "l", "d"} <= _classes(s)):
        return False
    return _AWS_KEY_ID.search(m.string, max(0, m.start() - 200), m.end() + 200) is not None


# The words that put a token in a secret's context (also the rule's keywords, so it runs only near one).
_SECRET_CONTEXT_WORDS = (
    "key",
    "token",
    "secret",
    "passw",
    "passphrase",
    "pwd",
    "credential",
    "auth",
    "bearer",
)
_SECRET_CONTEXT_WORDS_KO = ("토큰", "비밀번호", "암호", "인증")
# The end of the text before a token names a secret: `api_key: `, `token = "`, `password is `, `토큰: `.
_SECRET_CONTEXT = re.compile(
    r"(?i)(?:key|token|secret|passw(?:or)?d|passphrase|pwd|credentials?|auth|bearer|토큰|비밀번호|암호|인증)"
    r"[A-Za-z0-9_-]{0,20}+[\"'`\])]?[ \t]{0,3}+(?:=>|->|→|[:=]|is|was|는|은)?[ \t]{0,3}+[\"'`(\[]?\Z"
)


def _high_entropy_near_keyword(m: re.Match[str]) -> bool:
    v = m.group("s").rstrip("=")
    if len(v) < 20 or v.startswith("AAAA") or _HEX_OR_UUID.fullmatch(v) or not ({"l", "d"} <= _classes(v)):
        return False  # hex digests, git SHAs, UUIDs, public key blobs; a key without digits is not worth the risk
    if entropy(v) < 3.5 or _class_changes(v) < 0.3:
        return False  # words, camelCase or snake_case identifiers, paths
    before = m.string[max(0, m.start() - 48) : m.start()]
    return _SECRET_CONTEXT.search(before[before.rfind("\n") + 1 :]) is not None


def _b64decode(s: str) -> str | None:
    """Standard or URL-safe base64 that decodes to printable UTF-8, else None."""
    raw = s.rstrip("=")
    try:
        data = base64.b64decode(
            raw + "=" * (-len(raw) % 4), altchars=b"-_" if ("-" in raw or "_" in raw) else None
        )
        text = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(c.isprintable() or c in "\n\r\t" for c in text)
    return text if text and printable >= 0.95 * len(text) else None


def _encoded_known_secret(m: re.Match[str]) -> bool:
    decoded = _b64decode(m.group("s"))
    return decoded is not None and any(
        (rule.accept is None or rule.accept(found))
        for rule in SECRET_RULES
        if rule.prefixed
        for found in rule.pattern.finditer(decoded)
    )


def _rule(
    kind: str,
    pattern: str,
    accept: Callable[[re.Match[str]], bool] | None = None,
    *,
    keywords: tuple[str, ...] = (),
    prefixed: bool = True,
) -> SecretRule:
    return SecretRule(
        kind=kind, pattern=re.compile(pattern), accept=accept, prefixed=prefixed, keywords=keywords
    )


# Order matters: a span claimed by an earlier rule is not reported again, so specific shapes come first
# (a GitHub token inside `TOKEN=...` is reported as github_token), context rules after them.
SECRET_RULES: tuple[SecretRule, ...] = (
    _rule(
        "private_key",
        r"(?i)-----begin[ a-z0-9_-]{0,60}?private key(?: block)?-----"
        r"(?:(?!-----(?:end|begin))[\s\S]){0,65536}+(?:-----end[^\n-]{0,80}+(?:-----)?)?",
        keywords=("private key",),
    ),
    _rule(
        "aws_secret_key",
        r"(?i)(?<![A-Za-z0-9_])(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?[ \t]{0,8}+(?:=|:|=>)"
        r"[ \t]{0,8}+[\"']?(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        keywords=("secret",),
        prefixed=False,
    ),
    _rule(
        "aws_access_key",
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])",
        keywords=("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "a3t"),
    ),
    _rule("anthropic_key", _B + r"sk-ant-[A-Za-z0-9_-]{20,}+", keywords=("sk-ant-",)),
    _rule("openai_key", _B + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}+", _random, keywords=("sk-",)),
    _rule(
        "stripe_key",
        _B + r"(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}+|whsec_[A-Za-z0-9]{24,}+)",
        keywords=("k_live_", "k_test_", "k_prod_", "whsec_"),
    ),
    _rule(
        "github_token",
        _B + r"(?:gh[pousr]_[A-Za-z0-9]{36,}+|github_pat_[A-Za-z0-9_]{22,}+)",
        keywords=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _rule(
        "gitlab_token",
        _B
        + r"(?:gl(?:pat|dt|ft|rt|soat|ptt|cbt|imt|agent|oas|ffct)-[A-Za-z0-9_-]{20,}+|GR1348941[A-Za-z0-9_-]{20,}+)",
        keywords=("gl", "gr1348941"),
    ),
    _rule("slack_token", _B + r"(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}+", keywords=("xox", "xapp-")),
    _rule(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]++",
        keywords=("hooks.slack.com",),
    ),
    _rule(
        "discord_webhook",
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/[A-Za-z0-9_-]{20,}+",
        keywords=("/api/webhooks/",),
    ),
    _rule(
        "google_api_key",
        _B + r"(?:AIza[0-9A-Za-z_-]{35}|GOCSPX-[A-Za-z0-9_-]{28})" + _E,
        keywords=("aiza", "gocspx-"),
    ),
    _rule("google_oauth_token", _B + r"ya29\.[0-9A-Za-z_-]{20,}+", keywords=("ya29.",)),
    _rule(
        "huggingface_token",
        _B + r"(?:hf_|api_org_)[A-Za-z0-9]{30,}+",
        _random,
        keywords=("hf_", "api_org_"),
    ),
    _rule("npm_token", _B + r"npm_[A-Za-z0-9]{36,}+", keywords=("npm_",)),
    _rule(
        "pypi_token",
        _B + r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}+",
        keywords=("pypi-age",),
    ),
    _rule("sendgrid_key", _B + r"SG\.[A-Za-z0-9_-]{16,32}+\.[A-Za-z0-9_-]{30,64}+", keywords=("sg.",)),
    _rule(
        "azure_storage_key",
        r"(?i)(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey)[ \t]{0,4}+=[ \t]{0,4}+(?P<s>[A-Za-z0-9+/]{20,}+={0,2})",
        keywords=("accountkey", "sharedaccesskey"),
        prefixed=False,
    ),
    _rule(
        "azure_client_secret",
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}+(?![A-Za-z0-9_~.-])",
        _random,
        keywords=("q~",),
    ),
    _rule("twilio_key", r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", _random, keywords=("sk",)),
    _rule(
        "mailgun_key",
        r"(?<![A-Za-z0-9_-])(?:(?:key|pubkey)-[0-9a-f]{32}|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})(?![A-Za-z0-9])",
        keywords=("-",),
    ),
    _rule("mailchimp_key", r"(?<![A-Za-z0-9])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])", keywords=("-us",)),
    _rule("shopify_token", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E, keywords=("shp",)),
    _rule("atlassian_token", _B + r"ATATT3[A-Za-z0-9_=-]{150,}+", keywords=("atatt3",)),
    _rule("digitalocean_token", _B + r"do[opr]_v1_[a-f0-9]{64}" + _E, keywords=("_v1_",)),
    _rule(
        "discord_bot_token",
        _B + r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _E,
        _random,
        keywords=(".",),
    ),
    _rule(
        "telegram_bot_token",
        r"(?:(?<![A-Za-z0-9])|(?<=bot))[0-9]{6,12}:A[A-Za-z0-9_-]{34}" + _E,
        keywords=(":a",),
    ),
    _rule("databricks_token", _B + r"dapi[a-f0-9]{32}(?:-[0-9])?" + _E, keywords=("dapi",)),
    _rule("doppler_token", _B + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}+", keywords=("dp.",)),
    _rule("linear_key", _B + r"lin_api_[A-Za-z0-9]{40}" + _E, keywords=("lin_api_",)),
    _rule("postman_key", _B + r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + _E, keywords=("pmak-",)),
    _rule("pulumi_token", _B + r"pul-[a-f0-9]{40}" + _E, keywords=("pul-",)),
    _rule(
        "grafana_token",
        _B + r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}+={0,2})",
        keywords=("glsa_", "glc_"),
    ),
    _rule("sentry_token", _B + r"sntry[us]_[A-Za-z0-9+/=_]{40,}+", keywords=("sntry",)),
    _rule(
        "hashicorp_token",
        _B + r"(?:hv[sb]\.[A-Za-z0-9_-]{90,}+|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}+)",
        keywords=("hvs.", "hvb.", ".atlasv1."),
    ),
    _rule(
        "age_secret_key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        keywords=("age-secret-key-1",),
    ),
    _rule("square_token", _B + r"(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_-]{22,}+", keywords=("eaaa", "sq0")),
    _rule("heroku_key", _B + r"HRKU-AA[0-9A-Za-z_-]{58}" + _E, keywords=("hrku-",)),
    _rule(
        "ai_provider_key",  # Replicate, Groq, Perplexity, xAI
        _B + r"(?:r8_[A-Za-z0-9]{37}|gsk_[A-Za-z0-9]{52}|pplx-[A-Za-z0-9]{48}|xai-[A-Za-z0-9]{80})" + _E,
        keywords=("r8_", "gsk_", "pplx-", "xai-"),
    ),
    _rule(
        "notion_token",
        _B + r"(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})" + _E,
        _random,
        keywords=("ntn_", "secret_"),
    ),
    _rule("sendinblue_key", _B + r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}" + _E, keywords=("xkeysib-",)),
    _rule("onepassword_token", _B + r"ops_eyJ[A-Za-z0-9+/]{250,}+={0,3}", keywords=("ops_eyj",)),
    _rule("jwt", _B + r"eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+", keywords=("eyj",)),
    _rule(
        "bearer_token",
        r"(?i)(?<![A-Za-z0-9_-])bearer[ \t]{1,8}+(?P<s>[A-Za-z0-9_\-.=~+/]{16,}+)",
        _bearer,
        keywords=("bearer",),
        prefixed=False,
    ),
    _rule(
        "basic_auth",
        r"(?i)(?<![A-Za-z0-9_-])basic[ \t]{1,8}+(?P<s>[A-Za-z0-9+/]{8,}+={0,2})(?![A-Za-z0-9+/=])",
        _basic_auth,
        keywords=("basic",),
        prefixed=False,
    ),
    # scheme://user:password@host: the password only.
    _rule(
        "url_password",
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}+://[^\s:/@\"'<>]{0,128}+:(?P<s>[^\s@/\"'<>]{1,256}+)@",
        _url_password,
        keywords=("://",),
        prefixed=False,
    ),
    _rule(
        "connection_password",
        _ASSIGNMENT,
        _assignment_accept(_PASSWORD_NAME_ENDS, password=True),
        keywords=("pass", "pwd"),
        prefixed=False,
    ),
    _rule(
        "env_secret",
        _ASSIGNMENT,
        _assignment_accept(_SECRET_NAME_ENDS, password=False),
        keywords=("key", "secret", "token", "credential"),
        prefixed=False,
    ),
    _rule(
        "password_in_prose",
        r"(?i)(?<![A-Za-z0-9_])(?:password|passphrase|passwd|pwd|passcode)(?:[ \t]{1,4}+for(?:[ \t]{1,4}+[^\s]{1,40}+){1,3})?"
        r"[ \t]{0,4}+(?:is set to|is now|is still|is|was|=|:)[ \t]{1,4}+[\"'`]?(?P<s>[!-~]{4,128}+)",
        _prose_password,
        keywords=("pass", "pwd"),
        prefixed=False,
    ),
    _rule(
        "password_in_prose",
        r"(?:비밀번호|암호|패스워드)(?:는|은|가|:)?[ \t]{0,4}+[\"'`]?(?P<s>[!-~]{4,128}+)",
        _prose_password,
        keywords=("비밀번호", "암호", "패스워드"),
        prefixed=False,
    ),
    # A bare 40-character AWS secret, counted only within 200 characters of an AWS key id.
    _rule(
        "aws_secret_key",
        r"(?<![A-Za-z0-9+/=])(?P<s>[A-Za-z0-9+/]{40})(?![A-Za-z0-9+/=])",
        _near_aws_key_id,
        keywords=("akia", "asia", "abia", "acca", "a3t"),
        prefixed=False,
    ),
    # A base64 run that decodes to a key of a known shape (decoded once; the payload is not decoded again).
    _rule(
        "encoded_secret",
        r"(?<![A-Za-z0-9+/=_-])(?P<s>[A-Za-z0-9+/_-]{24,4096}+={0,2})(?![A-Za-z0-9+/=_-])",
        _encoded_known_secret,
        prefixed=False,
    ),
    # Entropy with keyword context: a random-looking token right after a secret word on the same line.
    _rule(
        "high_entropy_secret",
        r"(?<![A-Za-z0-9+/=_-])(?P<s>[A-Za-z0-9+/_-]{20,200}+={0,2})(?![A-Za-z0-9+/=_-])",
        _high_entropy_near_keyword,
        keywords=_SECRET_CONTEXT_WORDS + _SECRET_CONTEXT_WORDS_KO,
        prefixed=False,
    ),
)

SECRET_KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in SECRET_RULES))


def _excerpt(rule: SecretRule, m: re.Match[str], start: int, end: int) -> str:
    """What a reviewer may see: the name or vendor prefix, the length; never the secret's own characters."""
    context = m.string[m.start() : start][-40:]
    shown = m.string[start : start + 4] if rule.prefixed and not context else ""
    return f"{context}{shown}…({end - start} chars)"


def _accepted(
    pattern: re.Pattern[str], text: str, accept: Callable[[re.Match[str]], bool] | None
) -> Iterator[re.Match[str]]:
    """The matches `accept` takes; a rejected assignment is searched again from its operator on.

    In `why it failed: SECRET_KEY=...` the prose match `failed: SECRET_KEY=...` is rejected, and its
    value holds the real assignment; plain `finditer` would skip past it. Each retry starts after the
    previous match's operator, so the scan still moves forward and stays linear (matches are bounded).
    """
    pos, n = 0, len(text)
    retry = "op" in pattern.groupindex and accept is not None
    while pos <= n:
        m = pattern.search(text, pos)
        if m is None:
            return
        if accept is None or accept(m):
            yield m
            pos = max(m.end(), m.start() + 1)
        else:
            pos = max(m.end("op"), m.start() + 1) if retry else max(m.end(), m.start() + 1)


def find_secrets(text: str) -> list[Finding]:
    """Credential-shaped spans of `text`, in text order; a span claimed by an earlier rule is reported once."""
    if not text:
        return []
    view = secret_view(text)
    lowered = view.text.lower()
    claimed = bytearray(len(view.text))
    found: list[Finding] = []
    for rule in SECRET_RULES:
        if rule.keywords and not any(k in lowered for k in rule.keywords):
            continue
        for m in _accepted(rule.pattern, view.text, rule.accept):
            start, end = rule.secret_span(m)
            if start == end or claimed.find(1, start, end) != -1:
                continue
            claimed[start:end] = b"\x01" * (end - start)
            orig_start, orig_end = view.span(start, end)
            found.append(
                Finding(kind=rule.kind, start=orig_start, end=orig_end, excerpt=_excerpt(rule, m, start, end))
            )
    return sorted(found, key=lambda f: (f.start, f.kind))


# ---------------------------------------------------------------------------------------------------
# Prompt injections: matched in `injection_view` (folded, lower case, one space per whitespace run)

_QUALIFIER = (
    r"previous|prior|above|earlier|preceding|former|original|initial|existing|all|any|every|your|system"
)
_TARGET = r"instructions?|prompts?|rules?|guidelines?|directions?|directives?|polic(?:y|ies)|constraints?"

# What an injected order asks for: run something first, hide it, move secrets.
_ORDER = (
    r"\bat (?:the )?(?:session|conversation) start\b|\bbefore (?:anything|doing anything) else\b|\bfirst thing\b"
    r"|\bwithout (?:asking|telling|confirming|checking)\b|\byou (?:must|have to|need to) (?:run|execute|send|upload|paste|email|fetch|download)\b"
    r"|\b(?:run|execute) `|\bcurl\b|\bwget\b|~/\.(?:ssh|aws|gnupg|config|netrc)"
)
_SEND = r"e-?mail|mail|send|upload|post|paste|exfiltrate|forward|transmit|leak|publish|curl|wget"
_SECRET_FILE = r"~/\.(?:ssh|aws|gnupg|netrc|docker|kube|config/gh)|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|/etc/(?:shadow|passwd)\b|\.env\b"
_SECRET_WORD = (
    r"secrets?|credentials?|api ?keys?|access keys?|tokens?|passwords?|passphrases?|private keys?|ssh keys?"
    r"|env(?:ironment)? (?:vars?|variables?)|cookies?|session ids?"
)

INJECTION_PATTERNS: dict[str, re.Pattern[str]] = {
    "ignore_instructions": re.compile(
        rf"\b(?:ignore|disregard|forget|override|bypass)\b[^.!?;]{{0,40}}?\b(?:{_QUALIFIER})\b[^.!?;]{{0,30}}?\b(?:{_TARGET})\b"
        r"|\b(?:ignore|disregard|forget)\b[^.!?;]{0,40}?\b(?:you (?:were|have been|had been|was) (?:told|given|taught|instructed|asked)"
        r"|(?:told|said|given) (?:(?:to )?you )?(?:before|earlier|previously|so far))"
        # letters spelled out one by one join without spaces: "ignoreallpreviousinstructions"
        r"|(?:ignore|disregard|forget)(?:all|any|every|the|your)?(?:previous|prior|above|earlier)(?:instructions?|prompts?|rules?)"
    ),
    "role_override": re.compile(
        # "you are now DAN / in developer mode", not "where you are now" or "you are now logged in"
        r"(?<!where )(?<!what )(?<!how )\byou are now\b"
        r"(?! (?:ready|able|set|done|logged|signed|connected|subscribed|registered|on|at|part|in (?:the|a|an)\b))"
        r"|\bact as (?:the |an? )?(?:system|admin(?:istrator)?|developer|root)\b"
        r"|\bfrom now on,? you (?:are|will|must|should)\b|\byou must now\b"
    ),
    "system_prompt_probe": re.compile(
        r"\b(?:reveal|print|show|repeat|output|display|leak|dump)\b[^.!?]{0,30}?\bsystem prompt\b"
    ),
    "fake_system_header": re.compile(
        r"(?:#{1,6} ?|\[|<|\*\*)(?:system|developer|admin(?:istrator)?)(?: (?:prompt|message|override|instructions?|note|update))?"
        r"(?: ?(?:\]|>|\*\*))? ?:|\bnew (?:system )?(?:polic(?:y|ies)|instructions?|rules|persona|system prompt) ?:"
    ),
    "chat_markup": re.compile(
        r"<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|\[/?inst\]|<</?sys>>"
        r"|</?(?:tool_use|tool_call|tool_result|function_calls?|function_results?|invoke|antml:[a-z_]{1,30}+)\b"
    ),
    "ko_ignore_instructions": re.compile(
        r"(?:이전|위의|위|앞의|앞서|기존|모든|지금까지|원래)[^.!?]{0,15}?(?:지시|명령|지침|규칙|설정|프롬프트|안내|룰)"
        r"[^.!?]{0,12}?(?:무시|잊어|잊고|잊으|따르지|버리)"
        r"|시스템 ?프롬프트[^.!?]{0,10}?(?:보여|출력|알려|공개|말해)"
    ),
    # Paraphrases aimed at the agent that reads the text later (attack-run-2 N8). Every gap is bounded and
    # stops at a sentence end, so each start scans at most a sentence: linear in the text.
    "next_agent_order": re.compile(
        # addressed to the next agent / assistant, with an order a handoff has no reason to give
        r"\b(?:next|future|incoming|following|other) (?:agent|assistant|ai|model|llm|session|claude|codex)s?\b"
        rf"[^.!?\n]{{0,80}}?(?=[abcefrwy~])(?:{_ORDER})"
    ),
    "exfiltration": re.compile(
        # send secrets or key files somewhere: a verb, what is sent, and (for the plain words) to whom
        rf"\b(?=[empufltcws])(?:{_SEND})\b[^.!?\n]{{0,60}}?(?=[~i/.])(?:{_SECRET_FILE})"
        rf"|(?=[~i/.])(?:{_SECRET_FILE})[^.!?\n]{{0,60}}?\b(?=[empufltcws])(?:{_SEND})\b"
        rf"|\b(?=[empufltcws])(?:{_SEND})\b[^.!?\n]{{0,60}}?\b(?=[scatpe])(?:{_SECRET_WORD})\b[^.!?\n]{{0,40}}?"
        r"(?=[thi])(?:\bto (?:me|us|this|https?:|[a-z0-9-]++\.[a-z]{2,}+)|\bhere\b|\bin (?:the|this|your) (?:chat|reply|answer|response))"
    ),
    "remote_script": re.compile(
        r"\b(?:curl|wget|iwr|irm)\b[^|\n]{0,200}+\| ?(?:sudo )?(?:ba|z|da)?sh\b|\biex\b ?\("
    ),
    "image_exfiltration": re.compile(
        # a Markdown image the reader's client fetches by itself: a query string leaks what it carries
        r"!\[[^\]\n]{0,300}+\] ?\( ?<?(?:https?:)?//(?!(?:localhost|127\.0\.0\.1|\[::1\])[:/)])"
    ),
    "conceal_from_user": re.compile(
        r"\b(?:do not|don't|dont|never|without) (?:tell|telling|inform|informing|alert|alerting|ask|asking|"
        r"notify|notifying|mention|mentioning)(?: (?:this|it))?(?: to)? the (?:user|human|person|operator)\b"
    ),
}
INJECTION_KINDS: tuple[str, ...] = tuple(INJECTION_PATTERNS)
# Words every match of a pattern holds: a text without any of them skips the pattern (a substring test
# in C instead of trying a long alternation at every position).
INJECTION_HINTS: dict[str, tuple[str, ...]] = {
    "next_agent_order": ("agent", "assistant", "ai", "model", "llm", "session", "claude", "codex"),
    "exfiltration": (
        "mail", "send", "upload", "post", "paste", "exfiltrate", "forward", "transmit", "leak", "publish",
        "curl", "wget",
    ),
    "remote_script": ("curl", "wget", "iwr", "irm", "iex"),
    "image_exfiltration": ("![",),
    "conceal_from_user": ("user", "human", "person", "operator"),
}  # fmt: skip


def find_injections(text: str) -> list[Finding]:
    """Prompt-injection phrasings (English and Korean), matched after normalisation; the excerpt is the original text."""
    if not text:
        return []
    view = injection_view(text)
    claimed = bytearray(len(view.text))
    found: list[Finding] = []
    for kind, pattern in INJECTION_PATTERNS.items():
        hints = INJECTION_HINTS.get(kind)
        if hints is not None and not any(h in view.text for h in hints):
            continue
        for m in pattern.finditer(view.text):
            start, end = m.span()
            if start == end or claimed.find(1, start, end) != -1:
                continue
            claimed[start:end] = b"\x01" * (end - start)
            orig_start, orig_end = view.span(start, end)
            found.append(
                Finding(kind=kind, start=orig_start, end=orig_end, excerpt=text[orig_start:orig_end][:80])
            )
    return sorted(found, key=lambda f: (f.start, f.kind))
