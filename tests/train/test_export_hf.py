"""train.shipping.export_hf: a model of ours, loaded back by transformers (MarianMTModel for
post-LN, PegasusForConditionalGeneration for pre-LN, MarianTokenizer), computes our logits and gives
our greedy translations token for token; and the lab reads the exported folder back."""

from __future__ import annotations

import json
import re
import shutil

import pytest
import torch

from core.decoding.search import max_output_length
from core.files.checkpoint import save_model
from core.files.marian import load_marian_model, load_marian_tokenizer
from core.files.model_dir import TRUECASE_FILE
from core.model.transformer import Transformer
from core.text.elision import JOIN_PATTERN
from core.text.truecase import Truecaser
from core.translator import DEFAULT_MODEL, Translator
from support.tiny_corpus import tiny_corpus
from tests.conftest import TINY
from train.shipping.export_hf import export, halves_order, main

transformers = pytest.importorskip("transformers")

SENTENCES = ["The dog runs.", "A small red house is very big today.", "The man reads a book."]


@pytest.fixture(scope="module")
def pre_ln_dir(tiny_model_dir, tmp_path_factory):
    """The tiny model directory with a pre-LN model in its model.pt."""
    directory = tmp_path_factory.mktemp("pre_ln") / "model"
    shutil.copytree(tiny_model_dir, directory)
    torch.manual_seed(1)
    config = type(TINY)(**{**vars(TINY), "norm_first": True})
    save_model(Transformer(config), directory / "model.pt")
    return directory


@pytest.fixture(scope="module", params=["post-LN", "pre-LN"])
def exported(request, tiny_model_dir, pre_ln_dir, tmp_path_factory):
    """(our translator, the exported folder) for a post-LN and a pre-LN model."""
    model_dir = tiny_model_dir if request.param == "post-LN" else pre_ln_dir
    out = export(model_dir, tmp_path_factory.mktemp("hf") / "exported")
    transformers.logging.set_verbosity_error()
    return Translator.load(model_dir, fast=False), out


def hf_greedy(model, tokenizer, text: str, target: str, budget: int) -> list[int]:
    batch = tokenizer([f">>{target}<< {text}"], return_tensors="pt")
    output = model.generate(**batch, num_beams=1, do_sample=False, max_new_tokens=budget)
    return output[0, 1:].tolist()  # without the decoder's first input


def test_the_architecture_is_the_one_that_expresses_ours(exported):
    translator, out = exported
    config = json.loads((out / "config.json").read_text())
    pre_ln = translator.model.config.norm_first
    assert config["model_type"] == ("pegasus" if pre_ln else "marian")
    assert config["activation_function"] == "relu" and config["scale_embedding"] is True
    assert config["decoder_start_token_id"] == 2 and config["eos_token_id"] == 3
    tokenizer_config = json.loads((out / "tokenizer_config.json").read_text())
    assert tokenizer_config["tokenizer_class"] == "MarianTokenizer"
    vocab = json.loads((out / "vocab.json").read_text())
    assert vocab[">>de<<"] == translator.tokenizer.tag_ids["de"] and "<2de>" not in vocab
    assert ">>de<<" in (out / "README.md").read_text()


def test_transformers_computes_our_logits_and_greedy_output(exported):
    translator, out = exported
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(out).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    for text in SENTENCES + tiny_corpus(6, seed=4):
        for target in ("de", "fr"):
            ours = translator.translate(text, target, beam_size=1)
            batch = tokenizer([f">>{target}<< {text}"], return_tensors="pt")
            assert batch["input_ids"][0].tolist() == ours.source_ids
            with torch.no_grad():
                theirs = model(**batch, decoder_input_ids=torch.tensor([ours.decoder_input_ids]))
                logits, _ = translator.model(
                    torch.tensor([ours.source_ids]), torch.tensor([ours.decoder_input_ids])
                )
            assert torch.allclose(theirs.logits, logits, atol=1e-5)
            budget = max_output_length(len(ours.source_ids), translator.model.config.max_len)
            output = hf_greedy(model, tokenizer, text, target, budget)
            assert output == ours.output_ids
            # MarianTokenizer strips the text's ends (a random model writes trailing spaces)
            assert read_as_the_readme_says(tokenizer, output, target) == ours.text.strip()


def read_as_the_readme_says(tokenizer, output: list[int], target: str) -> str:
    """MarianTokenizer's text of ``output``, French elisions joined by the README's re.sub."""
    text = tokenizer.decode(output, skip_special_tokens=True)
    return re.sub(JOIN_PATTERN, r"\1", text) if target == "fr" else text


def test_the_readme_joins_french_elisions_as_the_lab_does(exported):
    _, out = exported
    readme = (out / "README.md").read_text()
    code = re.search(r"`(re\.sub\(.+\))`", readme)[1]
    split = "L' animal qu' il voit, l’ eau, rock 'n' roll"
    assert eval(code, {"re": re, "text": split}) == "L'animal qu'il voit, l’eau, rock 'n' roll"


def test_the_lab_reads_the_exported_folder_back(exported):
    """core/files/marian.py reads the export (Marian or Pegasus) into the same logits as the
    original; its sinusoids lie sines first, its dimensions permuted to match."""
    translator, out = exported
    back = load_marian_model(out)
    tokenizer = load_marian_tokenizer(out, back.config.vocab_size)
    assert back.config.positional_layout == "halves"
    assert back.config.norm_first == translator.model.config.norm_first
    order = halves_order(TINY.d_model)
    assert torch.equal(back.pe, translator.model.pe[:, order])
    for text in SENTENCES:
        source = torch.tensor([translator.tokenizer.encode_source(text, "fr")])
        assert source[0].tolist() == tokenizer.encode_source(text, "fr")
        target = torch.tensor([[2, 17, 40, 301, 5]])
        with torch.no_grad():
            ours, theirs = translator.model(source, target)[0], back(source, target)[0]
        assert torch.allclose(theirs, ours, atol=1e-5)


def test_a_truecasing_model_ships_its_truecaser_and_says_how_to_use_it(tiny_model_dir, tmp_path):
    model_dir = tmp_path / "truecasing"
    shutil.copytree(tiny_model_dir, model_dir)
    Truecaser.learn(["I see the dog."], model_dir / TRUECASE_FILE)
    out = export(model_dir, tmp_path / "exported")
    assert (out / TRUECASE_FILE).read_bytes() == (model_dir / TRUECASE_FILE).read_bytes()
    assert "## Truecased English" in (out / "README.md").read_text()
    plain = export(tiny_model_dir, tmp_path / "plain")
    assert "Truecased" not in (plain / "README.md").read_text()


def test_command_line(tiny_model_dir, tmp_path, capsys):
    assert main(["--model", str(tiny_model_dir), "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "out")
    assert (tmp_path / "out" / "model.safetensors").is_file()
    assert main(["--model", str(tmp_path / "nothing"), "--out", str(tmp_path / "x")]) == 2
    assert "no such model directory" in capsys.readouterr().err


@pytest.mark.slow
def test_the_shipped_model_round_trips_on_the_cards_examples(tmp_path):
    """The shipped model (pre-LN) exported and loaded back by transformers: our greedy
    translation of every example of its card, token for token."""
    translator = Translator.load(DEFAULT_MODEL)
    out = export(DEFAULT_MODEL, tmp_path / "en-de-fr")
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(out).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    examples = translator.card["examples"]
    assert len(examples) >= 8
    for example in examples:
        ours = translator.translate(example["source"], example["target"], beam_size=1)
        budget = max_output_length(len(ours.source_ids), translator.model.config.max_len)
        source = translator.tokenizer.truecase(example["source"])  # as truecase.en says to
        output = hf_greedy(model, tokenizer, source, example["target"], budget)
        assert output == ours.output_ids, example["source"]
        assert read_as_the_readme_says(tokenizer, output, example["target"]) == ours.text


def test_exporting_into_the_model_directory_read_is_refused(tiny_model_dir, capsys):
    from train.shipping.export_hf import main

    before = {p.name: p.read_bytes() for p in tiny_model_dir.iterdir() if p.is_file()}
    assert main(["--model", str(tiny_model_dir), "--out", str(tiny_model_dir)]) == 2
    assert "that is the model directory read (--model)" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in tiny_model_dir.iterdir() if p.is_file()} == before
