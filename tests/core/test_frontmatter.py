"""The frontmatter contract: split, parse, validate, render, and clear errors for broken documents."""

from __future__ import annotations

import pytest

from hippo_core.vault import frontmatter
from hippo_core.vault.frontmatter import Frontmatter, FrontmatterError

FULL = """---
type: concept
status: canonical
trust: human_edit
title: 수면 위생
created: 2024-03-12
updated: 2024-03-14 09:30:00
tags: [sleep, 건강]
sources: 10-sources/kiwi-notes.md
aliases:
  - sleep hygiene
  - null
sector: health
confidence: 0.8
contested: true
cssclass: wide
---
# 수면 위생

본문.
"""


# --- split ---------------------------------------------------------------------------------------


def test_split_without_frontmatter_returns_the_whole_text() -> None:
    assert frontmatter.split("# Title\n\n---\nnot frontmatter\n") == (
        None,
        "# Title\n\n---\nnot frontmatter\n",
    )
    assert frontmatter.split("----\ntitle: x\n----\n") == (None, "----\ntitle: x\n----\n")
    assert frontmatter.split("") == (None, "")


def test_split_returns_raw_yaml_and_body() -> None:
    assert frontmatter.split("---\ntitle: x\n---\nbody\n") == ("title: x\n", "body\n")
    assert frontmatter.split("---\ntitle: x\n...\nbody") == ("title: x\n", "body")  # YAML end marker
    assert frontmatter.split("---\ntitle: x\n---") == ("title: x\n", "")


def test_crlf_frontmatter_is_read() -> None:
    fm, body = frontmatter.parse("---\r\ntitle: Windows\r\nstatus: canonical\r\n---\r\nbody\r\n")
    assert (fm.title, fm.status) == ("Windows", "canonical")
    assert body == "body\r\n"


# --- parse ---------------------------------------------------------------------------------------


def test_parse_reads_every_governed_field_and_keeps_unknown_keys() -> None:
    fm, body = frontmatter.parse(FULL, "20-wiki/health/sleep.md")
    assert (fm.type, fm.status, fm.trust, fm.title) == ("concept", "canonical", "human_edit", "수면 위생")
    assert fm.tags == ["sleep", "건강"]
    assert fm.sources == ["10-sources/kiwi-notes.md"]  # a single string becomes a list
    assert fm.aliases == ["sleep hygiene"]  # null items dropped
    assert (fm.sector, fm.confidence, fm.contested) == ("health", 0.8, True)
    assert fm.model_extra == {"cssclass": "wide"}  # Obsidian users add their own keys
    assert body == "# 수면 위생\n\n본문.\n"


def test_dates_are_normalized_to_iso_strings() -> None:
    fm, _ = frontmatter.parse(FULL)
    assert fm.created == "2024-03-12"  # YAML date
    assert fm.updated == "2024-03-14T09:30:00"  # YAML timestamp
    fm, _ = frontmatter.parse("---\ncreated: '2024-03-12'\nupdated: 2024-03-12T10:00:00+09:00\n---\n")
    assert fm.created == "2024-03-12"
    assert fm.updated == "2024-03-12T10:00:00+09:00"


def test_scalars_are_coerced_to_the_contract_types() -> None:
    fm, _ = frontmatter.parse("---\ntitle: 2024\nsector: 42\ntags:\naliases: solo\n---\n")
    assert (fm.title, fm.sector, fm.tags, fm.aliases) == ("2024", "42", [], ["solo"])


@pytest.mark.parametrize(
    ("path", "status", "trust"),
    [
        ("10-sources/paper.md", "raw-source", "source"),
        ("20-wiki/health/sleep.md", "draft", "human_edit"),
        ("50-ops/worklog.md", "reference", "human_edit"),
        ("", "reference", "human_edit"),
    ],
)
def test_defaults_depend_on_where_the_document_lives(path: str, status: str, trust: str) -> None:
    fm, body = frontmatter.parse("# No frontmatter\n", path)
    assert (fm.status, fm.trust) == (status, trust)
    assert body == "# No frontmatter\n"
    explicit, _ = frontmatter.parse("---\nstatus: archived\ntrust: llm_summary\n---\n", path)
    assert (explicit.status, explicit.trust) == ("archived", "llm_summary")  # declared values win


def test_empty_frontmatter_means_defaults() -> None:
    for text in ("---\n---\nbody", "---\n\n---\nbody", "---\n# only a comment\n---\nbody"):
        fm, body = frontmatter.parse(text, "20-wiki/x/y.md")
        assert (fm.status, fm.trust, body) == ("draft", "human_edit", "body")


# --- errors --------------------------------------------------------------------------------------


def test_unclosed_fence_is_an_error() -> None:
    with pytest.raises(FrontmatterError, match="never closed"):
        frontmatter.parse("---\ntitle: x\n\n# body without a closing fence\n")


def test_invalid_yaml_names_the_line_of_the_file() -> None:
    with pytest.raises(FrontmatterError, match=r"invalid YAML in frontmatter at line 3: mapping values"):
        frontmatter.parse("---\ntitle: ok\nbad: : :\n---\nbody\n")
    with pytest.raises(FrontmatterError, match="invalid YAML"):
        frontmatter.parse("---\ntitle: [unclosed\n---\nbody\n")


def test_unsafe_yaml_tags_are_refused_not_executed() -> None:
    with pytest.raises(FrontmatterError, match="invalid YAML"):
        frontmatter.parse("---\ntitle: !!python/object/apply:os.system ['echo pwned']\n---\n")


@pytest.mark.parametrize(("raw", "kind"), [("- a\n- b", "list"), ("just a string", "str"), ("42", "int")])
def test_frontmatter_must_be_a_mapping(raw: str, kind: str) -> None:
    with pytest.raises(FrontmatterError, match=f"must be a mapping of keys, got {kind}"):
        frontmatter.parse(f"---\n{raw}\n---\nbody\n")


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("status: published", "status"),
        ("trust: gospel", "trust"),
        ("type: blogpost", "type"),
        ("confidence: very", "confidence"),
        ("tags: {a: 1}", "tags"),
    ],
)
def test_values_outside_the_contract_are_errors_naming_the_field(line: str, field: str) -> None:
    with pytest.raises(FrontmatterError, match=f"breaks the contract: {field}"):
        frontmatter.parse(f"---\n{line}\n---\nbody\n")


def test_frontmatter_error_is_a_value_error() -> None:
    assert issubclass(FrontmatterError, ValueError)


@pytest.mark.parametrize("value", ["2024-02-30", "2024-13-01", "2024-03-12 25:00:00"])
def test_an_impossible_date_is_a_frontmatter_error(value: str) -> None:
    with pytest.raises(FrontmatterError):
        frontmatter.parse(f"---\ncreated: {value}\n---\nbody\n")


# --- render --------------------------------------------------------------------------------------


def test_render_writes_keys_in_order_and_unicode_as_is() -> None:
    text = frontmatter.render({"title": "수면 위생", "status": "canonical", "tags": ["a", "b"]}, "# 수면\n")
    assert text == "---\ntitle: 수면 위생\nstatus: canonical\ntags:\n- a\n- b\n---\n\n# 수면\n"


def test_render_then_parse_round_trips_and_is_stable() -> None:
    fields = {
        "type": "source-summary",
        "status": "raw-source",
        "trust": "source",
        "title": "Colon: inside, and 'quotes'",
        "created": "2024-03-12",
        "aliases": ["x", "엑스"],
        "custom": {"nested": [1, 2]},
    }
    text = frontmatter.render(fields, "body line\n")
    fm, body = frontmatter.parse(text)
    assert fm.model_dump(include=set(fields) & set(Frontmatter.model_fields)) == {
        k: v for k, v in fields.items() if k in Frontmatter.model_fields
    }
    assert fm.model_extra == {"custom": {"nested": [1, 2]}}
    assert body.strip() == "body line"
    assert frontmatter.render(fields, body) == text  # a second render changes nothing
