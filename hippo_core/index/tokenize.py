"""The lexical analyzer shared by indexing and querying.

One function of text → tokens feeds BM25 on both sides, so whatever the index was built with must
also analyze the query; `TokenizerConfig.fingerprint()` lets an index record that analyzer.

Analysis, in document order:

* Hangul and Hanja go through Kiwi (kiwipiepy). Content morphemes are kept (nouns, numerals,
  verb/adjective stems, roots, Hanja); particles, endings and bound nouns are dropped, so
  `분석을`/`분석은`/`분석이` all give `분석` and `마신다`/`마셨다` give the stem `마시`.
* Consecutive nouns written as one word (`형태소분석`) additionally give their concatenation, so a
  query written the same way scores higher than one that only shares the parts.
* Every run of two or more Hangul syllables gives character bigrams prefixed with `BIGRAM_MARKER`,
  a safety net when morphology fails (typos, unknown names, odd spacing).
* Latin words and numbers are read with a regular expression, not taken from Kiwi: the Kiwi 0.24
  CoNg model splits Latin words at odd places near punctuation (`stop.` → `s` + `top.`,
  `disabilities.` → `disabilit` + `ies.`). Latin words are lowercased, stop-listed and lightly
  de-pluralized.

Markup characters (`#`, `*`, `[[`, backticks, `|`, emoji) never become tokens because only letters,
digits and Kiwi content morphemes are ever emitted.
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from collections.abc import Sequence
from operator import itemgetter
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from kiwipiepy import Kiwi, Token

__all__ = [
    "ANALYZER_VERSION",
    "BIGRAM_MARKER",
    "bigram_heads",
    "ENGLISH_STOPWORDS",
    "Tokenizer",
    "TokenizerConfig",
    "get_kiwi",
    "is_bigram",
    "normalize_english",
]

ANALYZER_VERSION = "1"
"""Bump when the analysis code changes in a way that changes tokens (part of the fingerprint)."""

BIGRAM_MARKER = "\u1d47"  # "ᵇ": a modifier letter that Kiwi never emits and our word regex skips
"""Prefix of Hangul character bigram tokens, so `ᵇ형태` can never equal a morpheme `형태`."""

DEFAULT_MORPH_TAGS: tuple[str, ...] = ("NNG", "NNP", "NR", "SN", "VV", "VA", "XR", "SL", "SH")

_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves
    don doesn didn isn aren wasn weren won wouldn shouldn couldn hasn haven hadn
"""
ENGLISH_STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
"""A deliberately small list (Lucene's plus pronouns and auxiliaries): BM25's idf handles the rest."""

# Conjoining jamo, compatibility jamo, syllables, extended jamo; CJK ideographs (Kiwi tags them SH).
_HANGUL_CHARS = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7a3\ud7b0-\ud7ff"
_HAN_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_NEEDS_KIWI = re.compile(f"[\uac00-\ud7a3{_HAN_CHARS}]")
_HANGUL_RUN = re.compile("[\uac00-\ud7a3]{2,}")
# A "foreign" letter: any Unicode letter that is not Hangul, Han or the bigram marker.
_LETTER = f"(?:(?![{_HANGUL_CHARS}{_HAN_CHARS}{BIGRAM_MARKER}])[^\\W\\d_])"
_WORD_OR_NUMBER = re.compile(
    rf"(?P<word>{_LETTER}+)(?:['\u2019](?P<suffix>{_LETTER}+))?"
    r"|(?P<num>[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)*)"
)
_CONTRACTION_SUFFIXES = frozenset({"s", "t", "d", "m", "ll", "re", "ve"})
_ASCII_LOWER = re.compile("[a-z]+")
_PLAIN_FORM = re.compile(f"[{_HANGUL_CHARS}{_HAN_CHARS}]+")  # a Kiwi form without spaces/Latin/digits
_PLAIN_PART = re.compile(f"[\uac00-\ud7a3{_HAN_CHARS}]+")
_WORD_CHARS = re.compile(r"[^\W_]+")
_NOUN_TAGS = frozenset({"NNG", "NNP"})
_REGEX_TAGS = frozenset({"SL", "SN"})  # produced by our regex, never taken from Kiwi

_MAX_PIECE_CHARS = 2000
"""Kiwi slows down super-linearly on very long inputs (a 525k-char string: 17 s vs 3.7 s in
paragraphs), so long texts are cut into pieces of at most this many characters."""

# Kind ranks order tokens that start at the same offset: morpheme, compound, bigram.
_KIND_MORPH, _KIND_COMPOUND, _KIND_BIGRAM = 0, 1, 2


class TokenizerConfig(BaseModel, frozen=True):
    """What the analyzer emits; an index built with one config must be queried with the same."""

    morph_tags: tuple[str, ...] = Field(
        default=DEFAULT_MORPH_TAGS,
        description="Kiwi POS tags to keep (irregular suffixes like VA-I match VA). SL/SN switch "
        "Latin words/numbers on or off.",
    )
    hangul_bigrams: bool = True
    compound_nouns: bool = True
    lowercase: bool = True
    english_stopwords: bool = True
    min_token_len: int = Field(
        default=1, ge=1, description="Applies to morphemes, words and numbers; not to bigrams or compounds."
    )

    def fingerprint(self) -> str:
        """Hash of the config, the analyzer code version and the Kiwi version: equal means same tokens."""
        import kiwipiepy

        payload = f"{ANALYZER_VERSION}|kiwipiepy={kiwipiepy.__version__}|{self.model_dump_json()}"
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


_kiwi_lock = threading.Lock()
_kiwi: Kiwi | None = None


def get_kiwi() -> Kiwi:
    """The process-wide Kiwi instance, built once (~1 s) and warmed up before it is shared.

    Kiwi finishes its lazy initialization on the first analysis call; doing that under the lock
    makes later concurrent use from several threads safe.
    """
    global _kiwi
    if _kiwi is None:
        with _kiwi_lock:
            if _kiwi is None:
                from kiwipiepy import Kiwi

                kiwi = Kiwi()
                kiwi.tokenize("초기화")
                _kiwi = kiwi
    return _kiwi


def is_bigram(token: str) -> bool:
    """True for Hangul bigram tokens (callers down-weight them at query time)."""
    return token.startswith(BIGRAM_MARKER)


def bigram_heads(tokens: Sequence[str]) -> list[str]:
    """The first bigram of each Hangul run in analyzed tokens (consecutive bigrams of one run overlap by a
    syllable): without Kiwi, a Korean word's head stands for its stem, while the bigrams of its particles
    and endings (`피와`, `어야`) would count as query terms no note holds."""
    heads: list[str] = []
    previous = ""
    for token in tokens:
        if is_bigram(token):
            if not (previous and previous[-1] == token[1]):
                heads.append(token)
            previous = token
        else:
            previous = ""
    return heads


def normalize_english(word: str) -> str:
    """Strip a possessive and a regular plural; deliberately no real stemming.

    Only enough that `vectors`/`vector`, `studies`/`study`, `classes`/`class` meet. Words of three
    letters or fewer and words ending in -ss/-us/-is are left alone (`class`, `corpus`, `analysis`).
    """
    if word.endswith(("'s", "\u2019s")):
        word = word[:-2]
    n = len(word)
    if n <= 3 or not word.endswith("s"):
        return word
    if n > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return word[:-2]
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


def _pieces(text: str) -> list[tuple[int, str]]:
    """Cut text into (offset, piece) of ≤ `_MAX_PIECE_CHARS`, preferring line, then space boundaries."""
    n = len(text)
    if n <= _MAX_PIECE_CHARS:
        return [(0, text)]
    out: list[tuple[int, str]] = []
    start = 0
    while start < n:
        end = min(start + _MAX_PIECE_CHARS, n)
        if end < n:
            floor = start + _MAX_PIECE_CHARS // 2
            cut = text.rfind("\n", floor, end)
            if cut < 0:
                cut = text.rfind(" ", floor, end)
            if cut >= 0:
                end = cut + 1
        out.append((start, text[start:end]))
        start = end
    return out


class Tokenizer:
    """Text → list of index terms, in document order with duplicates kept (BM25 needs tf)."""

    def __init__(self, config: TokenizerConfig | None = None, morphology: bool = True) -> None:
        """`morphology=False` never loads Kiwi (seconds): Hangul gives its bigrams only, Latin words and
        numbers as usual, so the tokens are a subset of the full analysis and match the same index (the
        prompt hook's in-process search, which cannot wait for Kiwi's model)."""
        self._config = config or TokenizerConfig()
        tags = set(self._config.morph_tags)
        self._kiwi_tags = frozenset(tags - _REGEX_TAGS) if morphology else frozenset()
        self._morphology = morphology
        self._words = "SL" in tags
        self._numbers = "SN" in tags
        self._fingerprint: str | None = None  # computed when asked (it imports kiwipiepy)

    @property
    def config(self) -> TokenizerConfig:
        return self._config

    @property
    def morphology(self) -> bool:
        """Whether Hangul and Hanja go through Kiwi (False: their bigrams are all this analyzer emits)."""
        return self._morphology

    def fingerprint(self) -> str:
        """The config fingerprint, recorded by an index so a mismatched analyzer can be detected."""
        if self._fingerprint is None:
            self._fingerprint = self._config.fingerprint()
        return self._fingerprint

    @property
    def kiwi(self) -> Kiwi:
        return get_kiwi()

    def tokenize(self, text: str) -> list[str]:
        """Analyze one text (single-threaded Kiwi call unless the text is long)."""
        return self.tokenize_many([text])[0]

    def query_tokens(self, text: str) -> list[str]:
        """Analyze a query; identical to `tokenize` today, kept separate for query-side tweaks."""
        return self.tokenize(text)

    def tokenize_many(self, texts: Sequence[str]) -> list[list[str]]:
        """Analyze many texts; Kiwi's batch API spreads the pieces over its worker threads."""
        normalized = [unicodedata.normalize("NFC", t) if t else "" for t in texts]
        jobs: list[tuple[int, int, str]] = []  # (text index, offset, piece) for pieces Kiwi must see
        if self._kiwi_tags:
            for i, text in enumerate(normalized):
                if _NEEDS_KIWI.search(text):
                    jobs.extend((i, off, piece) for off, piece in _pieces(text) if _NEEDS_KIWI.search(piece))
        kiwi_items: list[list[tuple[int, str]]] = [[] for _ in normalized]
        if jobs:
            kiwi = self.kiwi
            if len(jobs) == 1:
                results = [kiwi.tokenize(jobs[0][2], match_options=0)]
            else:
                results = kiwi.tokenize([piece for _, _, piece in jobs], match_options=0)
            for (i, off, _), morphs in zip(jobs, results, strict=True):
                self._collect_morphs(morphs, off, kiwi_items[i])
        return [self._assemble(text, items) for text, items in zip(normalized, kiwi_items, strict=True)]

    def _collect_morphs(self, morphs: Sequence[Token], offset: int, out: list[tuple[int, str]]) -> None:
        """Keep content morphemes and build compound nouns from adjacent noun runs.

        Kiwi 0.24's multi-word dictionary returns forms such as `지리 정보 시스템` or `NH농협은행`
        as one NNP; those give their Hangul/Han parts plus the joined form (`지리정보시스템`), so
        neither a token with a space nor a missed part reaches the index. Latin and digit parts are
        already emitted by the word regex.
        """
        keep = self._kiwi_tags
        min_len = self._config.min_token_len
        compounds = self._config.compound_nouns
        lowercase = self._config.lowercase
        run: list[str] = []
        run_start = run_end = -1
        for m in morphs:
            form = m.form
            tag = m.tag
            start = m.start + offset
            plain = _PLAIN_FORM.fullmatch(form) is not None
            joined = form
            if not plain:
                joined = "".join(_WORD_CHARS.findall(form))
                if lowercase:
                    joined = joined.lower()
            if compounds:
                if tag in _NOUN_TAGS:
                    if run and start == run_end:
                        run.append(joined)
                    else:
                        if len(run) > 1:
                            out.append((run_start * 4 + _KIND_COMPOUND, "".join(run)))
                        run = [joined]
                        run_start = start
                    run_end = start + m.len
                elif run:
                    if len(run) > 1:
                        out.append((run_start * 4 + _KIND_COMPOUND, "".join(run)))
                    run = []
            if tag not in keep and tag.partition("-")[0] not in keep:
                continue
            if plain:
                if len(form) >= min_len:
                    out.append((start * 4 + _KIND_MORPH, form))
                continue
            out.extend((start * 4 + _KIND_MORPH, p) for p in _PLAIN_PART.findall(form) if len(p) >= min_len)
            if compounds and joined:
                out.append((start * 4 + _KIND_COMPOUND, joined))
        if len(run) > 1:
            out.append((run_start * 4 + _KIND_COMPOUND, "".join(run)))

    def _assemble(self, text: str, items: list[tuple[int, str]]) -> list[str]:
        """Add regex words/numbers and bigrams to the Kiwi morphemes, then order by text offset."""
        if not text:
            return []
        cfg = self._config
        if self._words or self._numbers:
            self._collect_words(text, items)
        if cfg.hangul_bigrams:
            for match in _HANGUL_RUN.finditer(text):
                run = match.group()
                base = match.start()
                items.extend(
                    ((base + j) * 4 + _KIND_BIGRAM, BIGRAM_MARKER + run[j : j + 2])
                    for j in range(len(run) - 1)
                )
        items.sort(key=itemgetter(0))  # stable: same-offset tokens keep their insertion order
        return [tok for _, tok in items]

    def _collect_words(self, text: str, out: list[tuple[int, str]]) -> None:
        """Latin (and other alphabetic) words and numbers, normalized."""
        cfg = self._config
        min_len = cfg.min_token_len
        for match in _WORD_OR_NUMBER.finditer(text):
            pos = match.start() * 4 + _KIND_MORPH
            num = match.group("num")
            if num is not None:
                if self._numbers:
                    token = num.replace(",", "")
                    if len(token) >= min_len:
                        out.append((pos, token))
                continue
            if not self._words:
                continue
            word = match.group("word")
            suffix = match.group("suffix")
            if suffix is not None and suffix.lower() not in _CONTRACTION_SUFFIXES:
                word += suffix  # O'Brien → obrien; cat's/don't → cat/don
            lower = word.lower()
            if cfg.english_stopwords and lower in ENGLISH_STOPWORDS:
                continue
            if _ASCII_LOWER.fullmatch(lower):
                token = normalize_english(lower) if cfg.lowercase else _normalize_keep_case(word, lower)
            else:
                token = lower if cfg.lowercase else word
            if len(token) >= min_len:
                out.append((pos, token))


def _normalize_keep_case(word: str, lower: str) -> str:
    """`normalize_english` applied to a word whose case is kept (lowercase=False)."""
    stem = normalize_english(lower)
    if stem == lower:
        return word
    if lower.endswith("ies") and stem.endswith("y"):
        return word[:-3] + ("Y" if word[-3].isupper() else "y")
    return word[: len(stem)]
