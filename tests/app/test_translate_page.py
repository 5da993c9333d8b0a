"""The Translate page, the banner above every page and the notes on long input say one thing:
the reference is scored against the translation shown first, the banner says which translation
it shows and stays a few lines long, a long text is cut between sentences, and captions name
what their chart shows."""

import pytest
import sacrebleu

from app import ui
from app.analysis import MAX_CHARS, analyse
from app.display import ATTENTION_KINDS, piece_text
from app.figures.text import plot_text
from core import Request
from core.text.sentences import excerpt, translate_by_sentence
from tests.app.apptest import chart_specs
from tests.conftest import TINY

TWO_SENTENCES = "The child reads a book. The dog sleeps in the garden."


def long_text(characters: int) -> tuple[str, list[str]]:
    """A text of distinct short sentences, at least ``characters`` long, and its sentences."""
    sentences, count = [], 0
    while count < characters:
        sentences.append(f"The dog number {len(sentences)} sleeps in the warm garden.")
        count += len(sentences[-1]) + 1
    return " ".join(sentences), sentences


def warnings(at) -> list[str]:
    return [warning.value for warning in at.warning]


def captions(at) -> str:
    return "\n".join(caption.value for caption in at.caption)


@pytest.mark.slow
def test_the_reference_is_scored_against_the_sentence_by_sentence_translation(app, translator):
    by_sentence = translate_by_sentence(
        TWO_SENTENCES, lambda sentence: translator.translate(sentence, "de", 4, 0.6).text
    )
    whole = translator.translate(TWO_SENTENCES, "de", 4, 0.6).text
    assert by_sentence != whole  # else the test could not tell which one is scored
    at = app(text=TWO_SENTENCES, ref=by_sentence)
    assert not at.exception
    assert at.code[0].value == by_sentence  # shown first
    bleu = sacrebleu.sentence_bleu(by_sentence, [by_sentence]).score
    chrf = sacrebleu.sentence_chrf(by_sentence, [by_sentence]).score
    assert [metric.value for metric in at.metric] == [f"{bleu:.1f}", f"{chrf:.1f}"]
    assert "Scored: the sentence-by-sentence translation" in captions(at)


@pytest.mark.slow
def test_two_sentences_are_both(app):
    at = app(text=TWO_SENTENCES)
    assert "Every other page shows the model reading both as one sequence" in captions(at)


@pytest.mark.slow
def test_the_banner_shortens_a_long_text_the_sidebar_keeps_it_whole(app):
    text, _ = long_text(3000)
    at = app("tokenization", text=text, beam="1")
    assert not at.exception
    shown = at.text[0].value
    assert len(shown) <= ui.BANNER_CHARS and shown.endswith("…")
    assert text.startswith(shown.removesuffix(ui.ELLIPSIS))
    assert at.text_area(key="text").value == text


def test_the_banner_shows_a_few_lines_of_a_text_of_many():
    text = "\n".join(f"Line {number}." for number in range(20))
    shown = ui.shortened(text)
    assert len(shown.splitlines()) == ui.BANNER_LINES and shown.endswith(ui.ELLIPSIS)
    assert ui.shortened(TWO_SENTENCES) == TWO_SENTENCES


@pytest.mark.slow
def test_the_banner_says_a_text_of_several_sentences_is_read_as_one_sequence(app, translator):
    at = app("tokenization", text=TWO_SENTENCES, to="fr")
    assert not at.exception
    assert [caption.value for caption in at.caption][:2] == [
        "English",
        "French, the whole text read as one sequence",
    ]
    assert at.text[1].value == translator.translate(TWO_SENTENCES, "fr", 4, 0.6).text


def test_a_long_text_is_cut_between_sentences():
    text, sentences = long_text(MAX_CHARS + 500)
    kept = 0  # whole sentences that fit, counted here without core.text.sentences
    while len(" ".join(sentences[: kept + 1])) <= MAX_CHARS:
        kept += 1
    read = excerpt(text, MAX_CHARS)
    assert read.text == " ".join(sentences[:kept])
    assert (read.sentences, read.sentences_left_out) == (kept, len(sentences) - kept)
    assert read.characters_left_out == len(text) - len(read.text)
    assert read.whole


def test_a_first_sentence_longer_than_the_app_reads_is_cut_inside():
    text = "a" * (MAX_CHARS + 10) + ". A second one."
    read = excerpt(text, MAX_CHARS)
    assert read.text == text[:MAX_CHARS] and not read.whole
    assert (read.sentences, read.sentences_left_out) == (1, 1)


@pytest.mark.slow
def test_translate_reads_whole_sentences_of_a_long_text_and_says_what_it_left_out(app):
    text, sentences = long_text(MAX_CHARS + 500)
    read = excerpt(text, MAX_CHARS)
    at = app(text=text, beam="1")
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["sentence"]) == sentences[: read.sentences]  # no fragment at the end
    left = f"leaves out the {len(sentences) - read.sentences} sentences after them"
    assert any(
        left in note and f"{read.characters_left_out:,} characters" in note
        for note in (warnings(at))
    ), warnings(at)


def test_the_cut_note_of_several_sentences_is_about_the_one_sequence(translator, tiny_model_dir):
    sentence = " ".join(["The dog"] + ["and the cat"] * translator.max_source_tokens) + "."
    several = analyse(translator, Request(tiny_model_dir, f"{sentence} It is late.", "de", 1))
    one = analyse(translator, Request(tiny_model_dir, sentence, "de", 1))
    assert any(note.startswith("Read as one sequence") for note in several.notes), several.notes
    assert not any(note.startswith("The sentence is") for note in several.notes)
    assert any(note.startswith("The sentence is") for note in one.notes), one.notes


@pytest.mark.slow
def test_decoder_rows_take_their_example_from_the_map_below(app, translator):
    traced = translator.translate(TWO_SENTENCES, "de", 4, 0.6, trace=True)
    for page, query, attention in [
        ("translate", {}, traced.word_attention.cross),
        ("attention", {"kind": "cross"}, traced.attention.cross),
        ("attention", {"kind": "cross", "words": "true"}, traced.word_attention.cross),
        ("masking", {}, traced.attention.decoder),
    ]:
        at = app(page, text=TWO_SENTENCES, **query)
        assert not at.exception
        first = piece_text(attention.query_labels[0])
        rows = [caption.value for caption in at.caption if "A decoder row" in caption.value]
        assert rows and all(f"`{first}` reads" in row for row in rows), (page, query, rows)


@pytest.mark.slow
def test_the_alignment_caption_names_kind_layer_and_head(app):
    at = app()
    alignment = next(
        spec for spec in chart_specs(at) if spec["layout"]["title"]["text"] == "Alignment"
    )
    details = ["model tiny-random", ATTENTION_KINDS["cross"]]
    details += [f"layer {TINY.n_decoder_layers}", "average of the heads"]
    assert plot_text(" · ".join(details)) in alignment["layout"]["title"]["subtitle"]["text"]


@pytest.mark.slow
def test_translate_counts_pieces_as_tokenization_does(app):
    tokenization = app("tokenization", text=TWO_SENTENCES)
    source, output = (metric.value for metric in tokenization.metric if metric.label == "pieces")
    at = app(text=TWO_SENTENCES)
    assert f"{source} source pieces → {output} output pieces" in captions(at), captions(at)


@pytest.mark.slow
def test_text_that_is_not_english_gets_a_notice_and_is_translated_all_the_same(app, translator):
    german = "Ich habe heute keine Zeit."
    at = app("translate", text=german)
    for where in (at.sidebar, at.main):  # under the box, and beside the translation
        notices = [warning.value for warning in where.warning if "English" in warning.value]
        assert len(notices) == 1 and notices[0].startswith("This looks like German, not")
    assert at.code[0].value == translator.translate(german, "de", 4, 0.6).text
    assert "The model reads English" in captions(at)  # said under the box before any text
    for english in ("John lives in Salt Lake City.", "Attention is all you need."):
        assert not app("translate", text=english).warning


@pytest.mark.slow
def test_a_sentence_over_forty_words_is_told_before_the_cut(app):
    sentence = " ".join(["The small dog runs after the red ball in the park"] * 4) + " today."
    at = app("translate", text=sentence)
    notices = [warning.value for warning in at.main.warning if "words well" in warning.value]
    assert notices and notices[0].startswith("The sentence has 45 words (")
    assert "split it into shorter sentences" in notices[0]
