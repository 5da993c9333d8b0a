"""A text is translated sentence by sentence: cut by sentencex without losing a character, each
sentence translated on its own, the text's spaces and line breaks kept between them."""

import pytest

from core.text.sentences import is_sentence, split_sentences, translate_text

TEXTS = [
    "",
    "   ",
    "One sentence without a full stop",
    "Dr. Smith paid $3.50 at 5 p.m. on Jan. 3. She left! Did he? Yes.",
    "  First paragraph, one sentence.\n\nSecond paragraph. Two sentences here.  \n",
    "A zero-width space\u200b. And a tab\tinside.",
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_parts_join_back_into_the_text(text):
    parts = split_sentences(text)
    assert "".join(parts) == text
    for part in parts:  # a sentence has no space around it; the rest is only space
        assert part.strip() == part if is_sentence(part) else not part.strip()


def test_abbreviations_and_numbers_do_not_end_a_sentence():
    sentences = [part for part in split_sentences(TEXTS[3]) if is_sentence(part)]
    first = "Dr. Smith paid $3.50 at 5 p.m. on Jan. 3."
    assert sentences == [first, "She left!", "Did he?", "Yes."]


def test_each_sentence_is_translated_on_its_own_and_the_layout_kept(translator):
    text = TEXTS[4]
    pairs = translate_text(text, lambda sentence: translator.translate(sentence, "fr", 2).text)
    assert [part for part, _ in pairs] == split_sentences(text)
    for part, translation in pairs:
        if is_sentence(part):
            assert translation == translator.translate(part, "fr", 2).text
        else:
            assert translation == part
    assert "\n\n" in "".join(translation for _, translation in pairs)


def test_a_part_of_only_invisible_characters_is_not_sent_to_the_model():
    calls = []
    pairs = translate_text("\u200b\n", lambda sentence: calls.append(sentence) or "x")
    assert calls == [] and pairs == [("\u200b", "\u200b"), ("\n", "\n")]
