"""The lexical analyzer, against real kiwipiepy (no mocks: the point is Kiwi's actual behaviour)."""

from __future__ import annotations

import re

import pytest

from hippo_core.index.tokenize import (
    BIGRAM_MARKER,
    Tokenizer,
    TokenizerConfig,
    is_bigram,
    normalize_english,
)

HANGUL_RUN = re.compile("[\uac00-\ud7a3]{2,}")


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer()


def morphemes(tokens: list[str]) -> list[str]:
    return [t for t in tokens if not is_bigram(t)]


def expected_bigrams(text: str) -> list[str]:
    return [BIGRAM_MARKER + run[i : i + 2] for run in HANGUL_RUN.findall(text) for i in range(len(run) - 1)]


def test_particles_are_stripped_and_key_tokens_shared(tok: Tokenizer) -> None:
    variants = ["형태소 분석을", "형태소 분석은", "형태소분석이"]
    for text in variants:
        got = morphemes(tok.tokenize(text))
        assert "형태소" in got and "분석" in got, (text, got)
        assert not {"을", "은", "이"} & set(got), (text, got)
    spaced = [set(morphemes(tok.tokenize(t))) for t in variants[:2]]
    assert spaced[0] == spaced[1] == {"형태소", "분석"}


def test_verb_stem(tok: Tokenizer) -> None:
    assert morphemes(tok.tokenize("마신다")) == ["마시"]
    assert morphemes(tok.tokenize("마셨다")) == ["마시"]
    # irregular adjective (Kiwi tags it VA-I): still kept through the base tag VA
    assert "아름답" in tok.tokenize("아름답게 피었다")


def test_bigrams_marked_and_only_for_hangul_runs_of_two_or_more(tok: Tokenizer) -> None:
    text = "가 나다 형태소분석기 ABC 한"
    got = [t for t in tok.tokenize(text) if is_bigram(t)]
    assert got == expected_bigrams(text)
    assert BIGRAM_MARKER + "나다" in got and BIGRAM_MARKER + "소분" in got
    assert all(len(t) == 3 and t[0] == BIGRAM_MARKER for t in got)
    assert not [t for t in tok.tokenize("가 한 ABC") if is_bigram(t)]
    assert not [t for t in tok.tokenize("vectors and numbers 123") if is_bigram(t)]
    # a bigram never collides with the morpheme of the same characters
    assert "분석" in tok.tokenize("분석") and BIGRAM_MARKER + "분석" in tok.tokenize("분석")


def test_bigrams_can_be_disabled() -> None:
    off = Tokenizer(TokenizerConfig(hangul_bigrams=False))
    assert not [t for t in off.tokenize("형태소 분석을 합니다") if is_bigram(t)]


def test_english_normalization(tok: Tokenizer) -> None:
    got = tok.tokenize("The Vectors of the cat's toys: studies, classes and boxes; analysis of corpus")
    assert got == ["vector", "cat", "toy", "study", "class", "box", "analysis", "corpus"]
    assert tok.tokenize("vector") == tok.tokenize("vectors") == ["vector"]
    # Kiwi 0.24 splits 'stop.' into 's' + 'top.'; our regex does not
    assert tok.tokenize("Don't stop. It's over.") == ["stop"]


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("vectors", "vector"),
        ("studies", "study"),
        ("ties", "tie"),
        ("classes", "class"),
        ("matches", "match"),
        ("boxes", "box"),
        ("class", "class"),
        ("corpus", "corpus"),
        ("analysis", "analysis"),
        ("gas", "gas"),
        ("cat's", "cat"),
        ("notes", "note"),
        ("vector", "vector"),
    ],
)
def test_normalize_english(word: str, expected: str) -> None:
    assert normalize_english(word) == expected


def test_case_kept_when_lowercase_disabled() -> None:
    cased = Tokenizer(TokenizerConfig(lowercase=False, english_stopwords=False))
    assert cased.tokenize("The Studies of Vectors") == ["The", "Study", "of", "Vector"]


def test_stopwords_can_be_disabled() -> None:
    assert Tokenizer(TokenizerConfig(english_stopwords=False)).tokenize("the cat") == ["the", "cat"]


def test_numbers_kept(tok: Tokenizer) -> None:
    got = tok.tokenize("2024년 3.14 1,000원 v1.2.3")
    assert {"2024", "3.14", "1000", "1.2.3"} <= set(got)
    assert "년" not in got  # bound noun (NNB) dropped


def test_markdown_markup_is_not_tokenized(tok: Tokenizer) -> None:
    text = (
        "# 제목\n\n## Sub heading\n* 항목 **굵게** _기울임_ [[위키링크|별칭]] `code_span` "
        "> 인용 - [ ] todo 😀 #태그 [link](https://example.com/path) ---\n```python\nx = 1\n```"
    )
    got = tok.tokenize(text)
    markup = set("#*[]|`>-_()!=😀:/")
    assert got, "content words must survive"
    assert all(not (set(t) & markup) for t in got), got
    assert {"제목", "항목", "별칭", "code", "span", "태그", "sub", "heading"} <= set(got)
    assert "위키링크" in got or {"위키", "링크"} <= set(got)  # Kiwi's split depends on context


@pytest.mark.parametrize("text", ["", " ", "   \n\t  ", "😀🎉", "***", "[[ ]]"])
def test_empty_and_symbol_only_input(tok: Tokenizer, text: str) -> None:
    assert tok.tokenize(text) == []


def test_mixed_korean_english(tok: Tokenizer) -> None:
    got = tok.tokenize("Python으로 BM25 검색을 구현했다. 벡터 검색은 vectors로 한다")
    assert {"python", "bm", "25", "검색", "구현", "벡터", "vector"} <= set(got)
    assert "으로" not in got and "로" not in got


def test_document_order_and_duplicates_kept(tok: Tokenizer) -> None:
    got = morphemes(tok.tokenize("사과 banana 사과 바나나 banana"))
    assert got == ["사과", "banana", "사과", "바나나", "banana"]


def test_compound_noun_toggle() -> None:
    on = Tokenizer(TokenizerConfig(compound_nouns=True)).tokenize("형태소분석이 중요하다")
    off = Tokenizer(TokenizerConfig(compound_nouns=False)).tokenize("형태소분석이 중요하다")
    assert "형태소분석" in on and "형태소분석" not in off
    assert on.index("형태소") < on.index("형태소분석") < on.index("분석")
    # nouns separated by a space are not glued together
    assert "형태소분석" not in Tokenizer().tokenize("형태소 분석이")


def test_fingerprint_changes_with_config() -> None:
    base = TokenizerConfig()
    assert base.fingerprint() == TokenizerConfig().fingerprint()
    assert Tokenizer(base).fingerprint() == base.fingerprint()
    others = [
        TokenizerConfig(hangul_bigrams=False),
        TokenizerConfig(compound_nouns=False),
        TokenizerConfig(lowercase=False),
        TokenizerConfig(english_stopwords=False),
        TokenizerConfig(min_token_len=2),
        TokenizerConfig(morph_tags=("NNG", "NNP")),
    ]
    prints = {base.fingerprint(), *(c.fingerprint() for c in others)}
    assert len(prints) == len(others) + 1


def test_config_is_frozen() -> None:
    with pytest.raises(Exception):  # noqa: B017 - pydantic raises ValidationError
        TokenizerConfig().lowercase = False  # type: ignore[misc]


def test_morph_tags_and_min_len() -> None:
    nouns_only = Tokenizer(TokenizerConfig(morph_tags=("NNG", "NNP"), hangul_bigrams=False))
    assert nouns_only.tokenize("커피를 마셨다 coffee 2024") == ["커피"]
    long_only = Tokenizer(TokenizerConfig(min_token_len=2, hangul_bigrams=False))
    assert long_only.tokenize("물 한 잔 x water") == ["water"]


def test_nfd_hangul_is_normalized(tok: Tokenizer) -> None:
    import unicodedata

    text = "형태소 분석"
    assert tok.tokenize(unicodedata.normalize("NFD", text)) == tok.tokenize(text)


def test_tokenize_many_matches_tokenize(tok: Tokenizer) -> None:
    texts = ["형태소 분석을 합니다", "", "vectors and 벡터", "마셨다", "# 제목 [[링크]]", "English only text"]
    assert tok.tokenize_many(texts) == [tok.tokenize(t) for t in texts]
    assert tok.query_tokens("형태소 분석") == tok.tokenize("형태소 분석")
    assert tok.tokenize_many([]) == []


def test_long_text_is_split_without_losing_tokens(tok: Tokenizer) -> None:
    para = "형태소 분석기는 문장을 형태소로 나눕니다. Vectors are compared by cosine similarity."
    long_text = "\n".join([para] * 200)  # ~16k chars, several Kiwi pieces
    assert len(long_text) > 10_000
    assert tok.tokenize(long_text) == tok.tokenize(para) * 200
    # a pathological run without any space or newline still finishes and yields bigrams
    got = tok.tokenize("가나다라" * 2500)
    assert sum(is_bigram(t) for t in got) == 10_000 - 1


def test_deterministic(tok: Tokenizer) -> None:
    text = "한국어와 English가 섞인 문장 123개를 분석합니다."
    assert tok.tokenize(text) == tok.tokenize(text) == Tokenizer().tokenize(text)


def test_multiword_kiwi_nouns_give_parts_and_no_spaces(tok: Tokenizer) -> None:
    # Kiwi 0.24's multi-word dictionary may return `지리 정보 시스템` or `NH농협은행` as one NNP
    got = tok.tokenize("지리 정보 시스템(GIS)은 유용하다. NH농협은행과 브리트니 올드포드")
    assert all(not any(c.isspace() for c in t) for t in got), got
    assert {"지리", "정보", "시스템", "gis", "nh", "농협은행", "브리트니", "올드포드"} <= set(got)
    assert all(t == t.lower() for t in got)
