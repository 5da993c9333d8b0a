"""Text: normalisation and the SentencePiece vocabulary (tokenizer.py, and a MarianMT model's in
marian_tokenizer.py), pieces grouped into words (words.py), a text cut into sentences
(sentences.py), and what the model reads well (readable.py)."""
