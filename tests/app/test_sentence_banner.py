"""The sentence and its translation sit above every page (a collapsed sidebar hides the box; on
Translate too, or a projector's audience sees no English), and a Translate button commits what
was typed."""

import pytest

pytestmark = pytest.mark.slow  # app runs

SENTENCE = "The dog runs in the park."


@pytest.mark.parametrize("page", ["translate", "attention", "model"])
def test_every_page_shows_the_sentence_and_its_translation(app, translator, page):
    at = app(page, text=SENTENCE, to="fr")
    assert not at.exception
    translation = translator.translate(SENTENCE, "fr", 4, 0.6).text
    shown = [element.value for element in at.text]
    assert shown[:2] == [SENTENCE, translation]
    assert [caption.value for caption in at.caption][:2] == ["English", "French"]


def test_bad_input_leaves_no_banner_and_the_model_page_working(app):
    at = app("model", text="   ")
    assert not at.exception
    assert "English" not in [caption.value for caption in at.caption]


def test_the_translate_button_translates_what_was_typed(app, translator):
    at = app("attention", text=SENTENCE)
    at.text_area(key="text").input("A man is riding a bicycle.")
    at.button[0].click().run()
    assert not at.exception
    assert at.text[1].value == translator.translate("A man is riding a bicycle.", "de", 4, 0.6).text
